"""Predicted against measured: the same scenario simulated and run natively."""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .api import Result, ScenarioLike, kernel_label, load_scenario, measure, ops_interval, simulate

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
#: cache-line transfer between CPUs, the uncontended semop check) differs from the
#: calibrated value by more than this. On a VM the host moves the vCPUs and shares
#: their cores: on the 2-vCPU test host the transfer switched between about 57 and
#: 85-95 ns from one quick run to the next, and the semop check between 118 and 165 ns,
#: so the check is an indication (it can miss a drift or flag a passing one).
HOST_DRIFT_LIMIT = 0.25

_LATENCY_CLASSES = ("same_die", "smt", "same_socket", "one_hop", "two_hops")


def _probe_values(model: Mapping[str, Any]) -> dict[str, float]:
    """The drift-checked figures of a calibrated model: transfer latency and semop check (ns)."""
    out: dict[str, float] = {}
    lat = model.get("latency_ns", {})
    for cls in _LATENCY_CLASSES:
        v = _number(lat.get(cls, {}).get("value")) if isinstance(lat.get(cls), Mapping) else None
        if v:
            out["transfer_ns"] = v
            break
    check = model.get("provenance", {}).get("checks", {}).get("semop_uncontended_ns", {})
    v = _number(check.get("median")) if isinstance(check, Mapping) else None
    if v:
        out["semop_ns"] = v
    return out


def drift_between(calibrated: Mapping[str, Any], now: Mapping[str, Any]) -> dict[str, Any]:
    """Compares a fresh (quick) calibration with the calibrated model the prediction used.

    Returns ``{"<figure>": {"calibrated": x, "now": y, "change_pct": z}, ...,
    "drift_pct": largest |change|, "drifted": drift above HOST_DRIFT_LIMIT}`` over the
    figures both models have (the cache-line transfer latency and the uncontended
    semop check).
    """
    cal, cur = _probe_values(calibrated), _probe_values(now)
    out: dict[str, Any] = {}
    worst = 0.0
    for key in sorted(set(cal) & set(cur)):
        change = (cur[key] - cal[key]) / cal[key] * 100.0
        out[key] = {"calibrated": cal[key], "now": cur[key], "change_pct": change}
        worst = max(worst, abs(change))
    out["drift_pct"] = worst
    out["drifted"] = worst > HOST_DRIFT_LIMIT * 100.0
    return out


def host_drift(calibrated: Mapping[str, Any]) -> dict[str, Any]:
    """Re-runs the quick calibration probes (a few seconds) and compares them with ``calibrated``."""
    import tempfile

    from .api import calibrate

    with tempfile.TemporaryDirectory() as tmp:
        now = calibrate(Path(tmp) / "check.json", quick=True)
    return drift_between(calibrated, now)


def match_points(simulated: Result, measured: Result) -> list[dict[str, Any]]:
    """Pairs each simulated point with the measured point of the same thread count.

    ``error_pct`` is (predicted - measured) / measured in percent, against the
    median of the measured runs; ``exceeds_spread`` is true when the prediction
    lies outside the measured runs' [min, max]. ``predicted_min_ops_per_s`` and
    ``predicted_max_ops_per_s`` are the simulated spread over the seeds;
    ``predicted_ci95`` is the reported run's 95 % interval of ``ops_per_s``
    (:func:`semsim.api.ops_interval`), None where there is none.
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
        #: where the prediction used the calibrated host model; None otherwise.
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
            Path(path).write_text(text, encoding="utf-8")
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
            if ci and r["predicted_ops_per_s"]:  # the simulated run's 95 % interval, as +-%
                predicted += f" +-{50 * (ci[1] - ci[0]) / r['predicted_ops_per_s']:.1f}%"
            lines.append([f"{r['threads']} threads", predicted, measured, error, exceeds, busy])
        widths = [max(len(row[i]) for row in [header, *lines]) for i in range(len(header))]

        def fmt(row: list[str]) -> str:
            cells = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:])]
            return " | ".join(cells).rstrip()

        sep = "-+-".join("-" * w for w in widths)
        return "\n".join([fmt(header), sep, *(fmt(r) for r in lines)])

    def plot(self, path: str | os.PathLike | None = None, ax: Axes | None = None) -> Figure:
        """Predicted and measured ops/s against threads (see :func:`semsim.plots.plot_compare`)."""
        from .plots import plot_compare

        fig = plot_compare(self, ax=ax)
        if path is not None:
            fig.savefig(os.fspath(path), dpi=120)
        return fig

    def write(self, out_dir: str | os.PathLike) -> tuple[Path, Path]:
        """Writes ``compare.json`` and ``<scenario name>.png`` into ``out_dir``; returns both paths."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
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


def compare(scenario: ScenarioLike, **overrides: Any) -> Comparison:
    """Simulates the scenario and measures it on this host; pairs the points."""
    normalized = load_scenario(scenario, **overrides)
    return Comparison(simulate(normalized), measure(normalized))
