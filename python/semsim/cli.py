"""The ``semsim`` command.

  semsim run SCENARIO.json [--set KEY=VALUE ...] [-o OUT.json] [--uncertainty [--corners]]
  semsim native [SCENARIO.json] [--set ...] [-o OUT.json] [--cleanup]
  semsim compare SCENARIO.json... [--machine NAME] [--set ...] [-o DIR]
  semsim demo [--set ...] [-o DIR]
  semsim sweep SCENARIO.json [--threads LIST] [--kernel LIST] [--machine LIST]
               [--semaphores LIST] [--repeats K] [--executor process|dask|ADDRESS]
               [-j N] [--set ...] [-o OUT.json|OUT.csv]
  semsim calibrate [-o MODEL.json] [--quick]
  semsim reproduce [-o DIR] [--duration-ms MS] [--seeds K] [--only NAME,...] [-j N] [--uncertainty]
  semsim bench [--repeats K] [-o OUT.json]
  semsim run ... --profile [--folded FILE]
  semsim run ... --trace FILE.perfetto-trace [--trace-window A..B] [--trace-limit N]
  semsim diff A.json B.json [-o DIR]
  semsim diff SCENARIO.json --kernel A --kernel B [--repeats K] [--set ...] [-o DIR]
  semsim list
  semsim validate SCENARIO.json [--set ...]
  semsim machine import MATRIX --format mctop|nviennot [--ghz F] [--name NAME] [-o OUT.json] [...]
  semsim --version

Bad input of any kind prints one line, ``semsim: error: <message>``, to stderr
and exits with status 2; a native run or calibration that the host stopped (a task
killed from outside, kernel limits used up by other programs) prints ``semsim: host
error: <message>`` and exits with 3; an internal failure prints ``semsim: internal
error: <message>`` and exits with 1. Ctrl-C ends the process as SIGINT does (status 130
in a shell), after the native runner has removed its semaphore array. Never a
traceback (set SEMSIM_DEBUG=1 to get one).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn, TextIO

from . import api, cli_views
from ._data import default_scenario_path
from .compare import (
    HOST_BUSY_SHARE,
    HOST_DRIFT_LIMIT,
    UNSTABLE_SPREAD,
    Comparison,
    ComparisonSet,
    compare,
    warn_if_busy,
)
from .progress import Status

EXIT_USAGE = 2
EXIT_INTERNAL = 1
EXIT_HOST = 3
EXIT_INTERRUPTED = 130
#: A scenario's longest run, warm-up included (sim/config/scenario.cpp).
ONE_HOUR_MS = 3.6e6


class UsageError(Exception):
    """A bad command line (unknown flag, missing argument, bad --set)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        command = self.prog.split(" ", 1)[1] if " " in self.prog else ""
        if message.endswith(": expected one argument"):
            # argparse takes a value that starts with '-' (-1..1) for another flag.
            flag = message[len("argument "):].split(":", 1)[0].split("/")[-1]
            message += f" (a value starting with '-' must be attached: {flag}=VALUE)"
        raise UsageError(f"{command}: {message}" if command else message)


def _shown(text: object) -> str:
    """A name from the user's input as one printable line: every control character
    (a newline too) escaped, as the C++ side writes them."""
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in str(text))


def _one_line(message: object) -> str:
    # A message's line breaks become spaces; any other control character is escaped
    # (_shown): one line, and nothing that a terminal would act on.
    return _shown(" ".join(str(message).split("\n")).strip()) or "unknown error"


def _check_sets(sets: Sequence[str]) -> list[str]:
    for item in sets:
        key = item.split("=", 1)[0].strip() if "=" in item else ""
        try:
            item.encode("utf-8")
        except UnicodeEncodeError:  # bytes that are not UTF-8 arrive as surrogate escapes
            shown = key.encode("utf-8", "replace").decode("utf-8") or "?"
            raise UsageError(f"--set {shown}: the value is not valid UTF-8") from None
        if not key or any(not part for part in key.split(".")):
            raise UsageError(
                f"--set {item!r}: expected KEY=VALUE with KEY a dotted field path "
                "(e.g. --set threads=[1,2,4] or --set workload.semaphores=64)"
            )
    return list(sets)


def _add_set(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
        help="override a scenario field by dotted path; VALUE is JSON, else a string "
             "(--set threads=[1,2,4] --set kernel=global_lock --set workload.semaphores=64)",
    )


def _scenario_fields_help() -> str:
    """The scenario fields, from the package's schema (scenarios/scenario.schema.json)."""
    from ._data import data_dir

    lines = ["scenario fields (override any with --set FIELD=VALUE; `semsim list` names the machines, "
             "kernels and workloads):"]
    try:
        base = data_dir()
        schema = json.loads((base / "scenarios" / "scenario.schema.json").read_text(encoding="utf-8"))
        for name, spec in schema.get("properties", {}).items():
            text = " ".join(str(spec.get("description", "")).split())
            lines.append(f"  {name}: {text}")
    except (OSError, ValueError, TypeError, AttributeError):
        lines.append("  name, description, machine, kernel, workload, threads, duration_ms, warmup_ms, seed, "
                     "repeats (see README.md, Scenario format)")
    lines.append("exit status: 0 ok, 2 bad input (one line naming the field), 3 the host stopped a native "
                 "run, 1 internal error; Ctrl-C ends as SIGINT (130)")
    return "\n".join(lines)


def _add_jobs(p: argparse.ArgumentParser) -> None:
    p.add_argument("-j", "--jobs", metavar="N", default=None,
                   help="simulated runs (thread counts x seeds) at once, in forked worker processes "
                        "(default: CPU count; 1: one after the other in this process); the same bytes")


def _at_least_one(text: str | None, flag: str, meaning: str = "", maximum: int | None = None) -> int | None:
    """An optional count flag: None (not given) or an integer >= 1 (and at most
    ``maximum``), else a one-line error."""
    if text is None:
        return None
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1 or (maximum is not None and value > maximum):
        allowed = f"an integer from 1 to {maximum}" if maximum is not None else "an integer >= 1"
        shown = text if len(text) <= 40 else text[:40] + "..."
        raise UsageError(f"{flag} {shown!r}: expected {allowed}{meaning}")
    return value


def _jobs(text: str | None, flag: str) -> int | None:
    """A --jobs value: None (the default, CPU count) or an integer from 1 to api.MAX_JOBS."""
    return _at_least_one(text, flag, " (runs at once)", api.MAX_JOBS)


def _nonempty(value: str | None, flag: str, allowed: str) -> str | None:
    """A flag's text value: None (not given) or not blank; '' never means the default."""
    if value is not None and not value.strip():
        raise UsageError(f"{flag}: empty value; expected {allowed}")
    return value


def _output_file(value: str | None, flag: str) -> str | None:
    """An output file flag, checked before the work that fills it (None: not given)."""
    if value is not None:
        api.check_output_file(value, flag)
    return value


def _output_dir(value: str | None, flag: str) -> str | None:
    """An output directory flag, checked before the work that fills it."""
    if value is not None:
        api.check_output_dir(value, flag)
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="semsim",
        description="Simulate Linux SysV semaphore locking across kernel generations, "
                    "and measure the same workloads on this host.",
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    fields_help = _scenario_fields_help()

    p = sub.add_parser("run", help="simulate a scenario; JSON result to OUT or stdout, a table to stderr",
                       epilog=fields_help,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("scenario", metavar="SCENARIO.json")
    _add_set(p)
    p.add_argument("-o", "--output", metavar="OUT.json", help="write the JSON result here instead of stdout")
    cli_views.add_profile_flags(p)
    cli_views.add_trace_flags(p)
    _add_jobs(p)
    p.add_argument("--reference-order", action="store_true",
                   help="no shortcut in the time core: every turn through the calendar "
                        "(slower; the same bytes, which the tests check)")
    p.add_argument("--uncertainty", action="store_true",
                   help="also simulate the machine's ranged assumptions and topology alternatives, one at "
                        "a time; adds an `uncertainty` section to the result and a table to stderr")
    p.add_argument("--corners", action="store_true",
                   help="with --uncertainty: also every range at its low end, and every one at its high end")

    p = sub.add_parser("native", help="measure a scenario's workload on real SysV semaphores on this host",
                       epilog=fields_help,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("scenario", metavar="SCENARIO.json", nargs="?")
    _add_set(p)
    p.add_argument("-o", "--output", metavar="OUT.json", help="write the JSON result here instead of stdout")
    p.add_argument("--cleanup", action="store_true",
                   help="first remove semaphore arrays left by killed runners, and say how many")

    p = sub.add_parser("compare", help="simulate and measure scenarios; table, DIR/compare.json, DIR/<name>.png",
                       epilog=fields_help,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("scenario", metavar="SCENARIO.json", nargs="+")
    p.add_argument("--machine", default=None, metavar="NAME",
                   help="the model to predict with (e.g. host: the calibrated model), for every scenario")
    _add_set(p)
    _add_jobs(p)
    p.add_argument("-o", "--output", metavar="DIR", default="out", help="output directory (default: out)")

    p = sub.add_parser("demo", help="compare on the embedded default scenario (the main job)")
    _add_set(p)
    _add_jobs(p)
    p.add_argument("-o", "--output", metavar="DIR", default="out", help="output directory (default: out)")

    p = sub.add_parser(
        "sweep",
        help="simulate the product of threads x kernels x machines x semaphores, each point in a fresh process",
        description="Simulates every combination of the given values, each point in a fresh process, "
                    "on all CPUs (or a Dask cluster). LIST is comma-separated; integers also take "
                    "ranges A..B, A..B:STEP (arithmetic) and A..B*F (geometric): --threads 10..100:10, "
                    "--threads 1..256*2. An axis left out keeps the scenario's value.",
    )
    p.add_argument("scenario", metavar="SCENARIO.json")
    p.add_argument("--threads", metavar="LIST", help="thread counts (1,2,4 or 10..100:10 or 1..64*2)")
    p.add_argument("--kernel", metavar="LIST", action="append",
                   help="kernel generation ids (global_lock,hysteresis); repeat the flag for a JSON "
                        "object such as {\"base\":\"hysteresis\",\"spinlock\":\"ticket\"}")
    p.add_argument("--machine", metavar="LIST", action="append", help="machine presets or model files")
    p.add_argument("--semaphores", metavar="LIST",
                   help="semaphores per array (8,64 or ranges); 'threads' means as many as threads")
    p.add_argument("--repeats", metavar="K", help="seeds per point (the scenario's repeats)")
    p.add_argument("--executor", metavar="EXECUTOR", default="process",
                   help="'process' (default: a local pool of fresh processes), 'dask' (a local Dask "
                        "cluster) or a Dask scheduler address (tcp://host:8786)")
    p.add_argument("-j", "--workers", metavar="N", help="worker processes (default: one per CPU)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    _add_set(p)
    p.add_argument("-o", "--output", metavar="OUT",
                   help="write the result here (.csv: the table of points; else JSON) instead of JSON on stdout")

    p = sub.add_parser("calibrate", help="measure this host's costs with probes; write a machine model")
    p.add_argument("-o", "--output", metavar="MODEL.json", default=None,
                   help="where to write the model (default: $XDG_DATA_HOME/semsim/host.json, i.e. "
                        "~/.local/share/semsim/host.json: the model machine 'host' means)")
    p.add_argument("--quick", action="store_true", help="shorter probes (less precise)")

    p = sub.add_parser("reproduce", help="reproduce the seeds' published comparisons; Markdown report + plots")
    p.add_argument("-o", "--output", default="report", metavar="DIR", help="report directory (default: report)")
    p.add_argument("--duration-ms", type=float, default=20.0, help="simulated window per point (default 20)")
    p.add_argument("--seeds", type=int, default=3, help="seeds per point, their mean reported (default 3)")
    p.add_argument("--only", default=None,
                   help="comma-separated targets: xeon24, laptop4, aim9, swingbench, seed002, locks, "
                        "locktorture")
    p.add_argument("-j", "--workers", "--jobs", metavar="N", default=None,
                   help="runs at once, in forked worker processes (default: CPU count)")
    p.add_argument("--uncertainty", action="store_true",
                   help="also give each check's predicted range over the machines' ranged assumptions and "
                        "topology alternatives, and whether the published value lies in it")
    p = sub.add_parser("bench", help="simulator speed: semops per wall-second against the SimGrid floor")
    p.add_argument("--repeats", type=int, default=3, help="repeats per figure, median reported (default 3)")
    p.add_argument("-o", "--output", default=None, metavar="OUT.json", help="also write the figures as JSON")
    _add_machine_parser(sub)
    cli_views.add_diff_parser(sub, _add_set)
    p = sub.add_parser("list", help="list machines, kernel generations and workloads")
    p.add_argument("--policies", action="store_true",
                   help="instead: the kernel policies of every generation, a row per policy "
                        "(the keys of a scenario's {\"base\": id, <policy>: value} kernel)")

    p = sub.add_parser("validate", help="check a scenario; prints 'ok: <name>' or the error", epilog=fields_help,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("scenario", metavar="SCENARIO.json")
    _add_set(p)
    return parser


# ---------------------------------------------------------------------------- output


def _fmt_kernel(kernel: Any) -> str:
    if isinstance(kernel, str):
        return kernel
    if isinstance(kernel, dict) and set(kernel) == {"base"}:
        return str(kernel["base"])
    return json.dumps(kernel, separators=(",", ":"))


def _table(rows: list[list[str]], out: TextIO, numeric: Sequence[int]) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        cells = [c.rjust(w) if i in numeric else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))]
        out.write("  ".join(cells).rstrip() + "\n")


def _points_table(result: api.Result, out: TextIO) -> None:
    rows = [["threads", "kernel", "machine", "ops/s"]]
    measured = result.side == "measured"
    if measured:
        rows[0].append("min..max")
    else:
        rows[0] += ["ci95", "simulated"]
    for p in result.points:
        row = [str(p.get("threads")), _fmt_kernel(p.get("kernel")), str(p.get("machine")),
               f"{p.get('ops_per_s', 0):,.0f}"]
        if measured:
            row.append(f"{p.get('ops_per_s_min', 0):,.0f}..{p.get('ops_per_s_max', 0):,.0f}")
        else:
            row += _run_length_cells(p.get("run_length"))
        rows.append(row)
    _table(rows, out, numeric=(0, 3, 4, 5))
    if not measured:
        for p in result.points:
            note = api.precision_note(p)
            if note:
                out.write(f"{p.get('threads')} threads: precision not reached: {note}\n")


def _run_length_cells(rl: Any) -> list[str]:
    """A simulated point's interval (relative half-width, pooled over its runs) and the
    simulated time it used (in total, over its runs)."""
    if not isinstance(rl, dict):
        return ["-", "to completion"]
    width = "-" if rl.get("half_width_rel") is None else f"+-{100 * rl['half_width_rel']:.2f}%"
    state = "" if not rl.get("precision") else (" reached" if rl.get("reached") else " not reached")
    runs = int(rl.get("pooled_runs", 1))
    if not rl.get("applicable"):  # a run to completion: the interval of its seeds, if any
        ms = f"{rl['simulated_ms']:.2f} ms " if rl.get("simulated_ms") is not None else ""
        if rl.get("seed_free"):
            return [width, f"{ms}to completion, seed-free (exact)"]
        of = f" of {runs + int(rl['runs_not_needed'])}" if rl.get("runs_not_needed") else ""
        return [width, f"{ms}to completion, {runs}{of} runs{state}" if runs > 1 else f"{ms}to completion"]
    if rl.get("counter") == "rounds":
        width += " (rounds)"
    over = f" in {runs} runs" if runs > 1 else ""
    if rl.get("rounds") == 2:  # the seeds disagreed and ran again, each to half the interval
        over += " (2 rounds)"
    return [width, f"{rl.get('simulated_ms', 0):.2f} ms{over}{state}"]


def _write_result(result: api.Result, output: str | None) -> None:
    text = result.to_json()
    if not text.endswith("\n"):
        text += "\n"
    if output is not None:
        api.write_file(output, text, "-o")
    else:
        sys.stdout.write(text)
        sys.stdout.flush()


# ---------------------------------------------------------------------------- commands


#: Status lines and the live progress line of every command (stderr).
STATUS = Status()


def _cmd_run(args: argparse.Namespace) -> int:
    if args.folded and not args.profile:
        raise UsageError("run: --folded needs --profile")
    if args.corners and not args.uncertainty:
        raise UsageError("run: --corners needs --uncertainty")
    _output_file(args.output, "run: -o")
    _output_file(args.folded, "run: --folded")
    jobs = _jobs(args.jobs, "run: --jobs")
    cli_views.run_trace(args)  # first: a bad --trace fails before the run prints anything
    if args.reference_order:
        api.set_reference_order(True)
    result = STATUS.run(f"simulating {_shown(Path(str(args.scenario)).name)}", api.simulate, args.scenario,
                        sets=args.sets, jobs=jobs, detail=True)
    if args.uncertainty:
        result = _run_uncertainty(result, "corners" if args.corners else "each")
    if args.profile:
        # The profile takes stdout; the JSON result goes only where -o says.
        cli_views.print_profile(result.doc, args.folded)
        if args.output is not None:
            _write_result(result, args.output)
    else:
        _write_result(result, args.output)
    _points_table(result, sys.stderr)
    if args.uncertainty:
        from . import uncertainty

        uncertainty.table(result.doc["uncertainty"], sys.stderr)
    _say_model(result)
    return 0


def _run_uncertainty(result: api.Result, mode: str) -> api.Result:
    """``result`` with the prediction over its machine's ranges (semsim.uncertainty)."""
    from . import uncertainty

    def variants(progress: Any = None) -> api.Result:
        done = (lambda n, total: progress(f"{n}/{total} variant runs done")) if progress else False
        return uncertainty.with_uncertainty(result, mode, progress=done)

    return STATUS.run("simulating the machine's variants", variants, detail=True)


def _say_model(result: api.Result) -> None:
    """Names the model file and hash a simulated result used (stderr)."""
    machine = result.scenario.get("machine")
    try:
        info = api.machine_info(str(machine))
    except api.InputError:
        return
    sys.stderr.write(f"model {machine!r}: {info.get('file') or 'built in'} ({info.get('hash')})\n")


def _cmd_native(args: argparse.Namespace) -> int:
    _output_file(args.output, "native: -o")
    if args.cleanup:
        removed = api.cleanup_native()
        stream = sys.stderr if args.scenario else sys.stdout
        stream.write(f"removed {removed} leftover semaphore array{'s' if removed != 1 else ''}\n")
    if not args.scenario:
        if args.cleanup:
            return 0
        raise UsageError("native: the following arguments are required: SCENARIO.json (or --cleanup)")
    scenario = api.load_native_scenario(args.scenario, sets=args.sets)  # bad input: one line, first
    warn_if_busy(STATUS, "measuring")
    result = STATUS.run(f"measuring {_shown(Path(str(args.scenario)).name)} on this host", api.measure, scenario)
    _write_result(result, args.output)
    _points_table(result, sys.stderr)
    return 0


def _compare(source: str, sets: list[str], out_dir: str, jobs: int | None = None) -> Comparison:
    """One scenario compared (semsim.compare), printed and written into out_dir."""
    comparison = compare(source, sets=sets, progress=STATUS, jobs=jobs)
    assert isinstance(comparison, Comparison)
    scenario = comparison.scenario
    host = comparison.measured.doc.get("host", {})
    print(f"{_shown(comparison.name)}: {scenario.get('workload', {}).get('type')} predicted on model "
          f"{scenario.get('machine')!r} vs measured on this host ({host.get('cpus', '?')} CPUs, "
          f"Linux {host.get('kernel_release', '?')})")
    print(comparison.table())
    unknown_load = sum(1 for r in comparison.rows if r.get("foreign_cpu_share") is None)
    if unknown_load:
        print(f"host load unknown for {unknown_load} of {len(comparison.rows)} point(s) (window under 100 ms "
              "per CPU, or a workload that runs to completion): '-' in 'host busy' is unknown, not quiet")
    host_check = comparison.host_check
    if host_check is not None:
        def figures(check: dict) -> str:
            def one(key: str, v: dict) -> str:
                lo, hi = v.get("calibrated_min", v["calibrated"]), v.get("calibrated_max", v["calibrated"])
                spread = f" in {lo:.0f}..{hi:.0f}" if f"{lo:.0f}" != f"{hi:.0f}" else ""
                return (f"{key.replace('_ns', '')} {v['now']:.0f} ns (calibrated {v['calibrated']:.0f}{spread}, "
                        f"{v['change_pct']:+.0f} %)")
            return ", ".join(one(key, v) for key, v in check.items() if key.endswith("_ns") and isinstance(v, dict))
        verdict = ("drifted from its calibration: these points are marked" if host_check["drifted"]
                   else "as calibrated")
        after = host_check.get("after")
        if host_check.get("before_missing"):
            print(f"host check after measuring: {figures(host_check)}; {verdict}")
        elif isinstance(after, dict):
            print(f"host check before measuring: {figures(host_check)}; after: {figures(after)}; {verdict}")
        else:
            print(f"host check before measuring: {figures(host_check)}; {verdict}")
    json_path, png_path = comparison.write(out_dir)
    print(f"wrote {json_path} and {png_path}")
    return comparison


def _cmd_compare(args: argparse.Namespace) -> int:
    from .compare import check_scenario

    jobs = _jobs(args.jobs, "compare: --jobs")
    machine = _nonempty(args.machine, "compare: --machine", "a machine preset, 'host' or a model file")
    sets = list(args.sets) + ([f"machine={json.dumps(machine)}"] if machine is not None else [])
    _output_dir(args.output, "compare: -o")
    # Every scenario checked (both sides) before the first is simulated or measured.
    for source in args.scenario:
        try:
            check_scenario(source, sets=sets)
        except api.InputError as exc:
            if len(args.scenario) == 1 or str(exc).startswith(source):
                raise
            raise api.InputError(f"compare: {source}: {exc}") from None
    if len(args.scenario) == 1:
        _compare(args.scenario[0], sets, args.output, jobs)
        return 0
    # Several scenarios (e.g. scenarios/host/*.json): one sub-folder each, then
    # the accuracy summary over every point.
    comparisons = []
    for source in args.scenario:
        comparisons.append(_compare(source, sets, str(Path(args.output) / Path(source).stem), jobs))
        print()
    cset = ComparisonSet(comparisons)
    summary, rows = cset.summary, cset.rows
    if summary["compared"]:
        print(f"accuracy over {summary['compared']} points: median |error| {summary['median_abs_error_pct']:.1f} %, "
              f"max {summary['max_abs_error_pct']:.1f} %, within 15 %: {summary['within_15_pct']}, "
              f"within 35 %: {summary['within_35_pct']}")
    if cset.host_load_unknown:
        print(f"{len(cset.host_load_unknown)} of {len(rows)} point(s) have an unknown host load (window under "
              "100 ms per CPU, or a workload that runs to completion): whether other processes ran then is "
              "not known")
    if "quiet" in summary:
        quiet = summary["quiet"]
        print(f"{len(cset.host_busy)} point(s) were measured on a busy host (other processes used more than "
              f"{HOST_BUSY_SHARE:.0%} of the CPUs) and {len(cset.host_drifted)} on a host that had drifted more "
              f"than {HOST_DRIFT_LIMIT:.0%} from its calibration; without them: " + (
                  f"median |error| {quiet['median_abs_error_pct']:.1f} %, max {quiet['max_abs_error_pct']:.1f} % "
                  f"over {quiet['compared']} points" if quiet["compared"] else "no points left"))
    if "steady" in summary:
        steady = summary["steady"]
        print(f"{len(cset.unstable)} point(s) measured unstable (repeats more than {UNSTABLE_SPREAD:g}x apart: "
              + ", ".join(f"{_shown(r['scenario'])} {r['threads']}" for r in cset.unstable) + "); without them and "
              "without busy or drifted points: " + (
                  f"median |error| {steady['median_abs_error_pct']:.1f} %, max {steady['max_abs_error_pct']:.1f} %, "
                  f"within 35 %: {steady['within_35_pct']} of {steady['compared']} points"
                  if steady["compared"] else "no points left"))
    path = cset.write_summary(args.output)
    print(f"wrote {path}")
    return 0


def _calibrate(path: str | os.PathLike, quick: bool) -> None:
    """Calibrates into `path`, printing what the calibration warns of (a host that moved)."""
    from .compare import calibration_changes

    warn_if_busy(STATUS, "calibrating")
    try:
        previous = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        previous = None  # no previous model there (or not one this can read): nothing to compare
    model = STATUS.run("calibrating this host", api.calibrate, path, quick, detail=True)
    for warning in model.get("provenance", {}).get("warnings", []) + calibration_changes(previous, model):
        sys.stderr.write(f"semsim: warning: {_one_line(warning)}\n")


def _cmd_demo(args: argparse.Namespace) -> int:
    # Predicted with a model of this host: the calibrated one, or, where none is found, a
    # quick calibration made now (a few seconds) into the output directory. host-default
    # describes one particular host and would compare that host with this one.
    jobs = _jobs(args.jobs, "demo: --jobs")
    _output_dir(args.output, "demo: -o")
    sets = list(args.sets)
    if not any(s.split("=", 1)[0].strip() == "machine" for s in sets):
        if any(m.get("name") == "host" for m in api.catalog().get("machines", [])):
            sets.append("machine=host")
        elif api.calibration_available():
            model = Path(args.output) / "host.json"
            model.parent.mkdir(parents=True, exist_ok=True)
            STATUS.note(f"no calibrated model of this host ({api.host_model_path()}); a quick calibration "
                        f"into {model} (a few seconds; `semsim calibrate` makes the full one)")
            _calibrate(model, quick=True)
            sets.append(f"machine={json.dumps(os.fspath(model))}")
    _compare(os.fspath(default_scenario_path()), sets, args.output, jobs)
    return 0


def _int_list(text: str, flag: str, words: Sequence[str] = (), maximum: int | None = None) -> list[Any]:
    """``1,2,4``, ``10..100:10``, ``1..64*2`` (and the given words) to a list of integers
    from 1 to ``maximum`` (checked as a range expands: a huge one fails at once)."""
    from .sweeps import MAX_SWEEP_POINTS

    out: list[Any] = []

    def add(value: int) -> None:
        if value < 1 or (maximum is not None and value > maximum):
            allowed = f"from 1 to {maximum}" if maximum is not None else ">= 1"
            raise UsageError(f"sweep: {flag} {text!r}: {value} is out of range; values are integers {allowed}")
        if len(out) >= MAX_SWEEP_POINTS:
            raise UsageError(f"sweep: {flag} {text!r}: more than {MAX_SWEEP_POINTS:,} values; a sweep has at most "
                             f"{MAX_SWEEP_POINTS:,} points")
        out.append(value)

    for item in (part.strip() for part in text.split(",")):
        if item in words:
            out.append(item)
            continue
        try:
            if ".." in item:
                start_text, rest = item.split("..", 1)
                step, geometric = 1, False
                if "*" in rest:
                    rest, factor = rest.split("*", 1)
                    step, geometric = int(factor), True
                elif ":" in rest:
                    rest, step_text = rest.split(":", 1)
                    step = int(step_text)
                start, stop = int(start_text), int(rest)
                if step < (2 if geometric else 1) or start > stop or (geometric and start < 1):
                    raise ValueError
                value = start
                while value <= stop:
                    add(value)
                    value = value * step if geometric else value + step
            else:
                add(int(item))
        except ValueError:
            allowed = "".join(f" or {w!r}" for w in words)
            raise UsageError(
                f"sweep: {flag} {text!r}: expected comma-separated integers{allowed}; ranges A..B, "
                "A..B:STEP, A..B*FACTOR (e.g. 1,2,4 or 10..100:10 or 1..64*2)"
            ) from None
    if not out:
        raise UsageError(f"sweep: {flag}: no values given")
    return out


def _name_list(values: Sequence[str] | None, flag: str, allowed: str,
               objects: bool = False) -> list[Any] | None:
    """Comma-separated names (or, with `objects`, a JSON object per flag); None when the flag
    is not given. An empty value or an empty name between commas is refused (never the
    default), and so is a JSON object where the flag takes names only."""
    if values is None:
        return None
    out: list[Any] = []
    for value in values:
        if value.lstrip().startswith("{"):
            if not objects:
                raise UsageError(f"sweep: {flag} {_shown(value)!r}: a JSON object; expected comma-separated "
                                 f"{allowed}")
            try:
                out.append(json.loads(value))
            except ValueError as exc:
                raise UsageError(f"sweep: {flag} {_shown(value)!r}: malformed JSON: {exc}") from None
            continue
        parts = [part.strip() for part in value.split(",")]
        if not all(parts):
            raise UsageError(f"sweep: {flag} {value!r}: an empty name; expected comma-separated {allowed}")
        out.extend(parts)
    return out


def _frame_csv(result: api.Result) -> str:
    frame = result.to_frame()
    for column in frame.columns:
        if frame[column].dtype == object and frame[column].map(lambda v: isinstance(v, (list, dict))).any():
            frame[column] = frame[column].map(
                lambda v: json.dumps(v, separators=(",", ":"), sort_keys=True) if isinstance(v, (list, dict)) else v)
    return frame.to_csv(index=False, lineterminator="\n")


def _cmd_sweep(args: argparse.Namespace) -> int:
    from .sweeps import SEMAPHORES_PER_THREAD, sweep

    threads = _int_list(args.threads, "--threads", maximum=api.MAX_THREADS) if args.threads is not None else None
    semaphores = (_int_list(args.semaphores, "--semaphores", (SEMAPHORES_PER_THREAD,), maximum=api.MAX_SEMAPHORES)
                  if args.semaphores is not None else None)
    kernels = _name_list(args.kernel, "--kernel", "kernel ids (see semsim list) or one JSON object per flag",
                         objects=True)
    machines = _name_list(args.machine, "--machine", "machine presets (see semsim list), 'host' or model files")
    _output_file(args.output, "sweep: -o")
    executor = args.executor
    if executor not in ("process", "dask") and ":" not in executor:
        raise UsageError(f"sweep: --executor {executor!r}: expected 'process', 'dask' or a Dask scheduler "
                         "address such as tcp://host:8786")
    repeats = _at_least_one(args.repeats, "sweep: --repeats", " (seeds per point)", api.MAX_REPEATS)
    workers = _at_least_one(args.workers, "sweep: --workers", " (processes at once)", api.MAX_JOBS)
    result = sweep(
        args.scenario, sets=args.sets, threads=threads, kernel=kernels, machine=machines, semaphores=semaphores,
        repeats=repeats, executor=executor, max_workers=workers, progress=not args.no_progress,
    )
    if args.output is not None and args.output.lower().endswith(".csv"):
        api.write_file(args.output, _frame_csv(result), "sweep: -o")
    else:
        _write_result(result, args.output)
    rows = [["threads", "kernel", "machine", "semaphores", "ops/s"]]
    for p in result.points:
        sems = p.get("scenario", {}).get("workload", {}).get("semaphores", "")
        rows.append([str(p.get("threads")), _fmt_kernel(p.get("kernel")), str(p.get("machine")), str(sems),
                     f"{p.get('ops_per_s', 0):,.0f}"])
    _table(rows, sys.stderr, numeric=(0, 3, 4))
    return 0


def _cmd_calibrate(args: argparse.Namespace) -> int:
    path = _output_file(args.output, "calibrate: -o") or api.host_model_path()
    _calibrate(path, args.quick)
    print(f"wrote {path}")
    return 0


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from . import reproduce

    known = [t.name for t in reproduce.TARGETS]
    if not 1 <= args.seeds <= api.MAX_REPEATS:
        raise UsageError(f"reproduce: --seeds {args.seeds}: expected an integer from 1 to {api.MAX_REPEATS} "
                         "(seeds per point)")
    settings = reproduce.settings_for(args.duration_ms, args.seeds)
    if not (math.isfinite(args.duration_ms) and args.duration_ms > 0
            and settings.warmup_ms + settings.duration_ms <= ONE_HOUR_MS):
        longest = ONE_HOUR_MS / 1.1  # the warm-up is a tenth of the window (at least 0.5 ms)
        raise UsageError(f"reproduce: --duration-ms {args.duration_ms:.15g}: expected a finite number of simulated "
                         f"ms > 0 and at most {longest:,.0f} (with its warm-up, a tenth more, at most one hour)")
    only = None
    if args.only is not None:
        only = [x.strip() for x in args.only.split(",")]
        if not any(only):
            raise UsageError(f"reproduce: --only {args.only!r}: no target given; allowed: {', '.join(known)}")
    for name in only or []:
        if name not in known:
            raise UsageError(f"reproduce: --only: unknown target {name!r}; allowed: {', '.join(known)}")
    workers = _jobs(args.workers, "reproduce: --workers")
    _output_dir(args.output, "reproduce: -o")
    start = time.perf_counter()
    results = STATUS.run("reproducing the seeds' comparisons", reproduce.reproduce, settings, only, workers,
                         detail=True, **({"uncertainty": True} if args.uncertainty else {}))
    return reproduce.finish(results, args.output, settings, start)


def _cmd_bench(args: argparse.Namespace) -> int:
    from . import bench

    if not 1 <= args.repeats <= 100:
        raise UsageError(f"bench: --repeats {args.repeats}: expected an integer from 1 to 100")
    _output_file(args.output, "bench: -o")
    report = bench.run(repeats=args.repeats)
    if args.output is not None:
        api.write_file(args.output, json.dumps(report, indent=2) + "\n", "bench: -o")
    return 0


def _cmd_list(args: argparse.Namespace) -> int:
    cat = api.catalog()
    if args.policies:
        print(_policy_table(cat.get("kernels", [])))
        return 0
    sections = [
        ("machines", "name", lambda m: f"{m.get('cpus', '?')} CPUs, {m.get('description', '')}"),
        ("kernels", "id", lambda k: k.get("description", "")),
        ("workloads", "type", lambda w: w.get("description", "")),
    ]
    for title, key, describe in sections:
        entries = cat.get(title, [])
        width = max((len(str(e.get(key, ""))) for e in entries), default=0)
        print(f"{title}:")
        for e in entries:
            print(f"  {str(e.get(key, '')).ljust(width)}  {_one_line(describe(e))}".rstrip())
    return 0


def _policy_table(kernels: list[dict[str, Any]]) -> str:
    """Policies down, generations across (kernel order), the releases each one replays
    under its id."""
    columns = [[str(k.get("id", "")), str(k.get("kernels", ""))] for k in kernels]
    keys = list(kernels[0].get("policy", {})) if kernels else []
    rows = [["", *[c[0] for c in columns]], ["", *[c[1] for c in columns]]]
    for key in keys:
        values = [k.get("policy", {}).get(key) for k in kernels]
        rows.append([key, *[str(v).lower() if isinstance(v, bool) else str(v) for v in values]])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in rows)


def _cmd_validate(args: argparse.Namespace) -> int:
    # Every check run and native make (the machine's matrices and the native runner's
    # limits included); this host's limits alone do not make the scenario bad.
    scenario = api.validate(args.scenario, sets=args.sets)
    note = api.native_refusal(args.scenario, sets=args.sets)
    name = _shown(scenario.get('name') or Path(args.scenario).stem)
    print(f"ok: {name}" + (f" (but `semsim native` on this host would refuse it: {_one_line(note)})"
                           if note else ""))
    return 0


def _add_machine_parser(sub: Any) -> None:
    p = sub.add_parser("machine", help="machine models: import one from a measured core-to-core latency matrix")
    msub = p.add_subparsers(dest="machine_command", metavar="ACTION")
    p = msub.add_parser(
        "import",
        help="build a machine model from a core-to-core latency matrix (mctop or nviennot layout)",
        description="Builds a machine model from a measured core-to-core latency matrix: topology from the "
                    "latency clusters (or the flags), the whole matrix as latency_matrix_ns, memory latency "
                    "where the file has it, the other costs from a preset. See cpu_models/README.md.",
    )
    p.add_argument("matrix", metavar="MATRIX", help="the matrix file (reference/data/mctop/*.csv, c2c_nviennot/*.csv)")
    p.add_argument("--format", required=True, choices=("mctop", "nviennot"),
                   help="mctop: rows table,i,j,value in cycles; nviennot: rows cpu_i,cpu_j,latency_ns")
    p.add_argument("--ghz", type=float, default=None, help="clock in GHz (default: the one the file states)")
    p.add_argument("--name", default=None, help="model name (default: the stem of -o, else of MATRIX)")
    p.add_argument("-o", "--output", default=None, metavar="OUT.json", help="write the model here instead of stdout")
    p.add_argument("--costs-from", default=None, metavar="PRESET",
                   help="preset (or machine file) for what the matrix cannot give (default: uniform-64)")
    p.add_argument("--sockets", type=int, default=None, help="socket count (default: the file's, else inferred)")
    p.add_argument("--smt", choices=("yes", "no"), default=None,
                   help="whether the closest CPUs are SMT siblings (default: the file's statement, else inferred)")
    p.add_argument("--drop-smt", action="store_true", help="one model CPU per core (its lowest-numbered thread)")
    p.add_argument("--topology", default=None, metavar="S,D,C,T",
                   help="give the topology instead of inferring it; the file's CPU ids follow --numbering")
    p.add_argument("--numbering", choices=("linux", "smt-adjacent"), default=None,
                   help="the model's CPU numbering (default: the file's if it is one of them, else smt-adjacent)")
    p.add_argument("--gap", type=float, default=None, help="relative gap that splits latency classes (default 0.15)")
    p.add_argument("--description", default=None, help="one-line description (default: from the file header)")
    p.add_argument("--note", default=None, help="text appended to the topology's source (what the clusters mean)")


def _cmd_machine(args: argparse.Namespace) -> int:
    from . import machine_import as mi

    if args.machine_command != "import":
        raise UsageError("machine: an action is required: import (or machine --help)")
    topology = None
    if args.topology is not None:
        try:
            topology = tuple(int(x) for x in args.topology.split(","))
        except ValueError:
            topology = ()
    costs_from = _nonempty(args.costs_from, "machine import: --costs-from",
                           "a machine preset (see semsim list), 'host' or a machine file")
    _output_file(args.output, "machine import: -o")
    name = args.name
    if name is None and args.output:
        stem = Path(args.output).stem
        name = stem if mi.valid_name(stem) else None
    model = mi.import_matrix(
        args.matrix, args.format, ghz=args.ghz, name=name, description=args.description,
        costs_from=mi.DEFAULT_COSTS_FROM if costs_from is None else costs_from,
        gap=mi.DEFAULT_GAP if args.gap is None else args.gap,
        smt=None if args.smt is None else args.smt == "yes", sockets=args.sockets, topology=topology,
        numbering=args.numbering, drop_smt=args.drop_smt, note=args.note)
    text = mi.dump(model)
    mi.check_loads(text, args.matrix)  # the loader `semsim run` uses must take it
    if args.output is not None:
        api.write_file(args.output, text, "machine import: -o")
        sys.stderr.write(f"wrote {args.output}: {mi.summary(model)}\n")
    else:
        sys.stdout.write(text)
        sys.stderr.write(mi.summary(model) + "\n")
    return 0


_COMMANDS = {
    "run": _cmd_run,
    "native": _cmd_native,
    "compare": _cmd_compare,
    "demo": _cmd_demo,
    "sweep": _cmd_sweep,
    "calibrate": _cmd_calibrate,
    "reproduce": _cmd_reproduce,
    "bench": _cmd_bench,
    "diff": cli_views.cmd_diff,
    "list": _cmd_list,
    "validate": _cmd_validate,
    "machine": _cmd_machine,
}


# `--flag=--` or `-f--`: a flag given the text "--" as its value.
_DASHDASH_VALUE = re.compile(r"(--[A-Za-z][A-Za-z0-9-]*=|-[A-Za-z]=?)--")


def _check_dashdash_values(argv: Sequence[str]) -> None:
    """argparse drops a "--" given as a flag's value (``--set=--``, ``-j--``) and hands the
    command an empty list where it expects text, which no command takes: refused here,
    naming the flag, before parsing."""
    words = [t for t in argv if not t.startswith("-")][:2]
    command = " ".join(words) if words[:1] == ["machine"] else " ".join(words[:1])
    for token in argv:
        if token == "--":  # the end of the flags: what follows is positional
            return
        match = _DASHDASH_VALUE.fullmatch(token)
        if match:
            flag = match.group(1).rstrip("=")
            message = f"{flag}: '--' is not a value"
            raise UsageError(f"{command}: {message}" if command else message)


def _run(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    _check_dashdash_values(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    if args.version:
        print(f"semsim {api.core_version()}")
        return 0
    if args.command is None:
        raise UsageError(f"a command is required: {', '.join(_COMMANDS)} (or --help)")
    if hasattr(args, "sets"):
        args.sets = _check_sets(args.sets)
    return _COMMANDS[args.command](args)


def _os_error_message(exc: OSError) -> str:
    if exc.filename is not None and exc.strerror:
        return f"{exc.filename}: {exc.strerror}"
    return str(exc)


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line; returns the exit status."""
    debug = bool(os.environ.get("SEMSIM_DEBUG"))
    # Ctrl-C must work while the C++ engine runs, which Python's own handler cannot
    # interrupt: let SIGINT end the process. The native runner catches it for its
    # lifetime, removes its semaphore array, and re-raises it. (An ignored SIGINT,
    # as under nohup, stays ignored.)
    try:
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            signal.signal(signal.SIGINT, signal.SIG_DFL)
    except ValueError:  # not the main thread (main() called from a thread)
        pass
    try:
        return _run(argv)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # stdout closed early (| head): not an error worth a message.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except OSError:
            pass
        return EXIT_INTERNAL
    except SystemExit:
        raise
    except BaseException as exc:  # every failure becomes one line
        if debug:
            raise
        if isinstance(exc, (UsageError, api.InputError, ValueError)):
            status, kind, message = EXIT_USAGE, "error", _one_line(exc)
        elif isinstance(exc, api.HostError):
            status, kind, message = EXIT_HOST, "host error", _one_line(exc)
        elif isinstance(exc, RecursionError):
            status, kind, message = EXIT_USAGE, "error", "input nested too deeply"
        elif isinstance(exc, ImportError):
            status, kind, message = EXIT_INTERNAL, "internal error", _one_line(exc)
        elif isinstance(exc, OSError):
            status, kind, message = EXIT_USAGE, "error", _one_line(_os_error_message(exc))
        else:
            status, kind = EXIT_INTERNAL, "internal error"
            message = _one_line(exc)
            if not isinstance(exc, (api.SimulationError, RuntimeError)):
                message = f"{type(exc).__name__}: {message}"
        try:
            sys.stderr.write(f"semsim: {kind}: {message}\n")
            sys.stderr.flush()
        except OSError:
            pass
        return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
