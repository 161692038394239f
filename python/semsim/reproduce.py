"""`semsim reproduce`: the seeds' published comparisons on modelled machines.

Each target turns one published comparison into scenarios and a check. Ratios,
not absolute numbers: a 2013 absolute figure depends on clocks, mitigations and
kernel configs we do not know. No parameter is tuned to any of these tables:
the machine presets' sources are in cpu_models/, and the generations replay the
kernel code. A target that misses is reported as a miss, with its numbers.

Seed 002's measurements are withheld on purpose: for it we only PREDICT, and
the report says so.
"""
from __future__ import annotations

import json
import math
import statistics
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import reproduce_locks, reproduce_locktorture, reproduce_misses, reproduce_swingbench

# Published figures (seed files in ../shared/seeds/).
SEED001_THREADS = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]
SEED001 = {  # semop-multi, 24 CPUs, N threads on N semaphores, ops/s
    "global_lock": [610652, 341570, 288102, 290714, 288620, 289987, 291298, 290948, 290996, 292243],
    "rwlock": [1783589, 1520453, 1498167, 1612665, 1733453, 1649360, 1723167, 1729545, 1736021, 1773700],
    "per_sem_lock": [2142206, 1977878, 2037995, 2256484, 2650292, 2388008, 2717486, 2763582, 2757524,
                     3059159],
}
SEED000 = {"global_lock": 5043123, "per_sem_lock_rc": 10842975, "split_queues": 10110494,
           "spin_global_lock": 59.73, "spin_per_sem_lock_rc": 4.67}
# Seed 000's perf rows (% of samples) under the kernels' own symbols.
SEED000_PROFILE = {
    "global_lock": {"_raw_spin_lock": 59.73, "sys_semtimedop": 6.48},
    "per_sem_lock_rc": {"SYSC_semtimedop": 18.14, "ipc_obtain_object_check": 5.24, "_raw_spin_lock": 4.67},
    "split_queues": {"SYSC_semtimedop": 17.10, "ipc_obtain_object_check": 4.79, "_raw_spin_lock": 4.50},
}
# Commit 16df3674efe3's 3.9-rc1 profile (same laptop and benchmark, 5,048,409 ops/s):
# the source of the costs of avc_has_perm_flags, __audit_syscall_exit and
# copy_user_enhanced_fast_string (sim/ipc/kernel_path.cpp), shown beside the model's 3.9.
PROFILE_16DF_39RC1 = {"_raw_spin_lock": 59.40, "sys_semtimedop": 6.14, "avc_has_perm_flags": 3.84,
                      "__audit_syscall_exit": 3.64, "copy_user_enhanced_fast_string": 2.06,
                      "ipc_lock": 1.86}
SEED003_AIM9_CHANGE = -8.9  # % shared_memory ops/s, complex_mode vs wait_array (smp_rmb)


def run_all(docs: list[dict[str, Any]], workers: int | None = None,
            progress: Callable[[int, int], Any] | None = None) -> list[dict[str, Any]]:
    """Simulate every scenario, every run (thread count, seed) in a process forked from
    this one, ``workers`` at a time (default: one per CPU), the longest first; the results
    in input order whatever order they finish. ``progress(done, total)`` after each
    scenario. The first failure (in input order) is raised."""
    from .sweeps import simulate_scenarios

    total, finished = len(docs), [0]

    def done(_index: int) -> None:
        finished[0] += 1
        if progress is not None:
            progress(finished[0], total)

    outcomes = simulate_scenarios(docs, jobs=workers, done=done, kind="reproduce scenario")
    for outcome in outcomes:
        if isinstance(outcome, Exception):
            raise outcome
    return outcomes  # type: ignore[return-value]


@dataclass
class Check:
    what: str
    published: str
    predicted: str
    passed: bool | None  # None: a prediction with nothing to check against here
    # With --uncertainty (semsim.uncertainty.reproduce_ranges): the predicted range over the
    # machine's ranged assumptions, the variant furthest from the nominal prediction, and
    # whether the published number lies in the range (None: no single published number).
    low: float | None = None
    high: float | None = None
    widest: str = ""
    within: bool | None = None


@dataclass
class Target:
    name: str
    title: str
    scenarios: Callable[[Settings], list[dict[str, Any]]]
    evaluate: Callable[[list[dict[str, Any]]], tuple[list[Check], list[str]]]
    notes: str = ""


@dataclass
class Settings:
    duration_ms: float = 20.0
    warmup_ms: float = 2.0
    seeds: int = 3


def _doc(machine: str, kernel: Any, workload: dict[str, Any], threads: Any, s: Settings,
         **extra: Any) -> dict[str, Any]:
    doc = {"name": "reproduce", "machine": machine, "kernel": kernel, "workload": workload,
           "threads": threads, "duration_ms": s.duration_ms, "warmup_ms": s.warmup_ms, "seed": 1,
           "repeats": s.seeds}
    doc.update(extra)
    return doc


def _rate(result: dict[str, Any], i: int = 0) -> float:
    return float(result["points"][i]["ops_per_s"])


def _within(pred: float, pub: float, rel: float) -> bool:
    return abs(pred - pub) <= rel * abs(pub)


# --- Target 1: xeon-24, seed 001 ----------------------------------------------------------------
XEON_KERNELS = ["global_lock", "rwlock", "per_sem_lock"]


def t1_scenarios(s: Settings) -> list[dict[str, Any]]:
    return [_doc("xeon-24", k, {"type": "semop-multi", "semaphores": n, "pattern": "stride"}, n, s)
            for k in XEON_KERNELS for n in SEED001_THREADS]


def stride_hot_share(n: int) -> float:
    """The share of semop-multi's semops that land on semaphore 0 with the stride pattern,
    n threads on n semaphores (semop_multi_pattern.hpp): thread t visits the multiples of
    gcd(t, n) in turn, so it is on semaphore 0 once every n / gcd(t, n) pairs; thread 0
    always. Threads weighted equally (the published table's threads run alike)."""
    return sum(math.gcd(t, n) if t else n for t in range(n)) / (n * n)


# The hot-semaphore sensitivity: the published rwlock and per-sem rows follow
# 1 / ops_per_s = a + b * stride_hot_share(N) over N = 30..100 (24 CPUs busy at every N)
# with r^2 = 0.98 / 0.99, the dip at N = 60 and the jump at N = 100 included
# (validation/xeon24-growth.md); b / a is unit-free. The band is wide (a slope fitted on
# eight points): it asks for the mechanism, not for a value.
HOT_FIT_THREADS = [n for n in SEED001_THREADS if n >= 30]
HOT_SENSITIVITY_BAND = 0.5


def hot_sensitivity(rates: list[float]) -> float:
    """b / a of the least-squares line 1 / rate = a + b * hot share over HOT_FIT_THREADS."""
    xs = [stride_hot_share(n) for n in HOT_FIT_THREADS]
    ys = [1.0 / rates[SEED001_THREADS.index(n)] for n in HOT_FIT_THREADS]
    mx, my = statistics.mean(xs), statistics.mean(ys)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return b / (my - b * mx)


def t1_evaluate(results: list[dict[str, Any]]) -> tuple[list[Check], list[str]]:
    n = len(SEED001_THREADS)
    pred = {k: [_rate(results[i * n + j]) for j in range(n)] for i, k in enumerate(XEON_KERNELS)}
    checks: list[Check] = []
    rows = ["| N | vanilla pub | vanilla pred | rwlock/vanilla pub | pred | per-sem/vanilla pub | pred |",
            "|---|---|---|---|---|---|---|"]
    for j, threads in enumerate(SEED001_THREADS):
        g_pub, g_pred = SEED001["global_lock"][j], pred["global_lock"][j]
        rw_pub = SEED001["rwlock"][j] / g_pub
        ps_pub = SEED001["per_sem_lock"][j] / g_pub
        rw_pred = pred["rwlock"][j] / g_pred
        ps_pred = pred["per_sem_lock"][j] / g_pred
        rows.append(f"| {threads} | {g_pub:,} | {g_pred:,.0f} | {rw_pub:.2f} | {rw_pred:.2f} | "
                    f"{ps_pub:.2f} | {ps_pred:.2f} |")
        checks.append(Check(f"rwlock/vanilla at N={threads} (±25 %)", f"{rw_pub:.2f}", f"{rw_pred:.2f}",
                            _within(rw_pred, rw_pub, 0.25)))
        checks.append(Check(f"per-sem/vanilla at N={threads} (±25 %)", f"{ps_pub:.2f}", f"{ps_pred:.2f}",
                            _within(ps_pred, ps_pub, 0.25)))
    g = pred["global_lock"]
    plateau = statistics.mean(g[2:])
    checks.append(Check("vanilla: peak at N=10", "10", str(SEED001_THREADS[g.index(max(g))]),
                        g.index(max(g)) == 0))
    checks.append(Check("vanilla: peak / plateau (N>=30) about 2.1 (±25 %)", "2.1",
                        f"{g[0] / plateau:.2f}", _within(g[0] / plateau, 2.1, 0.25)))
    checks.append(Check("vanilla: flat plateau from N=30 (max/min <= 1.15)", "flat",
                        f"{max(g[2:]) / min(g[2:]):.2f}", max(g[2:]) / min(g[2:]) <= 1.15))
    rw = pred["rwlock"]
    checks.append(Check("rwlock: roughly flat (max/min <= 1.4)", "1.19", f"{max(rw) / min(rw):.2f}",
                        max(rw) / min(rw) <= 1.4))
    ps = pred["per_sem_lock"]
    checks.append(Check("per-sem: rising (N=100 over N=10)", "1.43", f"{ps[-1] / ps[0]:.2f}",
                        ps[-1] > ps[0]))
    for kernel, label in (("rwlock", "rwlock"), ("per_sem_lock", "per-sem")):
        pub = hot_sensitivity([float(v) for v in SEED001[kernel]])
        got = hot_sensitivity(pred[kernel])
        checks.append(Check(f"{label}: follows the hot semaphore 0 (b/a of 1/rate vs its share, "
                            f"N>=30, ±50 %)", f"{pub:.2f}", f"{got:.2f}",
                            _within(got, pub, HOT_SENSITIVITY_BAND)))
    return checks, rows


# --- Target 2: laptop-4, seed 000 ----------------------------------------------------------------
LAPTOP_KERNELS = ["global_lock", "per_sem_lock_rc", "split_queues"]


def t2_scenarios(s: Settings) -> list[dict[str, Any]]:
    return [_doc("laptop-4", k, {"type": "semop-multi", "semaphores": 128, "pattern": "stride"}, 256, s)
            for k in LAPTOP_KERNELS]


def _share(result: dict[str, Any], symbol: str) -> float:
    """Share of busy CPU time in one profile row (a kernel symbol), in %."""
    for entry in result["points"][0]["profile"]:
        if entry["function"] == symbol:
            return 100.0 * float(entry["share"])
    return 0.0


def _spin_share(result: dict[str, Any]) -> float:
    """Share of busy CPU time in _raw_spin_lock (acquisition and spinning), in %."""
    return _share(result, "_raw_spin_lock")


def t2_evaluate(results: list[dict[str, Any]]) -> tuple[list[Check], list[str]]:
    g, rc, sq = (_rate(r) for r in results)
    ratio_pub = SEED000["per_sem_lock_rc"] / SEED000["global_lock"]
    change_pub = 100 * (SEED000["split_queues"] / SEED000["per_sem_lock_rc"] - 1)
    change_pred = 100 * (sq / rc - 1)
    spin_g, spin_rc = _spin_share(results[0]), _spin_share(results[1])
    checks = [
        Check("3.10-rc2 / 3.9 throughput (±20 %)", f"{ratio_pub:.2f}", f"{rc / g:.2f}",
              _within(rc / g, ratio_pub, 0.20)),
        Check("3.9 _raw_spin_lock share (±10 points)", f"{SEED000['spin_global_lock']:.2f} %",
              f"{spin_g:.2f} %", abs(spin_g - SEED000["spin_global_lock"]) <= 10),
        Check("3.10-rc2 _raw_spin_lock share (±10 points)", f"{SEED000['spin_per_sem_lock_rc']:.2f} %",
              f"{spin_rc:.2f} %", abs(spin_rc - SEED000["spin_per_sem_lock_rc"]) <= 10),
        Check("4-patch series vs 3.10-rc2 (sign, ±5 points)", f"{change_pub:+.1f} %", f"{change_pred:+.1f} %",
              change_pred < 0 and abs(change_pred - change_pub) <= 5),
    ]
    obtain = _share(results[1], "ipc_obtain_object_check")
    checks.append(Check("3.10-rc2 ipc_obtain_object_check share (±3 points)", "5.24 %", f"{obtain:.2f} %",
                        abs(obtain - 5.24) <= 3))
    rows = ["| kernel | published ops/s | predicted ops/s |", "|---|---|---|",
            f"| 3.9 global_lock | {SEED000['global_lock']:,} | {g:,.0f} |",
            f"| 3.10-rc2 per_sem_lock_rc | {SEED000['per_sem_lock_rc']:,} | {rc:,.0f} |",
            f"| + 4-patch series split_queues | {SEED000['split_queues']:,} | {sq:,.0f} |",
            "", "| kernel | profile row | published % | predicted % |", "|---|---|---|---|"]
    for kernel, result in zip(LAPTOP_KERNELS, results):
        for symbol, pub in SEED000_PROFILE[kernel].items():
            rows.append(f"| {kernel} | {symbol} | {pub:.2f} | {_share(result, symbol):.2f} |")
    rows += ["", "3.9-rc1 in commit 16df3674efe3 (the same laptop; avc_has_perm_flags, __audit_syscall_exit "
             "and copy_user_enhanced_fast_string are the sources of those functions' costs, not checks):",
             "", "| kernel | profile row | 16df3674efe3 % | predicted % |", "|---|---|---|---|"]
    for symbol, pub in PROFILE_16DF_39RC1.items():
        rows.append(f"| global_lock | {symbol} | {pub:.2f} | {_share(results[0], symbol):.2f} |")
    return checks, rows


# --- Target 3: aim9 shared_memory on i3-ivybridge, seed 003 ----------------------------------------
AIM9_KERNELS = [{"base": "wait_array", "fence": "rmb"}, "complex_mode", "hysteresis"]


def t3_scenarios(s: Settings) -> list[dict[str, Any]]:
    return [_doc("i3-ivybridge", k, {"type": "aim9-shm"}, 1, s) for k in AIM9_KERNELS]


def t3_evaluate(results: list[dict[str, Any]]) -> tuple[list[Check], list[str]]:
    wa, cm, hy = (_rate(r) for r in results)
    change = 100 * (cm / wa - 1)
    back = 100 * (hy / cm - 1)
    checks = [
        Check("complex_mode (4.9 smp_mb) vs wait_array smp_rmb (±4 points)", f"{SEED003_AIM9_CHANGE:+.1f} %",
              f"{change:+.1f} %", abs(change - SEED003_AIM9_CHANGE) <= 4),
        Check("hysteresis (4.11) recovers it", "+8.9 %", f"{back:+.1f} %", back > 0),
    ]
    rows = ["| kernel | semop/s |", "|---|---|", f"| wait_array (3.19-4.8, smp_rmb) | {wa:,.0f} |",
            f"| complex_mode (4.9) | {cm:,.0f} |", f"| hysteresis (4.11+) | {hy:,.0f} |"]
    return checks, rows


# --- Target 4: swingbench DSS users, seed 001: python/semsim/reproduce_swingbench.py -----------------

# --- Target 5: seed 002 predictions ------------------------------------------------------------------
# The 3.11 change, and its parts as what-if kernels on per_sem_lock.
OTIME_KERNELS = [
    ("3.10 per_sem_lock", "per_sem_lock"),
    # sem_otime moved into struct sem makes it 56 bytes: without the 3.11
    # alignment, semaphores still straddle and share lines.
    ("+ per-sem sem_otime only (56-byte struct sem)",
     {"base": "per_sem_lock", "otime": "per_sem", "sem_layout": "unaligned56"}),
    ("+ aligned struct sem only", {"base": "per_sem_lock", "sem_layout": "aligned64"}),
    ("3.11 moved_otime", "moved_otime"),
]
SEED002_CASES = [
    ("semscale 1 thread, i3", "i3-ivybridge",
     {"type": "sem-scalebench", "mode": 1, "interleave": 2}, 1),
    ("semscale 2 threads (interleave 2), i3", "i3-ivybridge",
     {"type": "sem-scalebench", "mode": 1, "interleave": 2}, 2),
    ("semop-multi 256 64, box-64", "box-64", {"type": "semop-multi", "semaphores": 64}, 256),
    ("osim 64 256 1000000 0 0, box-64", "box-64",
     {"type": "sem-lockunlock", "semaphores": 64, "loops": 1000000, "busy_in": 0, "busy_out": 0}, 256),
]


def t5_scenarios(s: Settings) -> list[dict[str, Any]]:
    return [_doc(m, k, dict(w), n, s) for (_, m, w, n) in SEED002_CASES for (_, k) in OTIME_KERNELS]


def t5_evaluate(results: list[dict[str, Any]]) -> tuple[list[Check], list[str]]:
    rows = ["| case | " + " | ".join(label for label, _ in OTIME_KERNELS) + " | gain 3.11/3.10 |",
            "|---|" + "---|" * (len(OTIME_KERNELS) + 1)]
    checks = []
    k = len(OTIME_KERNELS)
    for i, (name, *_rest) in enumerate(SEED002_CASES):
        rates = [_rate(results[i * k + j]) for j in range(k)]
        gain = rates[-1] / rates[0]
        rows.append(f"| {name} | " + " | ".join(f"{r:,.0f}" for r in rates) + f" | {gain:.2f}x |")
        checks.append(Check(f"{name}: moved_otime gain", "withheld (seed 002)", f"{gain:.2f}x", None))
    # Scaling 1 -> 2 threads of semscale per kernel (the i3 question).
    for j, (label, _) in enumerate(OTIME_KERNELS):
        one, two = _rate(results[0 * k + j]), _rate(results[1 * k + j])
        checks.append(Check(f"semscale 1->2 cores speedup, {label}", "withheld", f"{two / one:.2f}x", None))
    rows += ["", "Kernels without PREEMPT_RT: the seed's first box-64 runs were on 3.8-rt, where "
             "spinlock_t is a sleeping rt_mutex whose holder can be preempted; semsim does not model "
             "that, so these rows predict the plain PREEMPT kernel of its second runs."]
    return checks, rows


TARGETS = [
    Target("xeon24", "1. semop-multi on xeon-24 (seed 001)", t1_scenarios, t1_evaluate),
    Target("laptop4", "2. semop-multi 256/128 on laptop-4 (seed 000)", t2_scenarios, t2_evaluate),
    Target("aim9", "3. aim9 shared_memory on i3-ivybridge (seed 003)", t3_scenarios, t3_evaluate),
    Target("swingbench", "4. swingbench DSS users on an 8-socket machine (seed 001)",
           reproduce_swingbench.scenarios, reproduce_swingbench.evaluate),
    Target("seed002", "5. seed 002 predictions (3.11 moved sem_otime)", t5_scenarios, t5_evaluate),
    Target("locks", "6. mctop lock curves, opteron-48 and westmere-ex", reproduce_locks.scenarios,
           reproduce_locks.evaluate),
    Target("locktorture", "7. kernel qspinlock on a 144-CPU Haswell-EX (locktorture, CNA v11)",
           reproduce_locktorture.scenarios, reproduce_locktorture.evaluate),
]


@dataclass
class TargetResult:
    target: Target
    checks: list[Check] = field(default_factory=list)
    rows: list[str] = field(default_factory=list)
    error: str = ""
    scenarios: list[dict[str, Any]] = field(default_factory=list)
    variants: list[str] = field(default_factory=list)  # with --uncertainty: the variants simulated


def _import_plotting() -> None:
    try:
        import matplotlib.backends.backend_agg
        import matplotlib.figure  # noqa: F401
    except Exception:  # write_plots imports it again and reports what fails
        pass


def reproduce(settings: Settings | None = None, only: list[str] | None = None,
              workers: int | None = None, progress: Callable[[str], Any] | None = None,
              uncertainty: bool = False) -> list[TargetResult]:
    """Runs the targets; ``progress`` is told ``"<target>: N/M points done"`` per finished point.

    Every target's scenarios go in one batch (:func:`semsim.sweeps.simulate_scenarios`):
    the runs of all targets share the workers, the longest first, so that no CPU waits
    for one target's last point while another target's are still to run.
    With ``uncertainty``, each check also gets its predicted range over the ranged
    assumptions of the machines the target uses (semsim.uncertainty.reproduce_ranges).
    """
    from .api import _load_text, check_jobs
    from .sweeps import gc_paused, simulate_normalized

    settings = settings or Settings()
    jobs = check_jobs(workers, "reproduce: --workers")
    # matplotlib takes about 0.4 s to import: done while the runs simulate (the batch
    # releases the GIL), for write_plots.
    threading.Thread(target=_import_plotting, name="semsim-import-matplotlib", daemon=True).start()
    out: list[TargetResult] = []
    texts: list[str] = []  # every scenario of the batch, normalized (as load_scenario does)
    labels: list[str] = []
    owner: list[int] = []  # texts[i] belongs to out[owner[i]]
    with gc_paused():  # the swingbench target's programs are many objects: sweeps.gc_paused
        for target in TARGETS:
            if only and target.name not in only:
                continue
            res = TargetResult(target)
            try:
                res.scenarios = target.scenarios(settings)
                # Bad input stops the target before anything runs; the normalized text
                # is what the batch simulates.
                mine = [_load_text(doc, []) for doc in res.scenarios]
            except Exception as exc:  # a missing generation or workload: reported, not fatal
                res.error = f"{type(exc).__name__}: {exc}".splitlines()[0]
            else:
                texts += mine
                labels += [f"reproduce scenario {target.name} #{j}" for j in range(len(res.scenarios))]
                owner += [len(out)] * len(res.scenarios)
            out.append(res)
    totals = [owner.count(t) for t in range(len(out))]
    counts = [0] * len(out)

    def done(index: int) -> None:
        t = owner[index]
        counts[t] += 1
        if progress is not None:
            progress(f"{out[t].target.name}: {counts[t]}/{totals[t]} point{'s' if totals[t] != 1 else ''} done")

    outcomes = simulate_normalized(texts, jobs=jobs, done=done, names=labels) if texts else []
    for t, res in enumerate(out):
        if res.error:
            continue
        mine = [o for o, i in zip(outcomes, owner) if i == t]
        failed = next((o for o in mine if isinstance(o, Exception)), None)
        try:
            if failed is not None:
                raise failed
            res.checks, res.rows = res.target.evaluate(mine)  # type: ignore[arg-type]
        except Exception as exc:  # reported, not fatal (as a bad scenario is)
            res.error = f"{type(exc).__name__}: {exc}".splitlines()[0]
            continue
        if uncertainty:
            from .uncertainty import reproduce_ranges

            def vdone(n: int, total: int, name: str = res.target.name) -> None:
                if progress is not None:
                    progress(f"{name}: {n}/{total} variant runs done")

            try:
                res.variants = reproduce_ranges(res.target, res.scenarios, mine, res.checks, jobs, vdone)
            except Exception as exc:  # the nominal checks stand; the report says why no range
                res.rows += ["", f"**Uncertainty not run:** {type(exc).__name__}: {exc}".splitlines()[0]]
    return out


def write_report(results: list[TargetResult], out_dir: Path, settings: Settings) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    lines = ["# semsim reproduce", "",
             f"Simulated window {settings.duration_ms} ms after {settings.warmup_ms} ms warm-up, "
             f"mean of {settings.seeds} seeds per point. Ratios against the published figures of "
             "the seeds; no parameter tuned to any table.", ""]
    for r in results:
        lines += [f"## {r.target.title}", ""]
        if r.error:
            lines += [f"**Not run:** {r.error}", ""]
            continue
        lines += r.rows + [""]
        ranged = any(c.low is not None for c in r.checks)
        if not ranged:
            lines += ["| check | published | predicted | result |", "|---|---|---|---|"]
        else:
            lines += [f"Predicted range over {len(r.variants)} variants of the machines' ranged assumptions "
                      "(cpu_models/README.md, \"Ranges and alternatives\"); \"in range\" says whether the "
                      "published number lies in it.", "",
                      "| check | published | predicted | range | in range | widest | result |",
                      "|---|---|---|---|---|---|---|"]
        for c in r.checks:
            verdict = "prediction" if c.passed is None else ("pass" if c.passed else "**miss**")
            if not ranged:
                lines.append(f"| {c.what} | {c.published} | {c.predicted} | {verdict} |")
                continue
            span = "-" if c.low is None else f"[{c.low:.4g}, {c.high:.4g}]"
            inside = "-" if c.within is None else ("yes" if c.within else "**no**")
            lines.append(f"| {c.what} | {c.published} | {c.predicted} | {span} | {inside} | "
                         f"{c.widest or '-'} | {verdict} |")
        lines.append("")
        lines += reproduce_misses.report_lines([c.what for c in r.checks if c.passed is False])
    path = out_dir / "reproduce.md"
    path.write_text("\n".join(lines))
    # Every scenario behind the tables, replayable with `semsim run`.
    for r in results:
        folder = out_dir / "scenarios" / r.target.name
        folder.mkdir(parents=True, exist_ok=True)
        for i, doc in enumerate(r.scenarios):
            (folder / f"{i:03d}.json").write_text(_scenario_text(doc))
    return path


def _scenario_text(doc: dict[str, Any]) -> str:
    """A scenario file's text: indented, but a large one (swingbench's programs: a million
    values) on one line -- Python's JSON encoder indents only in pure Python (0.35 s for
    the report's files, 0.08 s this way); without an indent it is the C encoder's."""
    compact = json.dumps(doc)
    return (compact if len(compact) > 100_000 else json.dumps(doc, indent=2)) + "\n"


def _number(text: str) -> float | None:
    try:
        return float(text.replace("%", "").replace("x", "").replace("+", "").replace(",", "").strip())
    except ValueError:
        return None


def _plotted(r: TargetResult) -> list[Check]:
    """The checks a target's figure shows: those with a numeric prediction."""
    return [c for c in r.checks if _number(c.predicted) is not None]


def _plot_target(r: TargetResult, out_dir: Path) -> Path | None:
    """A target's PNG: published against predicted for every numeric check (None: none)."""
    from matplotlib.figure import Figure

    checks = _plotted(r)
    if not checks:
        return None
    pairs = [(c.what, _number(c.published), _number(c.predicted), c.passed) for c in checks]
    fig = Figure(figsize=(9, 0.35 * len(pairs) + 1.5))
    ax = fig.add_subplot(1, 1, 1)
    ys = list(range(len(pairs)))
    ax.barh([y + 0.2 for y in ys], [p[2] for p in pairs], height=0.4, label="predicted",
            color=["tab:green" if p[3] else ("tab:red" if p[3] is False else "tab:blue") for p in pairs])
    ax.barh([y - 0.2 for y in ys], [p[1] if p[1] is not None else 0 for p in pairs], height=0.4,
            label="published", color="tab:gray")
    spans = [(y + 0.2, c) for y, c in zip(ys, checks) if c.low is not None]
    if spans:  # --uncertainty: the predicted range over the machines' ranged assumptions
        ax.errorbar([c.low for _, c in spans], [y for y, _ in spans],
                    xerr=[[0] * len(spans), [c.high - c.low for _, c in spans]], fmt="none",
                    ecolor="black", capsize=3, label="predicted range")
    ax.set_yticks(ys, [p[0] for p in pairs], fontsize=7)
    ax.invert_yaxis()
    ax.set_title(r.target.title + " (green pass, red miss, blue prediction)", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    path = out_dir / f"reproduce-{r.target.name}.png"
    fig.savefig(path, dpi=100)
    return path


def write_plots(results: list[TargetResult], out_dir: Path) -> list[Path]:
    """One PNG per target: published against predicted for every numeric check.

    On a POSIX host the targets are drawn by two processes, this one and a forked
    child (matplotlib's drawing is about a second, Python-bound, after the batch);
    if the child fails, this process draws its half too. The files are the same."""
    import os

    def draw(part: list[TargetResult]) -> None:
        for r in part:
            _plot_target(r, out_dir)

    # Halves of about equal drawing work (a figure's cost grows with its checks):
    # each target, the largest first, to the half with less so far.
    halves: tuple[list[TargetResult], list[TargetResult]] = ([], [])
    work = [0, 0]
    for r in sorted(results, key=lambda r: -len(r.checks)):
        lighter = 0 if work[0] <= work[1] else 1
        halves[lighter].append(r)
        work[lighter] += len(r.checks)
    mine, theirs = halves
    child = os.fork() if hasattr(os, "fork") and theirs else -1
    if child == 0:  # the child: draw its half, then leave without running anything of ours
        status = 1
        try:
            draw(theirs)
            status = 0
        finally:
            os._exit(status)
    try:
        draw(mine)
    finally:
        failed = child > 0 and os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]) != 0
    if child < 0 or failed:
        draw(theirs)
    return [out_dir / f"reproduce-{r.target.name}.png" for r in results if _plotted(r)]


def settings_for(duration_ms: float = 20.0, seeds: int = 3) -> Settings:
    """The settings ``semsim reproduce --duration-ms MS --seeds K`` runs with."""
    return Settings(duration_ms=duration_ms, warmup_ms=max(0.5, duration_ms / 10), seeds=seeds)


def finish(results: list[TargetResult], out_dir: str, settings: Settings, started: float) -> int:
    """Writes the report and plots, and prints the checks (stderr); ``started`` is the
    perf_counter() reading when the targets began."""
    import sys
    import time

    from .sweeps import gc_paused

    out = Path(out_dir)
    with gc_paused():  # the results hold the swingbench programs: millions of objects
        path = write_report(results, out, settings)
        write_plots(results, out)
    passed = sum(1 for r in results for c in r.checks if c.passed)
    missed = sum(1 for r in results for c in r.checks if c.passed is False)
    for r in results:
        print(f"{r.target.title}: " + (r.error or ", ".join(
            f"{'pass' if c.passed else 'MISS' if c.passed is False else 'pred'}" for c in r.checks)),
            file=sys.stderr)
    ranged = [c for r in results for c in r.checks if c.within is not None]
    if ranged:
        inside = sum(1 for c in ranged if c.within)
        print(f"uncertainty: the published value lies in the predicted range for {inside} of {len(ranged)} "
              "checks with a published number", file=sys.stderr)
    unknown = sum(1 for r in results for c in r.checks
                  if c.passed is False and reproduce_misses.why(c.what) is None)
    known = f" ({missed - unknown} known, {unknown} new)" if missed else ""
    print(f"{passed} checks pass, {missed} miss{known}; report {path} "
          f"({time.perf_counter() - started:.1f} s)", file=sys.stderr)
    return 0


def main(out_dir: str = "report", duration_ms: float = 20.0, seeds: int = 3,
         only: list[str] | None = None, workers: int | None = None,
         progress: Callable[[str], Any] | None = None) -> int:
    """`semsim reproduce`: run every target, print the checks, write the report."""
    import time

    settings = settings_for(duration_ms, seeds)
    start = time.perf_counter()
    return finish(reproduce(settings, only, workers, progress), out_dir, settings, start)
