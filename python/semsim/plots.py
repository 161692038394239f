"""Plots with matplotlib, without touching pyplot's global state.

Each helper draws into ``ax`` when given one (a notebook's ``plt.subplots()``),
else into a new standalone :class:`~matplotlib.figure.Figure`, which
``savefig`` renders with Agg whatever the session's backend is.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from .compare import Comparison


def _axes(ax: Axes | None) -> tuple[Figure, Axes]:
    if ax is not None:
        return ax.figure, ax
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.0, 4.5), layout="constrained")
    return fig, fig.add_subplot()


def _threads_axis(ax: Axes, threads: Iterable[float]) -> None:
    values = sorted({float(t) for t in threads if t})
    if values and values[-1] / values[0] >= 4:
        ax.set_xscale("log", base=2)
        ax.set_xticks(values, [f"{v:g}" for v in values])
        ax.minorticks_off()
    ax.set_xlabel("threads")


def plot_compare(comparison: Comparison | Iterable[Mapping[str, Any]], ax: Axes | None = None,
                 title: str | None = None) -> Figure:
    """Predicted ops/s (line) and measured ops/s (median, with a min..max bar) against threads.

    ``comparison`` is a :class:`semsim.Comparison` or its rows (dicts with
    ``threads``, ``predicted_ops_per_s``, ``measured_ops_per_s``,
    ``measured_min_ops_per_s``, ``measured_max_ops_per_s``).
    """
    rows = list(getattr(comparison, "rows", comparison))
    fig, ax = _axes(ax)
    threads = [r["threads"] for r in rows]
    pred = [(r["threads"], r["predicted_ops_per_s"]) for r in rows if r.get("predicted_ops_per_s") is not None]
    meas = [r for r in rows if r.get("measured_ops_per_s") is not None]
    if pred:
        ax.plot([t for t, _ in pred], [v for _, v in pred], "o-", label="predicted (simulated)")
    if meas:
        x = [r["threads"] for r in meas]
        y = [r["measured_ops_per_s"] for r in meas]
        lo = [max(0.0, r["measured_ops_per_s"] - (r.get("measured_min_ops_per_s") or r["measured_ops_per_s"])) for r in meas]
        hi = [max(0.0, (r.get("measured_max_ops_per_s") or r["measured_ops_per_s"]) - r["measured_ops_per_s"]) for r in meas]
        ax.errorbar(x, y, yerr=[lo, hi], fmt="s--", capsize=4, label="measured on this host (min..max)")
    _threads_axis(ax, threads)
    from matplotlib.ticker import EngFormatter

    ax.set_ylabel("semop() calls per second")
    ax.yaxis.set_major_formatter(EngFormatter())
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend()
    if title is None and hasattr(comparison, "scenario"):
        sc = comparison.scenario  # type: ignore[union-attr]
        host = getattr(comparison, "measured").doc.get("host", {})  # type: ignore[union-attr]
        kernel = rows[0]["kernel"] if rows else sc.get("kernel")
        title = (f"{sc.get('name', 'scenario')}: {sc.get('workload', {}).get('type', '')}, kernel {kernel} "
                 f"on model {sc.get('machine')}\nvs. host ({host.get('cpus', '?')} CPUs, "
                 f"Linux {host.get('kernel_release', '?')})")
    if title:
        ax.set_title(title, fontsize=10)
    return fig
