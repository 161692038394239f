"""The ``semsim`` command.

  semsim run SCENARIO.json [--set KEY=VALUE ...] [-o OUT.json]
  semsim native [SCENARIO.json] [--set ...] [-o OUT.json] [--cleanup]
  semsim compare SCENARIO.json... [--machine NAME] [--set ...] [-o DIR]
  semsim demo [--set ...] [-o DIR]
  semsim sweep SCENARIO.json [--threads LIST] [--kernel LIST] [--machine LIST]
               [--semaphores LIST] [--repeats K] [--executor process|dask|ADDRESS]
               [-j N] [--set ...] [-o OUT.json|OUT.csv]
  semsim calibrate [-o MODEL.json] [--quick]
  semsim reproduce [-o DIR] [--duration-ms MS] [--seeds K] [--only NAME,...] [-j N]
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
import os
import signal
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn, TextIO

from . import _core, api, cli_extra, cli_views
from .compare import HOST_BUSY_SHARE, HOST_DRIFT_LIMIT, UNSTABLE_SPREAD
from ._data import default_scenario_path

EXIT_USAGE = 2
EXIT_INTERNAL = 1
EXIT_HOST = 3
EXIT_INTERRUPTED = 130


class UsageError(Exception):
    """A bad command line (unknown flag, missing argument, bad --set)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        command = self.prog.split(" ", 1)[1] if " " in self.prog else ""
        raise UsageError(f"{command}: {message}" if command else message)


def _one_line(message: object) -> str:
    text = " ".join(str(message).split("\n")).strip()
    return text or "unknown error"


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


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="semsim",
        description="Simulate Linux SysV semaphore locking across kernel generations, "
                    "and measure the same workloads on this host.",
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    fields_help = _scenario_fields_help()

    p = sub.add_parser("run", help="simulate a scenario; JSON result to OUT or stdout, a table to stderr", epilog=fields_help,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("scenario", metavar="SCENARIO.json")
    _add_set(p)
    p.add_argument("-o", "--output", metavar="OUT.json", help="write the JSON result here instead of stdout")
    cli_extra.add_profile_flags(p)
    cli_views.add_trace_flags(p)
    p.add_argument("--reference-order", action="store_true",
                   help="no shortcut in the time core: every turn through the calendar "
                        "(slower; the same bytes, which the tests check)")

    p = sub.add_parser("native", help="measure a scenario's workload on real SysV semaphores on this host", epilog=fields_help,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("scenario", metavar="SCENARIO.json", nargs="?")
    _add_set(p)
    p.add_argument("-o", "--output", metavar="OUT.json", help="write the JSON result here instead of stdout")
    p.add_argument("--cleanup", action="store_true",
                   help="first remove semaphore arrays left by killed runners, and say how many")

    p = sub.add_parser("compare", help="simulate and measure scenarios; table, DIR/compare.json, DIR/<name>.png", epilog=fields_help,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("scenario", metavar="SCENARIO.json", nargs="+")
    p.add_argument("--machine", default=None, metavar="NAME",
                   help="the model to predict with (e.g. host: the calibrated model), for every scenario")
    _add_set(p)
    p.add_argument("-o", "--output", metavar="DIR", default="out", help="output directory (default: out)")

    p = sub.add_parser("demo", help="compare on the embedded default scenario (the main job)")
    _add_set(p)
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

    cli_extra.add_parsers(sub)
    _add_machine_parser(sub)
    cli_views.add_diff_parser(sub, _add_set)
    sub.add_parser("list", help="list machines, kernel generations and workloads")

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


def _run_length_cells(rl: Any) -> list[str]:
    """A simulated point's interval (relative half-width) and the simulated time it used."""
    if not isinstance(rl, dict) or not rl.get("applicable"):
        return ["-", "to completion"]
    width = "-" if rl.get("half_width_rel") is None else f"+-{100 * rl['half_width_rel']:.2f}%"
    if rl.get("counter") == "rounds":
        width += " (rounds)"
    state = "" if not rl.get("precision") else (" reached" if rl.get("reached") else " ceiling")
    return [width, f"{rl.get('simulated_ms', 0):.2f} ms{state}"]


def _write_result(result: api.Result, output: str | None) -> None:
    text = result.to_json()
    if not text.endswith("\n"):
        text += "\n"
    if output:
        path = Path(output)
        if path.parent != Path(""):
            path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
        sys.stdout.flush()


# ---------------------------------------------------------------------------- commands


class _Progress:
    """A one-line ticker on stderr while something long runs, only on a terminal:
    ``semsim: <what>: 12.3 s`` (and ``of about N s`` when the length is known). Off a
    terminal (a pipe, a file, CI) it says nothing."""

    def __init__(self, what: str, expected_s: float | None = None) -> None:
        self.what, self.expected_s = what, expected_s
        self.on = sys.stderr.isatty() and not os.environ.get("SEMSIM_NO_PROGRESS")
        self.start = time.monotonic()
        self.shown = 0.0

    def tick(self) -> None:
        now = time.monotonic()
        if not self.on or now - self.shown < 0.25:
            return
        self.shown = now
        elapsed = now - self.start
        tail = f" of about {self.expected_s:.0f} s" if self.expected_s else ""
        sys.stderr.write(f"\rsemsim: {self.what}: {elapsed:.1f} s{tail}\033[K")
        sys.stderr.flush()

    def done(self) -> None:
        if self.on and self.shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


def _with_progress(progress: _Progress, fn: Any, *args: Any) -> Any:
    """Runs fn in a thread while the ticker runs (for calls that release the GIL)."""
    if not progress.on:
        return fn(*args)
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["result"] = fn(*args)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller
            box["error"] = exc

    worker = threading.Thread(target=work, name="semsim-work", daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            progress.tick()
            worker.join(0.05)
    finally:
        progress.done()
    if "error" in box:
        raise box["error"]
    return box["result"]


def _host_busy_now(seconds: float = 0.3) -> float | None:
    """The share of this host's CPUs that were busy over the next `seconds` (/proc/stat),
    None where it cannot tell. Before a measurement: semsim itself does nothing then."""
    def sample() -> tuple[int, int] | None:
        try:
            fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
            values = [int(v) for v in fields[:8]]
        except (OSError, ValueError):
            return None
        idle = values[3] + (values[4] if len(values) > 4 else 0)
        return sum(values) - idle, sum(values)
    a = sample()
    time.sleep(seconds)
    b = sample()
    if a is None or b is None or b[1] <= a[1]:
        return None
    return (b[0] - a[0]) / (b[1] - a[1])


def _warn_if_busy(before: str) -> None:
    """Warns, before measuring, when other processes already keep the CPUs busy."""
    busy = _host_busy_now()
    if busy is not None and busy > HOST_BUSY_SHARE:
        sys.stderr.write(f"semsim: warning: this host is busy before {before} (other processes use "
                         f"{busy:.0%} of its CPUs): the figures will include their load; measure on a "
                         "quiet host\n")
        sys.stderr.flush()


def _interruptible(fn: Any, *args: Any, progress: _Progress | None = None) -> Any:
    """Runs a simulation so that Ctrl-C ends the process as SIGINT does (status 130):
    main() gives SIGINT its default action, and the engine keeps the caller's SIGINT
    disposition (sim/core), so nothing is needed here but the progress ticker."""
    return fn(*args) if progress is None else _with_progress(progress, fn, *args)


def _cmd_run(args: argparse.Namespace) -> int:
    if args.folded and not args.profile:
        raise UsageError("run: --folded needs --profile")
    cli_views.run_trace(args)  # first: a bad --trace fails before the run prints anything
    if args.reference_order:
        _core.set_reference_order(True)
    result = _interruptible(api._simulate_sets, args.scenario, args.sets,
                            progress=_Progress(f"simulating {Path(str(args.scenario)).name}"))
    if args.profile:
        # The profile takes stdout; the JSON result goes only where -o says.
        cli_extra.print_profile(result.doc, args.folded)
        if args.output is not None:
            _write_result(result, args.output)
    else:
        _write_result(result, args.output)
    _points_table(result, sys.stderr)
    _say_model(result)
    return 0


def _say_model(result: api.Result) -> None:
    """Names the model file and hash a simulated result used (stderr)."""
    machine = result.scenario.get("machine")
    try:
        info = api.machine_info(str(machine))
    except api.InputError:
        return
    sys.stderr.write(f"model {machine!r}: {info.get('file') or 'built in'} ({info.get('hash')})\n")


def _cmd_native(args: argparse.Namespace) -> int:
    if args.cleanup:
        removed = api.cleanup_native()
        stream = sys.stderr if args.scenario else sys.stdout
        stream.write(f"removed {removed} leftover semaphore array{'s' if removed != 1 else ''}\n")
    if not args.scenario:
        if args.cleanup:
            return 0
        raise UsageError("native: the following arguments are required: SCENARIO.json (or --cleanup)")
    scenario_text = api._load_native_text(args.scenario, args.sets)  # bad input: one line, first
    _warn_if_busy("measuring")
    result = _with_progress(_Progress(f"measuring {Path(str(args.scenario)).name} on this host"),
                            api._measure_sets, scenario_text, [])
    _write_result(result, args.output)
    _points_table(result, sys.stderr)
    return 0


def _compare(source: str, sets: list[str], out_dir: str) -> list[dict[str, Any]]:
    from .compare import Comparison

    scenario_text = api._load_text(source, sets)
    api._load_native_text(scenario_text, [])  # what the measurement will refuse, before anything runs
    scenario = json.loads(scenario_text)
    threads = scenario.get("threads")
    npoints = len(threads) if isinstance(threads, list) else 1
    name = scenario.get("name", "scenario")
    model = api.machine_info(str(scenario.get("machine")))
    sys.stderr.write(f"semsim: simulating {name!r}: {npoints} point(s) on model {scenario.get('machine')!r} "
                     f"({model.get('file') or 'built in'}, {model.get('hash')})\n")
    sys.stderr.flush()
    start = time.monotonic()
    simulated = _interruptible(api._simulate_sets, scenario_text, [],
                               progress=_Progress(f"simulating {npoints} point(s)"))
    # The engine's defaults (sim/config/scenario.cpp) where the scenario leaves them out.
    seconds = npoints * int(scenario.get("repeats", 1)) * (
        float(scenario.get("duration_ms", 20)) + float(scenario.get("warmup_ms", 2))) / 1000.0
    sys.stderr.write(f"semsim: simulated in {time.monotonic() - start:.1f} s; measuring the same workload "
                     f"on this host (about {seconds:.1f} s)\n")
    sys.stderr.flush()
    host_check = None
    model_path = Path(model.get("file") or api.host_model_path())
    if scenario.get("machine") == "host" and model_path.is_file():
        # Has the host moved since it was calibrated? (the quick probes, a few seconds).
        # A check that fails leaves the points unchecked; it does not end the compare.
        from .compare import host_drift

        try:
            host_check = host_drift(json.loads(model_path.read_text(encoding="utf-8")))
        except (api.InputError, api.SimulationError) as e:
            sys.stderr.write(f"semsim: warning: no host check before measuring ({e})\n")
    _warn_if_busy("measuring")
    start = time.monotonic()
    measured = _with_progress(_Progress(f"measuring {npoints} point(s) on this host", seconds),
                              api._measure_sets, scenario_text, [])
    sys.stderr.write(f"semsim: measured in {time.monotonic() - start:.1f} s\n")
    comparison = Comparison(simulated, measured, host_check)
    host = measured.doc.get("host", {})
    print(f"{name}: {scenario.get('workload', {}).get('type')} predicted on model "
          f"{scenario.get('machine')!r} vs measured on this host ({host.get('cpus', '?')} CPUs, "
          f"Linux {host.get('kernel_release', '?')})")
    print(comparison.table())
    unknown_load = sum(1 for r in comparison.rows if r.get("foreign_cpu_share") is None)
    if unknown_load:
        print(f"host load unknown for {unknown_load} of {len(comparison.rows)} point(s) (window under 100 ms "
              "per CPU, or a workload that runs to completion): '-' in 'host busy' is unknown, not quiet")
    if host_check is not None:
        figures = ", ".join(
            f"{key.replace('_ns', '')} {v['now']:.0f} ns (calibrated {v['calibrated']:.0f}, {v['change_pct']:+.0f} %)"
            for key, v in host_check.items() if isinstance(v, dict))
        verdict = ("drifted from its calibration: these points are marked" if host_check["drifted"]
                   else "as calibrated")
        print(f"host check before measuring: {figures}; {verdict}")
    json_path, png_path = comparison.write(out_dir)
    print(f"wrote {json_path} and {png_path}")
    return [dict(row, scenario=name) for row in comparison.rows]


def _accuracy(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Median and max |error| and the counts within 15 % and 35 % over the rows that have an error."""
    errors = sorted(abs(r["error_pct"]) for r in rows if r.get("error_pct") is not None)
    out: dict[str, Any] = {"compared": len(errors)}
    if errors:
        mid = len(errors) // 2
        median = errors[mid] if len(errors) % 2 else (errors[mid - 1] + errors[mid]) / 2
        out.update(median_abs_error_pct=median, max_abs_error_pct=errors[-1],
                   within_15_pct=sum(e <= 15 for e in errors), within_35_pct=sum(e <= 35 for e in errors))
    return out


def _cmd_compare(args: argparse.Namespace) -> int:
    sets = list(args.sets) + ([f"machine={args.machine}"] if args.machine else [])
    if len(args.scenario) == 1:
        _compare(args.scenario[0], sets, args.output)
        return 0
    # Several scenarios (e.g. scenarios/host/*.json): one sub-folder each, then
    # the accuracy summary over every point.
    rows: list[dict[str, Any]] = []
    for source in args.scenario:
        rows += _compare(source, sets, str(Path(args.output) / Path(source).stem))
        print()
    summary: dict[str, Any] = {"points": len(rows), **_accuracy(rows)}
    if summary["compared"]:
        print(f"accuracy over {summary['compared']} points: median |error| {summary['median_abs_error_pct']:.1f} %, "
              f"max {summary['max_abs_error_pct']:.1f} %, within 15 %: {summary['within_15_pct']}, "
              f"within 35 %: {summary['within_35_pct']}")
    busy = [r for r in rows if r.get("host_busy")]
    drifted = [r for r in rows if r.get("host_drifted")]
    unknown = [r for r in rows if r.get("foreign_cpu_share") is None]
    if unknown:
        # Unknown is not quiet: a window too short for /proc/stat's ticks, or a workload
        # that runs to completion, says nothing about the host's other load.
        summary["host_load_unknown_points"] = len(unknown)
        print(f"{len(unknown)} of {len(rows)} point(s) have an unknown host load (window under 100 ms "
              "per CPU, or a workload that runs to completion): whether other processes ran then is "
              "not known")
    if busy or drifted:
        # Points measured while other processes used the CPUs, or on a host that had
        # moved from its calibration: the accuracy without them.
        quiet = _accuracy([r for r in rows if not r.get("host_busy") and not r.get("host_drifted")])
        summary["host_busy_points"] = len(busy)
        summary["host_drifted_points"] = len(drifted)
        summary["quiet"] = quiet
        print(f"{len(busy)} point(s) were measured on a busy host (other processes used more than "
              f"{HOST_BUSY_SHARE:.0%} of the CPUs) and {len(drifted)} on a host that had drifted more "
              f"than {HOST_DRIFT_LIMIT:.0%} from its calibration; without them: " + (
                  f"median |error| {quiet['median_abs_error_pct']:.1f} %, max {quiet['max_abs_error_pct']:.1f} % "
                  f"over {quiet['compared']} points" if quiet["compared"] else "no points left"))
    unstable = [r for r in rows if r.get("measured_unstable")]
    if unstable:
        # Points whose own repeats disagree by more than UNSTABLE_SPREAD: the accuracy
        # without them (and without busy or drifted points) is the model's, not the vote's.
        steady = _accuracy([r for r in rows if not (r.get("measured_unstable") or r.get("host_busy")
                                                    or r.get("host_drifted"))])
        summary["unstable_points"] = len(unstable)
        summary["steady"] = steady
        print(f"{len(unstable)} point(s) measured unstable (repeats more than {UNSTABLE_SPREAD:g}x apart: "
              + ", ".join(f"{r['scenario']} {r['threads']}" for r in unstable) + "); without them and "
              "without busy or drifted points: " + (
                  f"median |error| {steady['median_abs_error_pct']:.1f} %, max {steady['max_abs_error_pct']:.1f} %, "
                  f"within 35 %: {steady['within_35_pct']} of {steady['compared']} points"
                  if steady["compared"] else "no points left"))
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    (out / "accuracy.json").write_text(json.dumps({"summary": summary, "rows": rows}, indent=2) + "\n")
    print(f"wrote {out / 'accuracy.json'}")
    return 0


def _calibrate(path: str | os.PathLike, quick: bool) -> None:
    """Calibrates into `path`, printing what the calibration warns of (a host that moved)."""
    _warn_if_busy("calibrating")
    model = _with_progress(_Progress("calibrating this host"), api.calibrate, path, quick)
    for warning in model.get("provenance", {}).get("warnings", []):
        sys.stderr.write(f"semsim: warning: {warning}\n")


def _cmd_demo(args: argparse.Namespace) -> int:
    # Predicted with a model of this host: the calibrated one, or, where none is found, a
    # quick calibration made now (a few seconds) into the output directory. host-default
    # describes one particular host and would compare that host with this one.
    sets = list(args.sets)
    if not any(s.split("=", 1)[0].strip() == "machine" for s in sets):
        if any(m.get("name") == "host" for m in api.catalog().get("machines", [])):
            sets.append("machine=host")
        elif api.calibration_available():
            model = Path(args.output) / "host.json"
            model.parent.mkdir(parents=True, exist_ok=True)
            sys.stderr.write(f"semsim: no calibrated model of this host ({api.host_model_path()}); "
                             f"a quick calibration into {model} (a few seconds; `semsim calibrate` "
                             "makes the full one)\n")
            sys.stderr.flush()
            _calibrate(model, quick=True)
            sets.append(f"machine={json.dumps(os.fspath(model))}")
    _compare(os.fspath(default_scenario_path()), sets, args.output)
    return 0


def _int_list(text: str, flag: str, words: Sequence[str] = ()) -> list[Any]:
    """``1,2,4``, ``10..100:10``, ``1..64*2`` (and the given words) to a list."""
    out: list[Any] = []
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
                    out.append(value)
                    value = value * step if geometric else value + step
            else:
                out.append(int(item))
        except ValueError:
            allowed = "".join(f" or {w!r}" for w in words)
            raise UsageError(
                f"sweep: {flag} {text!r}: expected comma-separated integers{allowed}; ranges A..B, "
                "A..B:STEP, A..B*FACTOR (e.g. 1,2,4 or 10..100:10 or 1..64*2)"
            ) from None
    if not out:
        raise UsageError(f"sweep: {flag}: no values given")
    return out


def _name_list(values: Sequence[str] | None) -> list[Any] | None:
    if not values:
        return None
    out: list[Any] = []
    for value in values:
        if value.lstrip().startswith("{"):
            try:
                out.append(json.loads(value))
            except ValueError as exc:
                raise UsageError(f"sweep: kernel object {value!r}: malformed JSON: {exc}") from None
            continue
        out.extend(part.strip() for part in value.split(",") if part.strip())
    return out or None


def _positive(text: str | None, flag: str) -> int | None:
    if text is None:
        return None
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise UsageError(f"sweep: {flag} {text!r}: expected an integer >= 1")
    return value


def _frame_csv(result: api.Result) -> str:
    frame = result.to_frame()
    for column in frame.columns:
        if frame[column].dtype == object and frame[column].map(lambda v: isinstance(v, (list, dict))).any():
            frame[column] = frame[column].map(
                lambda v: json.dumps(v, separators=(",", ":"), sort_keys=True) if isinstance(v, (list, dict)) else v)
    return frame.to_csv(index=False, lineterminator="\n")


def _cmd_sweep(args: argparse.Namespace) -> int:
    from .sweeps import SEMAPHORES_PER_THREAD, sweep

    threads = _int_list(args.threads, "--threads") if args.threads is not None else None
    semaphores = (_int_list(args.semaphores, "--semaphores", (SEMAPHORES_PER_THREAD,))
                  if args.semaphores is not None else None)
    executor = args.executor
    if executor not in ("process", "dask") and ":" not in executor:
        raise UsageError(f"sweep: --executor {executor!r}: expected 'process', 'dask' or a Dask scheduler "
                         "address such as tcp://host:8786")
    result = sweep(
        args.scenario, sets=args.sets, threads=threads, kernel=_name_list(args.kernel),
        machine=_name_list(args.machine), semaphores=semaphores, repeats=_positive(args.repeats, "--repeats"),
        executor=executor, max_workers=_positive(args.workers, "--workers"), progress=not args.no_progress,
    )
    if args.output and args.output.lower().endswith(".csv"):
        path = Path(args.output)
        if path.parent != Path(""):
            path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_frame_csv(result), encoding="utf-8")
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
    path = args.output or api.host_model_path()
    _calibrate(path, args.quick)
    print(f"wrote {path}")
    return 0


def _cmd_list(args: argparse.Namespace) -> int:
    cat = api.catalog()
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


def _cmd_validate(args: argparse.Namespace) -> int:
    # Every check run and native make (the machine's matrices and the native runner's
    # limits included); this host's limits alone do not make the scenario bad.
    scenario, note = api._validate(args.scenario, args.sets)
    name = scenario.get('name') or Path(args.scenario).stem
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
    name = args.name
    if name is None and args.output:
        stem = Path(args.output).stem
        name = stem if mi._NAME_RE.match(stem) else None
    model = mi.import_matrix(
        args.matrix, args.format, ghz=args.ghz, name=name, description=args.description,
        costs_from=args.costs_from or mi.DEFAULT_COSTS_FROM, gap=mi.DEFAULT_GAP if args.gap is None else args.gap,
        smt=None if args.smt is None else args.smt == "yes", sockets=args.sockets, topology=topology,
        numbering=args.numbering, drop_smt=args.drop_smt, note=args.note)
    text = mi.dump(model)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
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
    "reproduce": cli_extra.cmd_reproduce,
    "bench": cli_extra.cmd_bench,
    "diff": cli_views.cmd_diff,
    "list": _cmd_list,
    "validate": _cmd_validate,
    "machine": _cmd_machine,
}


def _run(argv: Sequence[str] | None) -> int:
    parser = build_parser()
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
    except BaseException as exc:  # noqa: BLE001 - every failure becomes one line
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
