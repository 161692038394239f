"""Predicted against measured: the same scenario simulated and run natively."""

from __future__ import annotations

import json
import math
import os
import re
import statistics
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .api import (
    CalibrationUnavailable,
    InputError,
    Result,
    ScenarioLike,
    SimulationError,
    check_jobs,
    check_output_dir,
    check_output_file,
    host_model_path,
    kernel_label,
    load_native_scenario,
    load_scenario,
    machine_info,
    measure,
    ops_interval,
    precision_note,
    simulate,
    write_file,
)
from .progress import Status, status_for

_kernel_label = kernel_label

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


def _number(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


#: A measured point whose CPUs were this busy with other processes during its window
#: (``foreign_cpu_share`` of the native runner: the host's busy time from /proc/stat
#: minus the runner's own tasks, over the CPUs' capacity) measured the host's other
#: load too. 0.15 is three times the tick-sampling error of a 200 ms window on 2 CPUs.
HOST_BUSY_SHARE = 0.15
#: A point whose measured repeats span more than this factor (max / min) is unstable:
#: the host ran it in different modes from one repeat to the next (two tasks on one CPU
#: in one run, on two in another), so its median is whichever mode two runs agreed on.
UNSTABLE_SPREAD = 2.0


#: The host has drifted from its calibration when a quick re-run of two probes (the
#: cache-line transfer between CPUs, the uncontended semop check) lies outside what
#: the calibration itself measured (its repeats' min..max) by more than this. On a VM
#: the host moves the vCPUs and shares their cores: on the 2-vCPU test host the quick
#: transfer read 34-46 ns in one mode (calibrated 36.8, repeats 35.0..40.3) and 160-179
#: ns in another, minutes apart, and the semop check 424-439 ns, then 555-593 ns
#: (calibrated 424, repeats 423..438); the check is an indication (it can miss a drift
#: or flag a passing one).
HOST_DRIFT_LIMIT = 0.25

_LATENCY_CLASSES = ("same_die", "smt", "same_socket", "one_hop", "two_hops")


def _probe_values(model: Mapping[str, Any]) -> dict[str, tuple[float, float, float]]:
    """The drift-checked figures of a calibrated model, as (value, min, max) in ns: the
    line ping-pong's one-way time of the nearest class the model has (the median of its
    pairs' medians in ``provenance.probes.line_pingpong``, with their repeats' range: the
    probe, which the host check re-runs, not the model's transfer derived from it), and
    the semop check (``provenance.checks``). A model without the probe's record (the host
    check's own figures): its ``latency_ns`` value, as (v, v, v)."""
    out: dict[str, tuple[float, float, float]] = {}
    lat = model.get("latency_ns", {})
    provenance = model.get("provenance", {})
    provenance = provenance if isinstance(provenance, Mapping) else {}
    for cls in _LATENCY_CLASSES:
        v = _number(lat.get(cls, {}).get("value")) if isinstance(lat.get(cls), Mapping) else None
        if v:
            medians: list[float] = []
            ends: list[float] = []
            pairs = provenance.get("probes", {}).get("line_pingpong", [])
            for pair in pairs if isinstance(pairs, list) else []:
                one_way = pair.get("one_way_ns", {}) if isinstance(pair, Mapping) else {}
                median = _number(one_way.get("median")) if isinstance(one_way, Mapping) else None
                if pair.get("class") == cls and median:
                    medians.append(median)
                    ends += [_number(one_way.get("min")) or median, _number(one_way.get("max")) or median]
            if medians:
                v = statistics.median(medians)
            lo, hi = min([v, *ends]), max([v, *ends])
            out["transfer_ns"] = (v, lo, hi)
            break
    check = provenance.get("checks", {}).get("semop_uncontended_ns", {})
    v = _number(check.get("median")) if isinstance(check, Mapping) else None
    if v:
        lo = min(v, _number(check.get("min")) or v)
        hi = max(v, _number(check.get("max")) or v)
        out["semop_ns"] = (v, lo, hi)
    return out


def drift_between(calibrated: Mapping[str, Any], now: Mapping[str, Any]) -> dict[str, Any]:
    """Compares a fresh (quick) calibration with the calibrated model the prediction used.

    Returns ``{"<figure>": {"calibrated": x, "calibrated_min": lo, "calibrated_max": hi,
    "now": y, "change_pct": z, "outside_pct": w},
    ..., "drift_pct": largest |outside|, "drifted": drift above HOST_DRIFT_LIMIT}`` over
    the figures both models have (the cache-line transfer latency and the uncontended
    semop check). ``change_pct`` is against the calibrated value; ``outside_pct`` how
    far the figure lies outside the calibration's own min..max (0 inside it), which is
    what the verdict uses: a figure within the spread the calibration measured has not
    drifted.
    """
    cal, cur = _probe_values(calibrated), _probe_values(now)
    out: dict[str, Any] = {}
    worst = 0.0
    for key in sorted(set(cal) & set(cur)):
        value, lo, hi = cal[key]
        x = cur[key][0]
        change = (x - value) / value * 100.0
        outside = (x - hi) / hi * 100.0 if x > hi else (x - lo) / lo * 100.0 if x < lo else 0.0
        out[key] = {"calibrated": value, "calibrated_min": lo, "calibrated_max": hi, "now": x,
                    "change_pct": change, "outside_pct": outside}
        worst = max(worst, abs(outside))
    out["drift_pct"] = worst
    out["drifted"] = worst > HOST_DRIFT_LIMIT * 100.0
    return out


#: A new calibration whose line transfer or semop check differs from the previous
#: calibration's by more than this factor is reported: on the 2-vCPU test host the
#: transfer read 39.8 ns one way at 20:58 and 186.8 ns two minutes earlier
#: (validation/host-accuracy.md, twentieth stop), the vCPUs' other placement.
CALIBRATION_CHANGE_FACTOR = 1.5

_FIGURE_NAMES = {"transfer_ns": "the cache-line transfer (line_pingpong, one way)",
                 "semop_ns": "the uncontended semop check"}


def calibration_changes(previous: Mapping[str, Any] | None, new: Mapping[str, Any]) -> list[str]:
    """One line per drift-checked figure (the line ping-pong's one-way time, the semop
    check) that a new calibration measured more than CALIBRATION_CHANGE_FACTOR away from
    the previous calibration's; empty without a previous model or a shared figure."""
    if not isinstance(previous, Mapping):
        return []
    before, now = _probe_values(previous), _probe_values(new)
    when = previous.get("provenance", {}).get("date", "") if isinstance(previous.get("provenance"), Mapping) else ""
    out = []
    for key in sorted(set(before) & set(now)):
        old, x = before[key][0], now[key][0]
        if old > 0 and x > 0 and max(x / old, old / x) > CALIBRATION_CHANGE_FACTOR:
            out.append(f"{_FIGURE_NAMES.get(key, key)} measured {x:.1f} ns, {x / old:.2g} x the previous "
                       f"calibration's {old:.1f} ns{f' ({when})' if when else ''}: the host may have moved "
                       "(on a VM, another placement of its vCPUs); the model follows what was measured now, "
                       "calibrate again later to check")
    return out


def host_drift(calibrated: Mapping[str, Any]) -> dict[str, Any]:
    """Re-runs the host check's two quick probes and compares them with ``calibrated``.

    The check (sim/calibrate/host_check.hpp, ``semsim._core.host_check``) runs the
    cache-line transfer over every pair of CPUs and the uncontended semop, the quick
    way, reduced as the calibration reduces them: a fraction of a second, where the
    whole quick calibration it used to run took about 4 s on the 2-vCPU test host.
    """
    from .api import _require_core

    core = _require_core()
    if not hasattr(core, "host_check"):
        raise CalibrationUnavailable("host check: this build of semsim has no calibration probes "
                                     "(semsim._core.host_check is missing)")
    now = json.loads(core.host_check())
    model = {"latency_ns": {cls: {"value": ns} for cls, ns in now.get("latency_ns", {}).items()},
             "provenance": {"checks": {"semop_uncontended_ns": {"median": now["semop_ns"]}}}}
    return drift_between(calibrated, model)


def combine_checks(before: Mapping[str, Any] | None,
                   after: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """One host check from the checks before and after measuring: the figures of the
    check before, with the check after under ``"after"``; ``drift_pct`` the larger of
    the two and ``drifted`` when either drifted (a host that moved during the
    measurement is caught by the check after it). None when neither ran."""
    if before is None and after is None:
        return None
    if before is None:
        return {**dict(after or {}), "before_missing": True}
    out = dict(before)
    if after is not None:
        out["after"] = dict(after)
        out["drift_pct"] = max(float(before.get("drift_pct", 0.0)), float(after.get("drift_pct", 0.0)))
        out["drifted"] = bool(before.get("drifted")) or bool(after.get("drifted"))
    return out


def match_points(simulated: Result, measured: Result) -> list[dict[str, Any]]:
    """Pairs each simulated point with the measured point of the same thread count.

    ``error_pct`` is (predicted - measured) / measured in percent, against the
    median of the measured runs; ``exceeds_spread`` is true when the prediction
    lies outside the measured runs' [min, max]. ``predicted_min_ops_per_s`` and
    ``predicted_max_ops_per_s`` are the simulated spread over the seeds;
    ``predicted_ci95`` is the point's 95 % interval of ``ops_per_s`` (the mean of
    its seeds), pooled over its runs (:func:`semsim.api.ops_interval`), None where
    there is none; ``predicted_not_reached`` says why the point's asked precision
    was not reached (:func:`semsim.api.precision_note`), None where it was.
    ``foreign_cpu_share`` is what other processes used of the host's CPUs during
    the measured window (None where the runner could not tell) and ``host_busy``
    is true when it exceeds :data:`HOST_BUSY_SHARE`: such a point measured the
    host's other load as well as the workload. ``measured_unstable`` is true when
    the measured runs span more than :data:`UNSTABLE_SPREAD` (max / min).
    """
    unused = list(measured.points)
    rows: list[dict[str, Any]] = []
    for sp in simulated.points:
        mp = next((p for p in unused if p.get("threads") == sp.get("threads")), None)
        if mp is not None:
            unused.remove(mp)
        predicted = _number(sp.get("ops_per_s"))
        pred_lo = _number(sp.get("ops_per_s_min", predicted))
        pred_hi = _number(sp.get("ops_per_s_max", predicted))
        meas = _number(mp.get("ops_per_s")) if mp else None
        lo = _number(mp.get("ops_per_s_min", meas)) if mp else None
        hi = _number(mp.get("ops_per_s_max", meas)) if mp else None
        error = None
        if predicted is not None and meas:
            error = (predicted - meas) / meas * 100.0
        exceeds = None
        if predicted is not None and lo is not None and hi is not None:
            exceeds = predicted < lo or predicted > hi
        foreign = _number(mp.get("foreign_cpu_share")) if mp else None
        rows.append(
            {
                "threads": sp.get("threads"),
                "kernel": _kernel_label(sp.get("kernel")),
                "machine": sp.get("machine"),
                "predicted_ops_per_s": predicted,
                "predicted_min_ops_per_s": pred_lo,
                "predicted_max_ops_per_s": pred_hi,
                "predicted_ci95": ops_interval(sp),
                "predicted_not_reached": precision_note(sp),
                "measured_ops_per_s": meas,
                "measured_min_ops_per_s": lo,
                "measured_max_ops_per_s": hi,
                "error_pct": error,
                "exceeds_spread": exceeds,
                "foreign_cpu_share": foreign,
                "host_busy": None if foreign is None else foreign > HOST_BUSY_SHARE,
                "measured_unstable": None if not lo or hi is None else hi / lo > UNSTABLE_SPREAD,
            }
        )
    return rows


def _fmt_ops(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


class Comparison:
    """A scenario's prediction next to its measurement on this host, point by point."""

    def __init__(self, simulated: Result, measured: Result,
                 host_check: Mapping[str, Any] | None = None) -> None:
        self.simulated = simulated
        self.measured = measured
        self.rows = match_points(simulated, measured)
        #: drift_between() of the calibrated model and the host just before measuring,
        #: with the check just after it under "after" (combine_checks()), where the
        #: prediction used the calibrated host model; None otherwise.
        self.host_check = dict(host_check) if host_check is not None else None
        if self.host_check is not None:
            for r in self.rows:
                r["host_drifted"] = bool(self.host_check.get("drifted"))

    @property
    def scenario(self) -> dict[str, Any]:
        return self.simulated.scenario

    @property
    def name(self) -> str:
        return str(self.scenario.get("name") or "scenario")

    def to_doc(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "points": self.rows,
            "host_check": self.host_check,
            "simulated": self.simulated.doc,
            "measured": self.measured.doc,
        }

    def to_json(self, path: str | os.PathLike | None = None) -> str:
        text = json.dumps(self.to_doc(), indent=2) + "\n"
        if path is not None:
            write_file(check_output_file(path, "Comparison.to_json: path"), text, "Comparison.to_json: path")
        return text

    def to_frame(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(self.rows)

    def table(self) -> str:
        """The human table: point | predicted | measured (min..max) | error % | exceeds spread? | host busy

        The last column is the share of the CPUs other processes used while the
        point was measured, marked "busy" above :data:`HOST_BUSY_SHARE`; "unstable"
        beside the spread marks repeats more than :data:`UNSTABLE_SPREAD` apart.
        """
        header = ["point", "predicted ops/s", "measured ops/s (min..max)", "error %", "exceeds spread?", "host busy"]
        lines = []
        for r in self.rows:
            measured = _fmt_ops(r["measured_ops_per_s"])
            if r["measured_min_ops_per_s"] is not None:
                measured += (
                    f" ({_fmt_ops(r['measured_min_ops_per_s'])}.."
                    f"{_fmt_ops(r['measured_max_ops_per_s'])})"
                )
            error = "-" if r["error_pct"] is None else f"{r['error_pct']:+.1f}"
            exceeds = {True: "yes", False: "no", None: "-"}[r["exceeds_spread"]]
            if r.get("measured_unstable"):
                exceeds += ", unstable"
            foreign = r.get("foreign_cpu_share")
            busy = "-" if foreign is None else f"{foreign:.2f}" + (" busy" if r.get("host_busy") else "")
            predicted = _fmt_ops(r["predicted_ops_per_s"])
            ci = r.get("predicted_ci95")
            if ci and r["predicted_ops_per_s"]:  # the point's 95 % interval (pooled over its seeds), as +-%
                predicted += f" +-{50 * (ci[1] - ci[0]) / r['predicted_ops_per_s']:.1f}%"
            lines.append([f"{r['threads']} threads", predicted, measured, error, exceeds, busy])
        widths = [max(len(row[i]) for row in [header, *lines]) for i in range(len(header))]

        def fmt(row: list[str]) -> str:
            cells = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:])]
            return " | ".join(cells).rstrip()

        sep = "-+-".join("-" * w for w in widths)
        notes = [f"{r['threads']} threads: predicted precision not reached: {r['predicted_not_reached']}"
                 for r in self.rows if r.get("predicted_not_reached")]
        return "\n".join([fmt(header), sep, *(fmt(r) for r in lines), *notes])

    def plot(self, path: str | os.PathLike | None = None, ax: Axes | None = None) -> Figure:
        """Predicted and measured ops/s against threads (see :func:`semsim.plots.plot_compare`)."""
        from .plots import plot_compare

        out = check_output_file(path, "Comparison.plot: path") if path is not None else None
        fig = plot_compare(self, ax=ax)
        if out is not None:
            try:
                out.parent.mkdir(parents=True, exist_ok=True)
                fig.savefig(os.fspath(out), dpi=120)
            except OSError as exc:
                raise InputError(f"Comparison.plot: path {out}: {exc.strerror or exc}") from None
            except ValueError as exc:  # a suffix matplotlib has no writer for
                raise InputError(f"Comparison.plot: path {out}: {exc}") from None
        return fig

    def write(self, out_dir: str | os.PathLike) -> tuple[Path, Path]:
        """Writes ``compare.json`` and ``<scenario name>.png`` into ``out_dir``; returns both paths."""
        out = check_output_dir(out_dir, "Comparison.write: out_dir")
        json_path = out / "compare.json"
        png_path = out / f"{safe_filename(self.name)}.png"
        self.to_json(json_path)
        self.plot(png_path)
        return json_path, png_path

    def __repr__(self) -> str:
        return f"<semsim.Comparison {self.name!r}: {len(self.rows)} points>"


def safe_filename(name: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._")
    return cleaned or "scenario"


def host_busy_share(seconds: float = 0.3) -> float | None:
    """The share of this host's CPUs that were busy over the next ``seconds`` (/proc/stat),
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


def warn_if_busy(status: Status, before: str) -> None:
    """Warns, before measuring, when other processes already keep the CPUs busy."""
    busy = host_busy_share()
    if busy is not None and busy > HOST_BUSY_SHARE:
        status.warn(f"this host is busy before {before} (other processes use {busy:.0%} of its CPUs): the "
                    "figures will include their load; measure on a quiet host")


def accuracy(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Median and max |error| and the counts within 15 % and 35 % over the rows that have an error."""
    errors = sorted(abs(r["error_pct"]) for r in rows if r.get("error_pct") is not None)
    out: dict[str, Any] = {"compared": len(errors)}
    if errors:
        mid = len(errors) // 2
        median = errors[mid] if len(errors) % 2 else (errors[mid - 1] + errors[mid]) / 2
        out.update(median_abs_error_pct=median, max_abs_error_pct=errors[-1],
                   within_15_pct=sum(e <= 15 for e in errors), within_35_pct=sum(e <= 35 for e in errors))
    return out


class ComparisonSet:
    """Several scenarios compared (``semsim compare A.json B.json ...``): each
    :class:`Comparison`, and the accuracy summary over every point."""

    def __init__(self, comparisons: Sequence[Comparison]) -> None:
        self.comparisons = list(comparisons)
        #: Every point of every comparison, with its scenario's name as ``scenario``.
        self.rows = [dict(row, scenario=c.name) for c in self.comparisons for row in c.rows]

    @property
    def summary(self) -> dict[str, Any]:
        """``points``, the accuracy over them (:func:`accuracy`), and, where there are such
        points, how many had an unknown host load (``host_load_unknown_points``), were
        measured on a busy or drifted host (``host_busy_points``, ``host_drifted_points``,
        with the accuracy without them as ``quiet``) or measured unstable
        (``unstable_points``, and ``steady``: the accuracy without them and without busy or
        drifted points)."""
        rows = self.rows
        summary: dict[str, Any] = {"points": len(rows), **accuracy(rows)}
        # Unknown is not quiet: a window too short for /proc/stat's ticks, or a workload
        # that runs to completion, says nothing about the host's other load.
        unknown = self.host_load_unknown
        if unknown:
            summary["host_load_unknown_points"] = len(unknown)
        busy, drifted = self.host_busy, self.host_drifted
        if busy or drifted:
            summary["host_busy_points"] = len(busy)
            summary["host_drifted_points"] = len(drifted)
            summary["quiet"] = accuracy([r for r in rows if not r.get("host_busy") and not r.get("host_drifted")])
        unstable = self.unstable
        if unstable:
            # The accuracy without unstable (and busy or drifted) points is the model's, not the vote's.
            summary["unstable_points"] = len(unstable)
            summary["steady"] = accuracy([r for r in rows if not (r.get("measured_unstable") or r.get("host_busy")
                                                                  or r.get("host_drifted"))])
        return summary

    @property
    def host_load_unknown(self) -> list[dict[str, Any]]:
        return [r for r in self.rows if r.get("foreign_cpu_share") is None]

    @property
    def host_busy(self) -> list[dict[str, Any]]:
        return [r for r in self.rows if r.get("host_busy")]

    @property
    def host_drifted(self) -> list[dict[str, Any]]:
        return [r for r in self.rows if r.get("host_drifted")]

    @property
    def unstable(self) -> list[dict[str, Any]]:
        return [r for r in self.rows if r.get("measured_unstable")]

    def write_summary(self, out_dir: str | os.PathLike) -> Path:
        """Writes ``accuracy.json`` (``summary`` and ``rows``) into ``out_dir``; returns its path."""
        out = check_output_dir(out_dir, "ComparisonSet.write_summary: out_dir")
        path = out / "accuracy.json"
        write_file(path, json.dumps({"summary": self.summary, "rows": self.rows}, indent=2) + "\n",
                   "ComparisonSet.write_summary: out_dir")
        return path

    def write(self, out_dir: str | os.PathLike) -> Path:
        """Each comparison into ``out_dir/<scenario name>/``, then ``accuracy.json``."""
        check_output_dir(out_dir, "ComparisonSet.write: out_dir")
        for c in self.comparisons:
            c.write(Path(out_dir) / safe_filename(c.name))
        return self.write_summary(out_dir)

    def __len__(self) -> int:
        return len(self.comparisons)

    def __repr__(self) -> str:
        return f"<semsim.ComparisonSet {len(self.comparisons)} scenarios, {len(self.rows)} points>"


def _measured_seconds(scenario: Mapping[str, Any]) -> float:
    """About how long the native runner takes (the engine's defaults where the scenario
    leaves them out, sim/config/scenario.cpp)."""
    threads = scenario.get("threads")
    npoints = len(threads) if isinstance(threads, list) else 1
    return npoints * int(scenario.get("repeats", 1)) * (
        float(scenario.get("duration_ms", 20)) + float(scenario.get("warmup_ms", 2))) / 1000.0


def check_scenario(scenario: ScenarioLike, *, sets: Sequence[str] = (), **overrides: Any) -> dict[str, Any]:
    """What :func:`compare` checks before it runs anything (both sides: the simulation's
    checks and the native runner's); returns the normalized scenario or raises
    :class:`InputError`. ``semsim compare`` runs it on every scenario before the first runs."""
    normalized = load_scenario(scenario, sets=sets, **overrides)
    load_native_scenario(normalized)  # what the measurement will refuse
    return normalized


def _compare_one(scenario: ScenarioLike, sets: Sequence[str], host_check: bool, status: Status,
                 overrides: Mapping[str, Any], jobs: int | None = None) -> Comparison:
    check_jobs(jobs)  # a bad value fails before anything runs
    normalized = check_scenario(scenario, sets=sets, **overrides)
    threads = normalized.get("threads")
    npoints = len(threads) if isinstance(threads, list) else 1
    machine = normalized.get("machine")
    model = machine_info(str(machine))
    status.note(f"simulating {normalized.get('name', 'scenario')!r}: {npoints} point(s) on model {machine!r} "
                f"({model.get('file') or 'built in'}, {model.get('hash')})")
    start = time.monotonic()
    simulated = status.run(f"simulating {npoints} point(s)", simulate, normalized, jobs=jobs,
                           detail=True)
    seconds = _measured_seconds(normalized)
    status.note(f"simulated in {time.monotonic() - start:.1f} s; measuring the same workload on this host "
                f"(about {seconds:.1f} s)")
    model_path = Path(model.get("file") or host_model_path())
    calibrated: Mapping[str, Any] | None = None
    if host_check and machine == "host" and model_path.is_file():
        calibrated = json.loads(model_path.read_text(encoding="utf-8"))

    def check(when: str) -> dict[str, Any] | None:
        # Has the host moved since it was calibrated? (the quick probes, a fraction of
        # a second). A check that fails leaves the points unchecked; it does not end
        # the compare.
        if calibrated is None:
            return None
        try:
            return host_drift(calibrated)
        except (InputError, SimulationError, RuntimeError, OSError) as e:
            status.warn(f"no host check {when} measuring ({e})")
            return None

    before = check("before")
    warn_if_busy(status, "measuring")
    start = time.monotonic()
    measured = status.run(f"measuring {npoints} point(s) on this host", measure, normalized, expected_s=seconds)
    status.note(f"measured in {time.monotonic() - start:.1f} s")
    return Comparison(simulated, measured, combine_checks(before, check("after")))


def compare(scenario: ScenarioLike | Sequence[ScenarioLike], *, sets: Sequence[str] = (), host_check: bool = True,
            progress: bool | Status | None = True, jobs: int | None = None,
            **overrides: Any) -> Comparison | ComparisonSet:
    """Simulates the scenario and measures it on this host; pairs the points.

    What ``semsim compare`` does: the scenario is checked for both sides before anything
    runs; with the calibrated host model (machine ``"host"``) and ``host_check``, the
    host check (two quick probes, :func:`host_drift`) tells before and after measuring
    whether the host has drifted from its calibration (the points are then marked
    ``host_drifted``); a busy host is warned of before measuring.
    ``progress`` (default True) writes what happens to stderr, as the CLI does (a live
    line only on a terminal); False for silence. ``jobs``: simulated runs at once (as
    :func:`semsim.simulate`; default one per CPU).

    A list of scenarios gives a :class:`ComparisonSet`: each comparison and the accuracy
    summary over every point (``.summary``).

    >>> c = semsim.compare("scenarios/default.json", sets=["threads=[1,2]", "machine=host-default"])
    >>> print(c.table())
    """
    status = status_for(progress)
    if isinstance(scenario, (list, tuple)):
        check_jobs(jobs)
        for one in scenario:  # every scenario checked before the first is simulated or measured
            check_scenario(one, sets=sets, **overrides)
        return ComparisonSet([_compare_one(s, sets, host_check, status, overrides, jobs) for s in scenario])
    return _compare_one(scenario, sets, host_check, status, overrides, jobs)
