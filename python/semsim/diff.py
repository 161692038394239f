"""Differential views of two results: the kernel test robot's verdict, and what moved.

``semsim.diff(A, B)`` compares two result documents (``semsim run`` output,
:class:`semsim.Result` objects or paths); ``semsim.diff(SCENARIO, kernel=[a, b])``
simulates one scenario under two kernels (generation ids or what-if objects such
as ``{"base": "complex_mode", "fence": "none"}``) over several seeds first.

Points are matched by thread count (and machine and semaphores). For each pair:

- the throughput change of B against A (reported ops/s: the median run of each
  side) and its spread over the seeds (``±`` the relative standard deviation of
  each side's runs, as LKP prints %stddev); the change *exceeds the spread* when
  the two sides' runs do not overlap and the difference of their means is more
  than twice its standard error. One seed a side has no spread: the verdict says so;
- a verdict line in LKP's words: ``-8.9% regression of aim9-shm.ops_per_sec at 1
  threads (...)``, ``+3.1% improvement of ...`` or ``no change of ...``;
- per-function CPU time per operation (ns/op) and share of busy time, A and B;
- per-lock deltas of the lock_stat table (contended share, wait and hold, bounces per op);
- differential folded stacks (``stack count_a count_b``, the ``difffolded``
  format of FlameGraph's difffolded.pl that ``flamegraph.pl`` draws as a
  differential flame graph): CPU ns of each stack in each side's window, rooted
  at ``semsim;threads=N`` so that the same stack matches on both sides.
"""

from __future__ import annotations

import html
import json
import math
import os
import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .api import InputError, Result, ScenarioLike, check_int, check_output_dir, kernel_label, simulate, write_file

#: Seeds per side when ``diff`` runs the scenario itself (unless ``repeats`` says otherwise).
DEFAULT_REPEATS = 3


# ---------------------------------------------------------------------------- inputs


def _as_result(x: Any, what: str) -> Result:
    if isinstance(x, Result):
        return x
    if isinstance(x, Mapping):
        if not isinstance(x.get("points"), list):
            raise InputError(f"diff: {what}: the dict is not a result document (no 'points' list); "
                             "give two `semsim run` results, or a scenario and two kernels")
        return Result(x)
    if isinstance(x, (str, os.PathLike)):
        return Result.read(x, f"diff: {what}")
    raise InputError(f"diff: {what}: expected a result (path, dict or semsim.Result), not {type(x).__name__}")


def _point_key(result: Result, point: Mapping[str, Any]) -> tuple[Any, ...]:
    scenario = point.get("scenario") if isinstance(point.get("scenario"), Mapping) else result.scenario
    sems = (scenario.get("workload") or {}).get("semaphores") if isinstance(scenario, Mapping) else None
    return (point.get("threads"), point.get("machine"), sems)


def _index(result: Result, what: str) -> dict[tuple[Any, ...], dict[str, Any]]:
    out: dict[tuple[Any, ...], dict[str, Any]] = {}
    for p in result.points:
        key = _point_key(result, p)
        if key in out:
            raise InputError(f"diff: {what} has more than one point at threads={key[0]} machine={key[1]}"
                             f"{'' if key[2] is None else f' semaphores={key[2]}'}: diff compares results "
                             "with one point per thread count (split a sweep by kernel first)")
        out[key] = p
    return out


#: Workloads that LKP runs, under LKP's test names (its verdicts say aim9.shared_memory.ops_per_sec).
LKP_NAMES = {"aim9-shm": "aim9.shared_memory"}


def _bench_name(result: Result) -> str:
    workload = result.scenario.get("workload") if isinstance(result.scenario, Mapping) else None
    if isinstance(workload, Mapping) and workload.get("type"):
        return LKP_NAMES.get(str(workload["type"]), str(workload["type"]))
    return str(result.scenario.get("name", "semsim")) if isinstance(result.scenario, Mapping) else "semsim"


# ---------------------------------------------------------------------------- statistics


def _runs(point: Mapping[str, Any]) -> list[float]:
    runs = point.get("ops_per_s_runs")
    if isinstance(runs, list) and runs:
        return [float(r) for r in runs]
    return [float(point.get("ops_per_s", 0.0))]


def _rel_sd(runs: Sequence[float]) -> float | None:
    if len(runs) < 2:
        return None
    mean = statistics.fmean(runs)
    return statistics.stdev(runs) / mean if mean > 0 else 0.0


def _exceeds(a: Sequence[float], b: Sequence[float]) -> bool | None:
    """Whether B's runs differ from A's beyond the seeds' spread (None: one seed a side, unknown)."""
    if len(a) < 2 or len(b) < 2:
        return None
    if min(b) <= max(a) and min(a) <= max(b):
        return False  # the runs overlap
    se = math.sqrt(statistics.variance(a) / len(a) + statistics.variance(b) / len(b))
    return abs(statistics.fmean(b) - statistics.fmean(a)) > 2 * se


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:+.1f}%"


def _spread(x: float | None) -> str:
    return "n/a" if x is None else f"±{100 * x:.1f}%"


def _verdict(bench: str, threads: Any, change: float, exceeds: bool | None, sd_a: float | None,
             sd_b: float | None, n_a: int, n_b: int, labels: tuple[str, str]) -> str:
    metric = f"{bench}.ops_per_sec at {threads} threads"
    seeds = f"{n_a} seeds" if n_a == n_b else f"{n_a}/{n_b} seeds"
    spread = f"spread {_spread(sd_a)} / {_spread(sd_b)} over {seeds}; {labels[0]} -> {labels[1]}"
    if change == 0:
        return f"no change of {metric} ({spread})"
    if exceeds is None:
        kind = "regression" if change < 0 else "improvement"
        return f"{_pct(change)} {kind} of {metric} (one seed: spread unknown; {labels[0]} -> {labels[1]})"
    if not exceeds:
        return f"no change of {metric}: {_pct(change)} is within the {spread}"
    kind = "regression" if change < 0 else "improvement"
    return f"{_pct(change)} {kind} of {metric} ({spread})"


# ---------------------------------------------------------------------------- the comparison


def _functions(pa: Mapping[str, Any], pb: Mapping[str, Any]) -> list[dict[str, Any]]:
    def table(p: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
        return {e["function"]: e for e in p.get("profile", []) or []}

    ta, tb = table(pa), table(pb)
    ops_a, ops_b = float(pa.get("ops_total") or 0), float(pb.get("ops_total") or 0)
    rows = []
    for f in list(ta) + [f for f in tb if f not in ta]:
        ea, eb = ta.get(f, {}), tb.get(f, {})
        na, nb = float(ea.get("cpu_ns", 0.0)), float(eb.get("cpu_ns", 0.0))
        per_a = na / ops_a if ops_a else 0.0
        per_b = nb / ops_b if ops_b else 0.0
        rows.append({"function": f, "ns_per_op_a": per_a, "ns_per_op_b": per_b, "delta_ns_per_op": per_b - per_a,
                     "share_a": float(ea.get("share", 0.0)), "share_b": float(eb.get("share", 0.0)),
                     "cpu_ns_a": na, "cpu_ns_b": nb})
    rows.sort(key=lambda r: (-abs(r["delta_ns_per_op"]), r["function"]))
    return rows


_LOCK_FIELDS = ("contended_share", "wait_avg_ns", "hold_avg_ns")


def _locks(pa: Mapping[str, Any], pb: Mapping[str, Any]) -> list[dict[str, Any]]:
    def table(p: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
        return {r["name"]: r for r in p.get("lockstat", []) or []}

    ta, tb = table(pa), table(pb)
    ops_a, ops_b = float(pa.get("ops_total") or 0), float(pb.get("ops_total") or 0)

    def per_op(r: Mapping[str, Any], key: str, ops: float) -> float | None:
        v = r.get(key)
        return None if v is None or not ops else float(v) / ops

    rows = []
    for name in list(ta) + [n for n in tb if n not in ta]:
        ra, rb = ta.get(name, {}), tb.get(name, {})
        row: dict[str, Any] = {"lock": name}
        for key, src in (("acquisitions_per_op", "acquisitions"), ("acq_bounces_per_op", "acq_bounces"),
                         ("wait_ns_per_op", "wait_total_ns")):
            row[f"{key}_a"], row[f"{key}_b"] = per_op(ra, src, ops_a), per_op(rb, src, ops_b)
        for key in _LOCK_FIELDS:
            row[f"{key}_a"], row[f"{key}_b"] = ra.get(key), rb.get(key)
        rows.append(row)
    return rows


def _folded(point: Mapping[str, Any]) -> dict[str, int]:
    out: dict[str, int] = {}
    for e in point.get("profile", []) or []:
        if "stack" not in e:
            continue
        stack = f"semsim;threads={point.get('threads')};{e['stack']}"
        out[stack] = out.get(stack, 0) + int(round(float(e.get("cpu_ns", 0.0))))
    return out


class Diff:
    """Two results compared point by point (see the module's doc). ``b`` against ``a``."""

    def __init__(self, a: Result, b: Result, labels: tuple[str, str]) -> None:
        self.a, self.b, self.labels = a, b, labels
        self.bench = _bench_name(a)
        ia, ib = _index(a, labels[0]), _index(b, labels[1])
        keys = [k for k in ia if k in ib]
        if not keys:
            raise InputError(f"diff: {labels[0]} and {labels[1]} have no point in common (thread counts "
                             f"{sorted(k[0] for k in ia)} and {sorted(k[0] for k in ib)})")
        self.points: list[dict[str, Any]] = []
        for key in keys:
            pa, pb = ia[key], ib[key]
            ra, rb = _runs(pa), _runs(pb)
            oa, ob = float(pa.get("ops_per_s", 0.0)), float(pb.get("ops_per_s", 0.0))
            change = (ob - oa) / oa if oa > 0 else (0.0 if ob == oa else math.inf)
            exceeds = False if change == 0 else _exceeds(ra, rb)
            sd_a, sd_b = _rel_sd(ra), _rel_sd(rb)
            self.points.append({
                "threads": key[0], "machine": key[1], "semaphores": key[2],
                "kernel_a": kernel_label(pa.get("kernel")), "kernel_b": kernel_label(pb.get("kernel")),
                "ops_per_s_a": oa, "ops_per_s_b": ob, "change": change,
                "runs_a": ra, "runs_b": rb, "spread_a": sd_a, "spread_b": sd_b, "exceeds_spread": exceeds,
                "verdict": _verdict(self.bench, key[0], change, exceeds, sd_a, sd_b, len(ra), len(rb), labels),
                "functions": _functions(pa, pb), "locks": _locks(pa, pb),
                "_folded": (_folded(pa), _folded(pb)),
            })

    # -- summary

    @property
    def headline(self) -> dict[str, Any]:
        """The point with the largest change beyond the spread (else the largest change)."""
        significant = [p for p in self.points if p["exceeds_spread"]]
        pool = significant or self.points
        return max(pool, key=lambda p: (abs(p["change"]), -self.points.index(p)))

    @property
    def verdict(self) -> str:
        """One line: the headline point's verdict."""
        return str(self.headline["verdict"])

    @property
    def verdicts(self) -> list[str]:
        return [str(p["verdict"]) for p in self.points]

    def difffolded(self) -> str:
        """``stack count_a count_b`` lines (CPU ns in each side's window), every point."""
        lines = []
        for p in self.points:
            fa, fb = p["_folded"]
            for stack in sorted(set(fa) | set(fb)):
                lines.append(f"{stack} {fa.get(stack, 0)} {fb.get(stack, 0)}")
        return "\n".join(lines) + ("\n" if lines else "")

    def to_dict(self) -> dict[str, Any]:
        return {
            "a": self.labels[0], "b": self.labels[1], "bench": self.bench, "verdict": self.verdict,
            "points": [{k: v for k, v in p.items() if not k.startswith("_")} for p in self.points],
        }

    # -- frames (pandas)

    def to_frame(self) -> Any:
        import pandas as pd

        cols = ["threads", "machine", "kernel_a", "kernel_b", "ops_per_s_a", "ops_per_s_b", "change",
                "spread_a", "spread_b", "exceeds_spread", "verdict"]
        return pd.DataFrame([{c: p[c] for c in cols} for p in self.points], columns=cols)

    def functions(self, threads: Any = None) -> Any:
        import pandas as pd

        point = self._point(threads)
        return pd.DataFrame(point["functions"])

    def locks(self, threads: Any = None) -> Any:
        import pandas as pd

        point = self._point(threads)
        return pd.DataFrame(point["locks"])

    def _point(self, threads: Any) -> dict[str, Any]:
        if threads is None:
            return self.headline
        for p in self.points:
            if p["threads"] == threads:
                return p
        raise InputError(f"diff: no point at threads={threads}; have {[p['threads'] for p in self.points]}")

    # -- text

    def table(self, top: int = 10) -> str:
        top = check_int(top, "Diff.table: top", 1, 1000, " (functions per point)")
        out = [f"# semsim diff: A = {self.labels[0]}, B = {self.labels[1]} ({self.bench})", ""]
        out += self.verdicts
        out.append("")
        rows = [["threads", "A ops/s", "±", "B ops/s", "±", "change", "beyond spread"]]
        for p in self.points:
            rows.append([str(p["threads"]), f"{p['ops_per_s_a']:,.0f}", _spread(p["spread_a"]),
                         f"{p['ops_per_s_b']:,.0f}", _spread(p["spread_b"]), _pct(p["change"]),
                         {True: "yes", False: "no", None: "unknown"}[p["exceeds_spread"]]])
        out.append(_format(rows))
        for p in self.points:
            out.append(f"## threads {p['threads']}: CPU time per operation by function (top {top} by |delta|)")
            rows = [["function", "A ns/op", "B ns/op", "delta", "A share", "B share"]]
            for f in p["functions"][:top]:
                rows.append([f["function"], f"{f['ns_per_op_a']:.2f}", f"{f['ns_per_op_b']:.2f}",
                             f"{f['delta_ns_per_op']:+.2f}", f"{100 * f['share_a']:.2f}%",
                             f"{100 * f['share_b']:.2f}%"])
            out.append(_format(rows, left=1))
            if p["locks"]:
                out.append(f"## threads {p['threads']}: locks")
                rows = [["lock", "A acq/op", "B acq/op", "A contended", "B contended", "A wait avg ns",
                         "B wait avg ns", "A hold avg ns", "B hold avg ns", "A bounces/op", "B bounces/op"]]
                for r in p["locks"]:
                    rows.append([r["lock"], _num(r["acquisitions_per_op_a"], 3), _num(r["acquisitions_per_op_b"], 3),
                                 _share(r["contended_share_a"]), _share(r["contended_share_b"]),
                                 _num(r["wait_avg_ns_a"], 1), _num(r["wait_avg_ns_b"], 1),
                                 _num(r["hold_avg_ns_a"], 1), _num(r["hold_avg_ns_b"], 1),
                                 _num(r["acq_bounces_per_op_a"], 3), _num(r["acq_bounces_per_op_b"], 3)])
                out.append(_format(rows, left=1))
        return "\n".join(out).rstrip() + "\n"

    def __str__(self) -> str:
        return self.table()

    def __repr__(self) -> str:
        return f"<semsim.Diff {self.labels[0]} -> {self.labels[1]}: {self.verdict}>"

    def _repr_html_(self) -> str:
        parts = [f"<p><b>{html.escape(self.verdict)}</b></p>",
                 self.to_frame().drop(columns="verdict").to_html(index=False, float_format=lambda v: f"{v:,.4g}")]
        p = self.headline
        parts.append(f"<p>threads {html.escape(str(p['threads']))}: CPU time per operation by function</p>")
        parts.append(self.functions(p["threads"]).head(10).to_html(index=False, float_format=lambda v: f"{v:,.4g}"))
        return "\n".join(parts)

    # -- files

    def write(self, out_dir: str | os.PathLike) -> dict[str, Path]:
        """Writes ``diff.txt`` (the table), ``diff.json`` and ``diff.difffolded`` into ``out_dir``."""
        d = check_output_dir(out_dir, "Diff.write: out_dir")
        paths = {"table": d / "diff.txt", "json": d / "diff.json", "difffolded": d / "diff.difffolded"}
        write_file(paths["table"], self.table(), "Diff.write: out_dir")
        write_file(paths["json"], json.dumps(self.to_dict(), indent=2, allow_nan=False) + "\n", "Diff.write: out_dir")
        write_file(paths["difffolded"], self.difffolded(), "Diff.write: out_dir")
        return paths


def _num(v: Any, digits: int) -> str:
    return "-" if v is None else f"{float(v):.{digits}f}"


def _share(v: Any) -> str:
    return "-" if v is None else f"{100 * float(v):.2f}%"


def _format(rows: list[list[str]], left: int = 1) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for r in rows:
        cells = [c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------- entry point


def _kernel_pair(kernel: Any) -> list[Any]:
    pair = list(kernel) if isinstance(kernel, (list, tuple)) else None
    if pair is None or len(pair) != 2:
        raise InputError("diff: kernel: expected two kernels (ids or what-if objects such as "
                         "{\"base\": \"complex_mode\", \"fence\": \"none\"}), A then B")
    return pair


def _labels(labels: Any) -> tuple[str, str] | None:
    """Two names for A and B (None: derived from the results)."""
    if labels is None:
        return None
    if (not isinstance(labels, (list, tuple)) or len(labels) != 2
            or not all(isinstance(v, str) and v for v in labels)):
        raise InputError(f"diff: labels: expected two non-empty names, A then B, got {labels!r}")
    return labels[0], labels[1]


def diff(a: ScenarioLike | Result, b: ScenarioLike | Result | None = None, *, kernel: Sequence[Any] | None = None,
         repeats: int | None = None, labels: Sequence[str] | None = None, **overrides: Any) -> Diff:
    """B against A: two results, or one scenario simulated under ``kernel=[a, b]``.

    With ``kernel``, ``a`` is the scenario (path, JSON text, dict or Result) and ``b``
    must be None; ``overrides`` apply to the scenario as in :func:`semsim.simulate`,
    and each side runs ``repeats`` seeds (default: the scenario's, at least 3).
    """
    given = _labels(labels)
    if kernel is not None:
        if b is not None:
            raise InputError("diff: give two results, or one scenario and kernel=[a, b], not both")
        ka, kb = _kernel_pair(kernel)
        if repeats is None:
            from .api import load_scenario

            repeats = max(DEFAULT_REPEATS, int(load_scenario(a, **overrides).get("repeats", 1)))
        ra = simulate(a, kernel=ka, repeats=repeats, **overrides)
        rb = simulate(a, kernel=kb, repeats=repeats, **overrides)
        names = given or (kernel_label(ka), kernel_label(kb))
        return Diff(ra, rb, (str(names[0]), str(names[1])))
    if b is None:
        raise InputError("diff: B is missing: give two results, or one scenario and kernel=[a, b]")
    if overrides or repeats is not None:
        raise InputError("diff: overrides and repeats apply only to diff(SCENARIO, kernel=[a, b])")
    ra, rb = _as_result(a, "A"), _as_result(b, "B")
    if given:
        names = given
    else:
        names = (_label(a, ra, "A"), _label(b, rb, "B"))
        if names[0] == names[1]:
            names = (f"A: {names[0]}", f"B: {names[1]}")
    return Diff(ra, rb, names)


def _label(src: Any, result: Result, default: str) -> str:
    kernels = {kernel_label(p.get("kernel")) for p in result.points}
    if len(kernels) == 1:
        return kernels.pop()
    if isinstance(src, (str, os.PathLike)) and not os.fspath(src).lstrip().startswith("{"):
        return Path(os.fspath(src)).stem
    return default
