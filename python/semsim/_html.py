"""How results show in Jupyter: a title line and a table of the points (``_repr_html_``)."""

from __future__ import annotations

import html
from typing import Any

#: The columns a result's table shows, when its points have them.
COLUMNS = ("threads", "kernel", "machine", "ops_per_s", "ops_per_s_min", "ops_per_s_max", "cpu_breakdown.spin",
           "cpu_breakdown.idle", "context_switches.voluntary")


def result_html(result: Any, max_rows: int = 60) -> str:
    from .api import kernel_label

    name = result.scenario.get("name", "?") if isinstance(result.scenario, dict) else "?"
    title = (f"<p><b>semsim.Result</b> {html.escape(result.side)} {html.escape(repr(name))}: "
             f"{len(result.points)} point{'s' if len(result.points) != 1 else ''}</p>")
    if not result.points:
        return title
    frame = result.to_frame()
    cols = [c for c in COLUMNS if c in frame.columns]
    frame = frame[cols].copy()
    if "kernel" in frame.columns:
        frame["kernel"] = frame["kernel"].map(kernel_label)
    formats = {c: "{:,.0f}".format for c in cols if c.startswith("ops_per_s")}
    formats.update({c: "{:.1%}".format for c in cols if c.startswith("cpu_breakdown.")})
    table = frame.head(max_rows).to_html(index=False, formatters=formats, escape=True)
    more = f"<p>... {len(frame) - max_rows} more</p>" if len(frame) > max_rows else ""
    return title + table + more


def trace_html(info: Any) -> str:
    rows = "".join(f"<tr><td>{html.escape(k)}</td><td>{v:,}</td></tr>" for k, v in sorted(info.counts.items()))
    return (f"<p><b>semsim trace</b> {html.escape(str(info.path))} ({info.size:,} bytes), window "
            f"{info.window_ms[0]:g}..{info.window_ms[1]:g} ms</p><table>{rows}</table>")
