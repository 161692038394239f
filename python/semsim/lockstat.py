"""The per-lock table of a point, as /proc/lock_stat and ``perf lock contention`` show it.

Each simulated point carries ``lockstat``: one row per lock class under the
kernel's names (``sma->sem_perm.lock``, its ``-W``/``-R`` rows for the March
2013 rwlock, ``sem->lock`` for all semaphores' locks together, ``rq->lock``
for all run-queue locks) with acquisitions, contentions, the contended share,
acq-bounces and con-bounces (an acquisition or contention on another CPU than
the lock's last acquirer), and wait and hold times (total, average, max).
Wait averages are over contentions and hold averages over acquisitions, as in
lock_stat. ``rq->lock`` is one atomic on its line in the model: it has
acquisitions, bounces (line misses) and the time queued on the line, no hold.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .api import InputError

#: The row fields, in the order of the printed table.
COLUMNS = (
    "name", "con_bounces", "contentions", "contended_share", "wait_max_ns", "wait_total_ns", "wait_avg_ns",
    "acq_bounces", "acquisitions", "hold_max_ns", "hold_total_ns", "hold_avg_ns",
)

_HEADERS = {
    "name": "class name", "con_bounces": "con-bounces", "contentions": "contentions",
    "contended_share": "contended", "wait_max_ns": "waittime-max", "wait_total_ns": "waittime-total",
    "wait_avg_ns": "waittime-avg", "acq_bounces": "acq-bounces", "acquisitions": "acquisitions",
    "hold_max_ns": "holdtime-max", "hold_total_ns": "holdtime-total", "hold_avg_ns": "holdtime-avg",
}


def _cell(key: str, value: Any) -> str:
    if value is None:
        return "-"
    if key == "name":
        return str(value)
    if key == "contended_share":
        return f"{100 * float(value):.2f}%"
    if key.endswith("_ns"):
        return f"{float(value) / 1000:.2f}"  # lock_stat prints microseconds
    return f"{int(value):d}"


def format_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """The rows as lock_stat prints them (times in microseconds); '-' where the model has no figure."""
    if isinstance(rows, (str, bytes, Mapping)) or not isinstance(rows, Sequence):
        raise InputError(f"format_table: rows: expected a list of lock rows (dicts, as a point's 'lockstat'), "
                         f"not {type(rows).__name__}")
    table = [[_HEADERS[k] for k in COLUMNS]]
    for i, r in enumerate(rows):
        if not isinstance(r, Mapping):
            raise InputError(f"format_table: rows[{i}]: expected a lock row (a dict), not {type(r).__name__}")
        try:
            table.append([_cell(k, r.get(k)) for k in COLUMNS])
        except (TypeError, ValueError, OverflowError) as exc:
            raise InputError(f"format_table: rows[{i}]: a field is not a number ({exc})") from None
    widths = [max(len(row[i]) for row in table) for i in range(len(COLUMNS))]
    lines = []
    for n, row in enumerate(table):
        cells = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:])]
        lines.append("  ".join(cells).rstrip())
        if n == 0:
            lines.append("-" * len(lines[0]))
    return "\n".join(lines) + "\n"


def point_table(point: Mapping[str, Any]) -> str:
    """The lock table of one point ('' when the point has none, e.g. a measured point)."""
    if not isinstance(point, Mapping):
        raise InputError(f"point_table: point: expected a result point (a dict from Result.points), "
                         f"not {type(point).__name__}")
    rows = point.get("lockstat")
    if not isinstance(rows, list) or not rows:
        return ""
    return "# lock_stat (times in us)\n" + format_table(rows)


def frame(result: Any) -> Any:
    """All points' lock rows as a DataFrame: threads, kernel, machine, then the row's columns."""
    import pandas as pd

    from .api import Result, kernel_label

    if isinstance(result, Result):
        points = result.points
    elif isinstance(result, Mapping) and isinstance(result.get("points", []), list):
        points = result.get("points", [])
    else:
        raise InputError(f"lockstat.frame: result: expected a semsim.Result or a result document (a dict with "
                         f"'points'), not {type(result).__name__}")
    rows = []
    for i, p in enumerate(points):
        if not isinstance(p, Mapping):
            raise InputError(f"lockstat.frame: points[{i}]: expected a point (a dict), not {type(p).__name__}")
        for r in p.get("lockstat", []) or []:
            rows.append({"threads": p.get("threads"), "kernel": kernel_label(p.get("kernel")),
                         "machine": p.get("machine"), **r})
    return pd.DataFrame(rows)
