"""CLI views: ``semsim diff``, ``semsim run --trace`` and ``semsim run --profile``.

  semsim diff A.json B.json [-o DIR]
  semsim diff SCENARIO.json --kernel A --kernel B [--repeats K] [--set ...] [-o DIR]
  semsim run SCENARIO.json --trace FILE.perfetto-trace [--trace-window A..B] [--trace-limit N]
  semsim run SCENARIO.json --profile [--folded FILE]   perf-report-like profile per point

Kept apart from cli.py so that the command line's core and these views merge independently.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from . import lockstat


def add_diff_parser(sub: Any, add_set: Any) -> None:
    p = sub.add_parser(
        "diff",
        help="B against A: verdict, per-function and per-lock deltas, differential folded stacks",
        description="Compares two results (semsim run output), or one scenario under two kernels "
                    "(--kernel A --kernel B; ids or what-if objects such as "
                    "'{\"base\":\"complex_mode\",\"fence\":\"none\"}'), simulated over several seeds. "
                    "Prints the table; with -o DIR also writes DIR/diff.txt, DIR/diff.json, "
                    "DIR/diff.difffolded (stack count_a count_b, for flamegraph.pl) and DIR/diff.png.",
    )
    p.add_argument("inputs", nargs="+", metavar="FILE",
                   help="A.json B.json (two results), or SCENARIO.json with --kernel A --kernel B")
    p.add_argument("--kernel", action="append", metavar="KERNEL",
                   help="with one SCENARIO: a kernel id or JSON object; give it twice (A, then B)")
    p.add_argument("--repeats", metavar="K", help="with --kernel: seeds per side (default: the scenario's, at least 3)")
    add_set(p)
    p.add_argument("-o", "--output", metavar="DIR", default=None,
                   help="also write the table, JSON, difffolded and plot here")


def _kernel_value(text: str) -> Any:
    if text.lstrip().startswith("{"):
        try:
            return json.loads(text)
        except ValueError as exc:
            raise ValueError(f"diff: --kernel {text!r}: malformed JSON ({exc})") from None
    return text


def cmd_diff(args: argparse.Namespace) -> int:
    from . import api, plots
    from .diff import diff

    if args.output is not None:
        api.check_output_dir(args.output, "diff: -o")  # before any simulation
    if args.kernel is not None:
        if len(args.kernel) != 2 or len(args.inputs) != 1:
            raise ValueError("diff: with --kernel, give one SCENARIO.json and --kernel twice (A, then B)")
        repeats = None
        if args.repeats is not None:
            try:
                repeats = int(args.repeats)
            except ValueError:
                repeats = 0
            if repeats < 1:
                raise ValueError(f"diff: --repeats {args.repeats!r}: expected an integer >= 1")
        scenario = api.load_scenario(args.inputs[0], sets=args.sets)
        d = diff(scenario, kernel=[_kernel_value(k) for k in args.kernel], repeats=repeats)
    else:
        if len(args.inputs) != 2:
            raise ValueError("diff: give two result files (A.json B.json), or one SCENARIO.json with "
                             "--kernel A --kernel B")
        if args.sets or args.repeats is not None:
            raise ValueError("diff: --set and --repeats apply only to a SCENARIO with --kernel")
        d = diff(args.inputs[0], args.inputs[1])
    sys.stdout.write(d.table())
    if args.output:
        paths = d.write(args.output)
        fig = plots.plot_diff(d)
        png = paths["table"].with_name("diff.png")
        fig.savefig(png, dpi=110)
        sys.stdout.write(f"wrote {paths['table']}, {paths['json']}, {paths['difffolded']}, {png}\n")
    return 0


# ---------------------------------------------------------------------------- run --trace


def add_trace_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--trace", metavar="FILE.perfetto-trace", default=None,
                   help="also write a Perfetto trace of one point (the scenario's single thread count, its "
                        "first seed): CPUs, locks, wake-up and hand-off flows, run-queue lengths")
    p.add_argument("--trace-window", metavar="A..B", default=None,
                   help="with --trace: simulated milliseconds to record, 0 <= A < B <= 3600000 (default: the "
                        "first 1 ms of the measurement window)")
    p.add_argument("--trace-limit", metavar="N", default=None,
                   help="with --trace: the most trace events to record, 1 to 100,000,000 (default 1,000,000); "
                        "past it the command fails")


def run_trace(args: argparse.Namespace) -> None:
    """Writes the --trace file and says what it holds (one line on stderr); nothing without --trace."""
    if getattr(args, "trace", None) is None:
        if args.trace_window is not None or args.trace_limit is not None:
            raise ValueError("run: --trace-window and --trace-limit need --trace FILE")
        return
    from . import api, trace

    api.check_output_file(args.trace, "run: --trace")
    window = trace.parse_window(args.trace_window) if args.trace_window is not None else None
    limit = None
    if args.trace_limit is not None:
        try:
            limit = int(str(args.trace_limit).replace(",", "").replace("_", ""))
        except ValueError:
            limit = 0
        if not 1 <= limit <= trace.MAX_LIMIT:
            shown = args.trace_limit if len(args.trace_limit) <= 40 else args.trace_limit[:40] + "..."
            raise ValueError(f"run: --trace-limit {shown!r}: expected an integer from 1 to {trace.MAX_LIMIT:,} "
                             f"(trace events; default {trace.DEFAULT_LIMIT:,})")
    info = trace.write_trace(args.scenario, args.trace, window_ms=window, limit=limit, sets=args.sets)
    sys.stderr.write(f"trace: {info.summary()}\n")
    if window is not None and not info.counts.get("cpu_slices"):
        scenario = api.load_scenario(args.scenario, sets=args.sets)
        end = float(scenario.get("warmup_ms", 0)) + float(scenario.get("duration_ms", 0))
        where = f"; it starts after the run's end, {end:g} ms (warmup_ms + duration_ms)" if window[0] >= end else ""
        sys.stderr.write(f"trace: note: the window {window[0]:g}..{window[1]:g} ms holds no CPU slices{where}\n")


# ---------------------------------------------------------------------------- run --profile


def add_profile_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--profile", action="store_true",
                   help="print the simulated CPU time by kernel function, as perf report would")
    p.add_argument("--folded", default=None, metavar="FILE",
                   help="with --profile: write folded stacks for flamegraph tools (default: semsim.folded)")


def print_profile(doc: dict[str, Any], folded_path: str | None, out: TextIO | None = None) -> None:
    """perf-report-like table per point, and one folded-stacks file for all points."""
    out = out if out is not None else sys.stdout
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
    from .api import write_file

    path = Path("semsim.folded" if folded_path is None else folded_path)
    write_file(path, "\n".join(lines) + "\n", "--folded")
    out.write(f"folded stacks (CPU ns) written to {path}\n")
