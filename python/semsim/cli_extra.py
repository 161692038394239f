"""CLI commands for speed, reproduction and profiles:

  semsim run ... --profile [--folded FILE]   perf-report-like profile per point
  semsim reproduce [-o DIR] [--duration-ms MS] [--seeds K] [--only NAME,...] [-j N]
  semsim bench [--repeats K] [-o OUT.json]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from . import lockstat


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("reproduce", help="reproduce the seeds' published comparisons; Markdown report + plots")
    p.add_argument("-o", "--output", default="report", metavar="DIR", help="report directory (default: report)")
    p.add_argument("--duration-ms", type=float, default=20.0, help="simulated window per point (default 20)")
    p.add_argument("--seeds", type=int, default=3, help="seeds per point, median reported (default 3)")
    p.add_argument("--only", default=None, help="comma-separated targets: xeon24, laptop4, aim9, swingbench, seed002")
    p.add_argument("-j", "--workers", type=int, default=None, help="worker processes (default: CPU count)")
    p = sub.add_parser("bench", help="simulator speed: semops per wall-second against the SimGrid floor")
    p.add_argument("--repeats", type=int, default=3, help="repeats per figure, median reported (default 3)")
    p.add_argument("-o", "--output", default=None, metavar="OUT.json", help="also write the figures as JSON")


def add_profile_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--profile", action="store_true",
                   help="print the simulated CPU time by kernel function, as perf report would")
    p.add_argument("--folded", default=None, metavar="FILE",
                   help="with --profile: write folded stacks for flamegraph tools (default: semsim.folded)")


def print_profile(doc: dict[str, Any], folded_path: str | None, out: TextIO = sys.stdout) -> None:
    """perf-report-like table per point, and one folded-stacks file for all points."""
    lines = []
    for point in doc["points"]:
        out.write(f"# threads {point['threads']}, kernel {point['kernel']}, machine {point['machine']}: "
                  f"{point['ops_per_s']:,.0f} ops/s\n")
        out.write(f"# {'Overhead':>9}  Symbol\n")
        for entry in point.get("profile", []):
            mark = "[.]" if entry["function"].startswith("[user]") else "[k]"
            out.write(f"  {100 * entry['share']:8.2f}%  {mark} {entry['function']}\n")
            samples = int(round(entry.get("cpu_ns", 0)))
            if samples > 0 and "stack" in entry:
                root = f"semsim;threads={point['threads']};{point['kernel']}"
                lines.append(f"{root};{entry['stack']} {samples}")
        out.write("\n" + lockstat.point_table(point) + "\n")
    path = Path(folded_path or "semsim.folded")
    path.write_text("\n".join(lines) + "\n")
    out.write(f"folded stacks (CPU ns) written to {path}\n")


def cmd_reproduce(args: argparse.Namespace) -> int:
    from . import reproduce

    if args.duration_ms <= 0 or args.seeds < 1:
        raise ValueError("reproduce: --duration-ms must be > 0 and --seeds >= 1")
    only = [x.strip() for x in args.only.split(",")] if args.only else None
    known = [t.name for t in reproduce.TARGETS]
    for name in only or []:
        if name not in known:
            raise ValueError(f"reproduce: --only: unknown target {name!r}; allowed: {', '.join(known)}")
    from .cli import _Progress, _with_progress  # (cli imports this module: no cycle at import)

    return _with_progress(_Progress("reproducing the seeds' comparisons"), reproduce.main, args.output,
                          args.duration_ms, args.seeds, only, args.workers)


def cmd_bench(args: argparse.Namespace) -> int:
    from . import bench

    if args.repeats < 1:
        raise ValueError("bench: --repeats must be >= 1")
    report = bench.run(repeats=args.repeats)
    if args.output:
        Path(args.output).write_text(json.dumps(report, indent=2) + "\n")
    return 0
