"""Plots with matplotlib, without touching pyplot's global state.

Each helper draws into ``ax`` when given one (a notebook's ``plt.subplots()``),
else into a new standalone :class:`~matplotlib.figure.Figure`, which
``savefig`` renders with Agg whatever the session's backend is.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Union

from .api import CPU_CATEGORIES, InputError, Result, check_int

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from .compare import Comparison

#: What the helpers take: a Result (simulate, measure, sweep), several, or a
#: DataFrame from ``Result.to_frame()`` (several concatenated).
ResultData = Union[Result, Iterable[Result], "pd.DataFrame"]


def _axes(ax: Axes | None) -> tuple[Figure, Axes]:
    if ax is not None:
        return ax.figure, ax
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.0, 4.5), layout="constrained")
    return fig, fig.add_subplot()


def _facets(n: int, ax: Axes | None, what: str, width: float = 4.2, height: float = 3.6,
            sharey: bool = True) -> tuple[Figure, list[Axes]]:
    """``n`` side-by-side axes in a new figure (at most 3 per row), or ``ax`` when n == 1."""
    if ax is not None:
        if n > 1:
            raise InputError(f"{what}: {n} panels to draw but one ax given; pass ax=None or one group's data")
        return ax.figure, [ax]
    from matplotlib.figure import Figure

    cols = min(max(n, 1), 3)
    rows = (max(n, 1) + cols - 1) // cols
    fig = Figure(figsize=(width * cols + 1.0, height * rows + 0.6), layout="constrained")
    grid = fig.subplots(rows, cols, squeeze=False, sharey=sharey)
    axes = [a for row in grid for a in row]
    for extra in axes[n:]:
        extra.set_visible(False)
    return fig, axes[: max(n, 1)]


def _name(value: Any, what: str) -> str:
    """A column or metric name argument."""
    if not isinstance(value, str) or not value:
        raise InputError(f"{what}: expected a column name (a non-empty string), got {value!r}")
    return value


def _names(value: Any, what: str) -> list[str]:
    """One column name, or a list of them."""
    if isinstance(value, str):
        return [_name(value, what)]
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) and v for v in value):
        return list(value)
    raise InputError(f"{what}: expected a column name or a list of them, got {value!r}")


def _comparison_rows(comparison: Any) -> list[Mapping[str, Any]]:
    """A Comparison's rows, or rows given as dicts with a numeric ``threads``."""
    rows = getattr(comparison, "rows", comparison)
    if isinstance(rows, (str, bytes, Mapping)) or not isinstance(rows, Iterable):
        raise InputError("plot_compare: comparison: expected a semsim.Comparison or a list of its rows "
                         f"(dicts with threads, predicted_ops_per_s, ...), not {type(comparison).__name__}")
    rows = list(rows)
    for row in rows:
        if (not isinstance(row, Mapping) or isinstance(row.get("threads"), bool)
                or not isinstance(row.get("threads"), numbers.Real)):
            raise InputError(f"plot_compare: comparison: a row is not a dict with a numeric threads: {row!r}"[:200])
    return rows


def _results(data: ResultData, what: str = "data") -> list[Result]:
    if isinstance(data, Result):
        return [data]
    if hasattr(data, "columns"):
        raise InputError(f"{what}: this helper needs Result objects (their nested data), not a DataFrame")
    if isinstance(data, (str, bytes, Mapping)) or not isinstance(data, Iterable):
        raise InputError(f"{what}: expected a semsim.Result, a list of them or a DataFrame from to_frame(), "
                         f"not {type(data).__name__}")
    out = list(data)
    for item in out:
        if not isinstance(item, Result):
            raise InputError(f"{what}: expected semsim.Result objects, got {type(item).__name__}")
    return out


def to_frame(data: ResultData, what: str = "data") -> pd.DataFrame:
    """A DataFrame from a Result, several Results (concatenated) or a DataFrame (as is)."""
    import pandas as pd

    if hasattr(data, "columns"):
        return data  # type: ignore[return-value]
    frames = [r.to_frame() for r in _results(data, what)]
    if not frames:
        return pd.DataFrame()
    return frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)


def _sorted_unique(values: Iterable[Any]) -> list[Any]:
    seen: list[Any] = []
    for v in values:
        if v not in seen:
            seen.append(v)
    return seen


def _ops_formatter(ax: Axes) -> None:
    from matplotlib.ticker import EngFormatter

    ax.yaxis.set_major_formatter(EngFormatter())


def _threads_axis(ax: Axes, threads: Iterable[float]) -> None:
    values = sorted({float(t) for t in threads if t})
    if values and values[-1] / values[0] >= 4:
        ax.set_xscale("log", base=2)
        ax.set_xticks(values, [f"{v:g}" for v in values])
        ax.minorticks_off()
    ax.set_xlabel("threads")


def plot_compare(comparison: Comparison | Iterable[Mapping[str, Any]], ax: Axes | None = None,
                 title: str | None = None, band: bool = True, error_panel: bool = False) -> Figure:
    """Predicted against measured ops/s over threads, with the spreads as bands.

    The measured median is drawn with its min..max over the runs as a bar and (with
    ``band``) a shaded band; the prediction with its spread over the seeds as a
    lighter band. ``error_panel`` (only with ``ax=None``) adds a second panel: the
    error in percent per point, over the band where a prediction would lie within
    the measured spread.

    ``comparison`` is a :class:`semsim.Comparison` or its rows (dicts with
    ``threads``, ``predicted_ops_per_s``, ``measured_ops_per_s``,
    ``measured_min_ops_per_s``, ``measured_max_ops_per_s`` and optionally
    ``predicted_min_ops_per_s``, ``predicted_max_ops_per_s``).
    """
    rows = sorted(_comparison_rows(comparison), key=lambda r: r["threads"])
    if error_panel and ax is None:
        from matplotlib.figure import Figure

        fig = Figure(figsize=(7.0, 6.5), layout="constrained")
        ax, err_ax = fig.subplots(2, 1, sharex=True, height_ratios=[2, 1])
    else:
        fig, ax = _axes(ax)
        err_ax = None
    threads = [r["threads"] for r in rows]
    pred = [r for r in rows if r.get("predicted_ops_per_s") is not None]
    meas = [r for r in rows if r.get("measured_ops_per_s") is not None]
    if pred:
        x = [r["threads"] for r in pred]
        (line,) = ax.plot(x, [r["predicted_ops_per_s"] for r in pred], "o-", label="predicted (simulated)")
        if band and any(r.get("predicted_min_ops_per_s") is not None for r in pred):
            lo = [r.get("predicted_min_ops_per_s") or r["predicted_ops_per_s"] for r in pred]
            hi = [r.get("predicted_max_ops_per_s") or r["predicted_ops_per_s"] for r in pred]
            if any(h > low for low, h in zip(lo, hi)):
                ax.fill_between(x, lo, hi, color=line.get_color(), alpha=0.15, linewidth=0,
                                label="predicted spread (seeds)")
    if meas:
        x = [r["threads"] for r in meas]
        y = [r["measured_ops_per_s"] for r in meas]
        lo = [r.get("measured_min_ops_per_s") or r["measured_ops_per_s"] for r in meas]
        hi = [r.get("measured_max_ops_per_s") or r["measured_ops_per_s"] for r in meas]
        yerr = [[max(0.0, v - low) for v, low in zip(y, lo)], [max(0.0, h - v) for v, h in zip(y, hi)]]
        container = ax.errorbar(x, y, yerr=yerr, fmt="s--", capsize=4, label="measured on this host (min..max)")
        if band and len(meas) > 1:
            ax.fill_between(x, lo, hi, color=container[0].get_color(), alpha=0.2, linewidth=0)
    _threads_axis(ax, threads)
    ax.set_ylabel("semop() calls per second")
    _ops_formatter(ax)
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    if err_ax is not None:
        paired = [r for r in rows if r.get("error_pct") is not None and r.get("measured_ops_per_s")]
        if paired:
            x = [r["threads"] for r in paired]
            med = [r["measured_ops_per_s"] for r in paired]
            lo = [((r.get("measured_min_ops_per_s") or m) - m) / m * 100.0 for r, m in zip(paired, med)]
            hi = [((r.get("measured_max_ops_per_s") or m) - m) / m * 100.0 for r, m in zip(paired, med)]
            err_ax.fill_between(x, lo, hi, color="0.6", alpha=0.35, linewidth=0, label="measured spread")
            colors = ["C3" if r.get("exceeds_spread") else "C2" for r in paired]
            err_ax.scatter(x, [r["error_pct"] for r in paired], c=colors, zorder=3, label="error %")
            for xi, r in zip(x, paired):
                err_ax.vlines(xi, 0, r["error_pct"], colors="C3" if r.get("exceeds_spread") else "C2", alpha=0.6)
        err_ax.axhline(0, color="0.3", linewidth=0.8)
        err_ax.set_ylabel("error %")
        _threads_axis(err_ax, threads)
        err_ax.grid(True, alpha=0.3)
        err_ax.legend(fontsize=8)
        ax.set_xlabel("")
    if title is None and hasattr(comparison, "scenario"):
        sc = comparison.scenario  # type: ignore[union-attr]
        host = comparison.measured.doc.get("host", {})  # type: ignore[union-attr]
        kernel = rows[0]["kernel"] if rows else sc.get("kernel")
        title = (f"{sc.get('name', 'scenario')}: {sc.get('workload', {}).get('type', '')}, kernel {kernel} "
                 f"on model {sc.get('machine')}\nvs. host ({host.get('cpus', '?')} CPUs, "
                 f"Linux {host.get('kernel_release', '?')})")
    if title:
        (ax.figure.suptitle if err_ax is not None else ax.set_title)(title, fontsize=10)
    return fig


def plot_scaling(data: ResultData, *, y: str = "ops_per_s", x: str = "threads", by: str | Sequence[str] = "kernel",
                 facet: str | None = "machine", ax: Axes | None = None, band: bool = True,
                 title: str | None = None, ylabel: str | None = None, logy: bool = False) -> Figure:
    """Scaling curves: ``y`` against ``x``, one line per ``by`` value, one panel per ``facet`` value.

    ``data``: a Result (``simulate``, ``measure``, ``sweep``), several, or a frame
    from ``to_frame()``. By default one line per kernel generation and one panel
    per machine (a single panel when there is one machine, or when ``facet=None``:
    the machine then joins the line labels if there are several). With ``band``,
    the spread over seeds or runs (``<y>_min``..``<y>_max``) is shaded. ``logy``: a
    logarithmic y axis (for generations an order of magnitude apart).
    """
    x, y = _name(x, "plot_scaling: x"), _name(y, "plot_scaling: y")
    by_cols = _names(by, "plot_scaling: by")
    if facet is not None:
        facet = _name(facet, "plot_scaling: facet")
    frame = to_frame(data, "plot_scaling: data")
    if frame.empty:
        raise InputError("plot_scaling: data: no points to plot")
    for column in (x, y):
        if column not in frame.columns:
            raise InputError(f"plot_scaling: no column {column!r} (columns: {', '.join(map(str, frame.columns))})")
    by_cols = [c for c in by_cols if c in frame.columns]
    facet_values = _sorted_unique(frame[facet]) if facet and facet in frame.columns else [None]
    if facet and len(facet_values) > 1 and ax is not None:
        by_cols = by_cols + [facet]
        facet_values = [None]
    fig, axes = _facets(len(facet_values), ax, "plot_scaling")
    lo_col, hi_col = f"{y}_min", f"{y}_max"
    for panel, fv in zip(axes, facet_values):
        sub = frame if fv is None else frame[frame[facet] == fv]
        groups = _sorted_unique(tuple(row) for row in sub[by_cols].itertuples(index=False)) if by_cols else [()]
        for group in groups:
            mask = None
            for col, value in zip(by_cols, group):
                m = sub[col] == value
                mask = m if mask is None else mask & m
            part = sub if mask is None else sub[mask]
            part = part.sort_values(x)
            label = " / ".join(str(v) for v in group) or y
            (line,) = panel.plot(part[x], part[y], "o-", label=label, markersize=4)
            if band and lo_col in part.columns and hi_col in part.columns:
                lo, hi = part[lo_col].astype(float), part[hi_col].astype(float)
                if (hi > lo).any():
                    panel.fill_between(part[x], lo, hi, color=line.get_color(), alpha=0.15, linewidth=0)
        if x == "threads":
            _threads_axis(panel, frame[x])
        else:
            panel.set_xlabel(x)
        if logy:
            panel.set_yscale("log")
        if y.startswith("ops_per_s"):
            _ops_formatter(panel)
            if not logy:
                panel.set_ylim(bottom=0)
        panel.set_ylabel(ylabel or ("semop() calls per second" if y == "ops_per_s" else y))
        panel.grid(True, alpha=0.3)
        panel.legend(fontsize=8)
        if fv is not None:
            panel.set_title(f"{facet} {fv}", fontsize=10)
    if title:
        (fig.suptitle if len(axes) > 1 else axes[0].set_title)(title, fontsize=10)
    return fig


def _category_colors(categories: Sequence[str]) -> dict[str, Any]:
    from matplotlib import colormaps

    cmap = colormaps["tab10"]
    fixed = {c: cmap(i) for i, c in enumerate(CPU_CATEGORIES)}
    extra = [c for c in categories if c not in fixed]
    for i, c in enumerate(extra):
        fixed[c] = cmap((len(CPU_CATEGORIES) + i) % 10)
    return fixed


def plot_cpu_breakdown(data: ResultData, *, by: str = "kernel", x: str = "threads", ax: Axes | None = None,
                       title: str | None = None) -> Figure:
    """Where the CPU time goes: stacked bars of each point's ``cpu_breakdown`` shares.

    One bar per ``x`` value (threads), stacked by category (user, syscall, kernel
    path, spinning, context switch, idle; the same colour in every panel), one
    panel per ``by`` value (the kernel generation). ``data``: Result(s) whose
    points carry ``cpu_breakdown`` (simulated points do).
    """
    import pandas as pd

    by, x = _name(by, "plot_cpu_breakdown: by"), _name(x, "plot_cpu_breakdown: x")
    results = _results(data, "plot_cpu_breakdown: data")
    frames = [r.cpu_breakdown() for r in results]
    frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if frame.empty:
        raise InputError("plot_cpu_breakdown: no point carries a cpu_breakdown")
    groups = _sorted_unique(frame[by]) if by in frame.columns else [None]
    categories = _sorted_unique(frame["category"])
    colors = _category_colors(categories)
    fig, axes = _facets(len(groups), ax, "plot_cpu_breakdown")
    for panel, group in zip(axes, groups):
        sub = frame if group is None else frame[frame[by] == group]
        table = sub.pivot_table(index=x, columns="category", values="share", aggfunc="mean").fillna(0.0)
        table = table[[c for c in categories if c in table.columns]]
        positions = list(range(len(table.index)))
        bottom = [0.0] * len(positions)
        for category in table.columns:
            values = [float(v) * 100.0 for v in table[category]]
            panel.bar(positions, values, bottom=bottom, color=colors[category], label=category, width=0.8)
            bottom = [b + v for b, v in zip(bottom, values)]
        panel.set_xticks(positions, [f"{v:g}" if isinstance(v, (int, float)) else str(v) for v in table.index])
        panel.set_xlabel(x)
        panel.set_ylabel("share of CPU time (%)")
        panel.set_ylim(0, 100)
        if group is not None:
            panel.set_title(str(group), fontsize=10)
    handles, labels = axes[0].get_legend_handles_labels()
    seen = dict(zip(labels, handles))
    for panel in axes[1:]:
        for h, label in zip(*panel.get_legend_handles_labels()):
            seen.setdefault(label, h)
    if len(axes) > 1:
        fig.legend(list(seen.values()), list(seen.keys()), loc="outside right center", fontsize=8)
    else:
        axes[0].legend(list(seen.values()), list(seen.keys()), fontsize=8, loc="upper left",
                       bbox_to_anchor=(1.0, 1.0))
    if title:
        (fig.suptitle if len(axes) > 1 else axes[0].set_title)(title, fontsize=10)
    return fig


def hot_lines_table(data: ResultData, *, top: int = 3, by: str = "misses",
                    metric: str = "misses_per_op") -> pd.DataFrame:
    """The hottest cache lines per point, one row per (kernel, machine, threads).

    For rank r = 1..top: ``line r`` (the line's name) and ``<metric> r``. Lines are
    ranked within each point by ``by`` (see :meth:`semsim.Result.hot_lines`).
    """
    import pandas as pd

    top = check_int(top, "hot_lines_table: top", 1, 1000)
    by, metric = _name(by, "hot_lines_table: by"), _name(metric, "hot_lines_table: metric")
    frames = [r.hot_lines(top=top, by=by) for r in _results(data, "hot_lines_table: data")]
    frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if frame.empty:
        return pd.DataFrame()
    keys = [c for c in ("kernel", "machine", "semaphores", "threads") if c in frame.columns]
    rows = []
    for key, sub in frame.groupby(keys, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        row = dict(zip(keys, key))
        for _, line in sub.sort_values("rank").iterrows():
            r = int(line["rank"])
            row[f"line {r}"] = line["line"]
            row[f"{metric} {r}"] = line.get(metric)
        rows.append(row)
    return pd.DataFrame(rows)


def plot_hot_lines(data: ResultData, *, metric: str = "misses_per_op", top: int = 3, by: str = "kernel",
                   rank_by: str = "misses", ax: Axes | None = None, title: str | None = None) -> Figure:
    """The hottest cache lines as threads grow: ``metric`` per line against threads.

    One panel per ``by`` value (the kernel generation); in each, the ``top`` lines
    that are hottest (by ``rank_by``) at any thread count, one curve each.
    """
    import pandas as pd

    top = check_int(top, "plot_hot_lines: top", 1, 1000)
    metric, by = _name(metric, "plot_hot_lines: metric"), _name(by, "plot_hot_lines: by")
    rank_by = _name(rank_by, "plot_hot_lines: rank_by")
    frames = [r.hot_lines(by=rank_by) for r in _results(data, "plot_hot_lines: data")]
    frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if frame.empty:
        raise InputError("plot_hot_lines: no point carries hot_lines")
    if metric not in frame.columns:
        raise InputError(f"plot_hot_lines: no line metric {metric!r} (have: {', '.join(map(str, frame.columns))})")
    groups = _sorted_unique(frame[by]) if by in frame.columns else [None]
    fig, axes = _facets(len(groups), ax, "plot_hot_lines", sharey=False)
    for panel, group in zip(axes, groups):
        sub = frame if group is None else frame[frame[by] == group]
        peak = sub.groupby("line")[metric].max().sort_values(ascending=False)
        chosen = [line for line in peak.index[:top]]
        for line in chosen:
            part = sub[sub["line"] == line].groupby("threads")[metric].mean().sort_index()
            panel.plot(part.index, part.values, "o-", markersize=4, label=line)
        _threads_axis(panel, sub["threads"])
        panel.set_ylabel(metric.replace("_", " "))
        panel.set_ylim(bottom=0)
        panel.grid(True, alpha=0.3)
        panel.legend(fontsize=7)
        if group is not None:
            panel.set_title(str(group), fontsize=10)
    if title:
        (fig.suptitle if len(axes) > 1 else axes[0].set_title)(title, fontsize=10)
    return fig


def plot_diff(d: Any, *, threads: Any = None, top: int = 8, title: str | None = None) -> Figure:
    """A :func:`semsim.diff` comparison: throughput of A and B by threads (with each side's
    seed range), and the per-function CPU time per operation that moved most at one point
    (``threads``; default: the headline point), B minus A.
    """
    from matplotlib.figure import Figure

    from .diff import Diff

    if not isinstance(d, Diff):
        raise InputError(f"plot_diff: d: expected the semsim.Diff that semsim.diff() returns, not {type(d).__name__}")
    top = check_int(top, "plot_diff: top", 1, 1000)
    fig = Figure(figsize=(11.0, 4.2), layout="constrained")
    left, right = fig.subplots(1, 2)
    xs = [p["threads"] for p in d.points]
    for side, label, marker in (("a", d.labels[0], "o-"), ("b", d.labels[1], "s-")):
        ys = [p[f"ops_per_s_{side}"] for p in d.points]
        lo = [min(p[f"runs_{side}"]) for p in d.points]
        hi = [max(p[f"runs_{side}"]) for p in d.points]
        left.plot(xs, ys, marker, markersize=4, label=label)
        left.fill_between(xs, lo, hi, alpha=0.2)
    if len(xs) > 1:
        _threads_axis(left, xs)
    left.set_xlabel("threads")
    left.set_ylabel("ops/s")
    left.set_ylim(bottom=0)
    _ops_formatter(left)
    left.grid(True, alpha=0.3)
    left.legend(fontsize=8)
    point = d._point(threads)
    rows = point["functions"][:top][::-1]
    deltas = [r["delta_ns_per_op"] for r in rows]
    right.barh([r["function"] for r in rows], deltas,
               color=["tab:red" if v > 0 else "tab:green" for v in deltas])
    right.axvline(0, color="black", linewidth=0.8)
    right.set_xlabel(f"B - A, CPU ns per operation (threads {point['threads']})")
    right.tick_params(axis="y", labelsize=8)
    right.grid(True, axis="x", alpha=0.3)
    fig.suptitle(title or d.verdict, fontsize=9)
    return fig
