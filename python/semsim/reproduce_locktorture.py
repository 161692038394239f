"""`semsim reproduce` target: the kernel's queued spinlock on a 144-CPU Haswell-EX.

Published: the stock-qspinlock column of locktorture in the cover letter of
"[PATCH v11 0/5] Add NUMA-awareness to qspinlock" (Alex Kogan, LKML, 2020-09-15,
Message-Id 20200915180535.2975060-1-alex.kogan@oracle.com; carried from
shared/reference/data/qspinlock_cna/cna_v11_x5-4_locktorture.csv): an Oracle X5-4,
4 x Xeon E7-8895 v3 (18 cores x 2 threads, 2.6 GHz), v5.9.0-rc4, locktorture with
1 to 142 writer threads, the total lock operations of a run (x 10^7, the mean of 25
runs, with their standard deviation). The run's length is not stated, so only the
shape is compared: each thread count's figure over the one-thread figure.

Simulated: the locktorture workload (sim/workloads/locktorture_def.hpp) on
haswell-ex-144 under the hysteresis generation (4.11+: queued spinlocks), its
writers unpinned (started where fork balancing puts them: a socket each in turn).
The module's long hold (mdelay(100) once in writers x 200,000 acquisitions) is too
rare for a window of milliseconds, so the simulation runs without it and its mean
is added to every acquisition's time afterwards: a hold is serial (every other
writer waits it out), so over a run it adds 100 ms / (writers x 200,000) =
0.5 us / writers to the time per acquisition, exactly in the mean. The short hold
(2 us once in writers x 4) is simulated.

The CNA column of the same table (the NUMA-aware slow path, `"spinlock": "cna"` on the
same kernel, sim/machine/spinlock.hpp) is compared as the speedup over the stock figure
at each writer count: a ratio of two runs of the same length, so no shape is needed.

Beside the shape, each row gives the time per acquisition with both holds' means
taken out (the lock's own serial cost: hand-over and critical section), for the
model and, with the model's own one-writer cost as its base, for the published
figures: published shape s_n = (h_1 + 1 us) / (h_n + 1 us / n) gives h_n.
"""
from __future__ import annotations

import statistics
from typing import Any

SOURCE = ("LKML '[PATCH v11 0/5] Add NUMA-awareness to qspinlock' (Alex Kogan, 2020-09-15), "
          "locktorture table, stock column (shared/reference/data/qspinlock_cna/)")
# threads -> (total ops x 10^7 per run, standard deviation over the 25 runs)
PUBLISHED_STOCK = {1: (2.682, 0.100), 2: (2.810, 0.155), 4: (4.273, 0.134), 8: (5.071, 0.108),
                   16: (5.840, 0.125), 32: (6.246, 0.113), 36: (6.355, 0.096), 72: (6.129, 0.116),
                   108: (5.921, 0.084), 142: (5.763, 0.089)}
# threads -> (the same with the CNA slow path, its standard deviation)
PUBLISHED_CNA = {1: (2.695, 0.075), 2: (2.797, 0.145), 4: (4.294, 0.159), 8: (6.755, 0.198),
                 16: (8.940, 0.188), 32: (9.866, 0.220), 36: (9.968, 0.215), 72: (10.231, 0.210),
                 108: (10.246, 0.208), 142: (10.186, 0.238)}
THREADS = sorted(PUBLISHED_STOCK)
MACHINE = "haswell-ex-144"
KERNEL = "hysteresis"  # 4.11+: queued spinlocks, as v5.9
CNA_KERNEL = {"base": KERNEL, "spinlock": "cna"}
LONGDELAY_MS = 100     # torture_spin_lock_write_delay()'s constant, added analytically
SHORTDELAY_US = 2
BAND = 0.25            # a shape point's check, as the lock curves' ticket and TAS points


def long_hold_ns(writers: int) -> float:
    """The long hold's mean per acquisition: LONGDELAY_MS once in writers * 2000 * LONGDELAY_MS."""
    return LONGDELAY_MS * 1e6 / (writers * 2000 * LONGDELAY_MS)


def short_hold_ns(writers: int) -> float:
    """The short hold's mean per acquisition: SHORTDELAY_US once in writers * 2 * SHORTDELAY_US."""
    return SHORTDELAY_US * 1e3 / (writers * 2 * SHORTDELAY_US)


def with_long_hold(ops_per_s: float, writers: int) -> float:
    """A simulated rate (long hold off) with the long hold's mean added to every acquisition."""
    return 1e9 / (1e9 / ops_per_s + long_hold_ns(writers))


def scenarios(s: Any) -> list[dict[str, Any]]:
    from .reproduce import _doc

    w = {"type": "locktorture", "longdelay_ms": 0, "shortdelay_us": SHORTDELAY_US}
    return [_doc(MACHINE, KERNEL, w, THREADS, s),
            _doc(MACHINE, CNA_KERNEL, w, THREADS, s)]


def evaluate(results: list[dict[str, Any]]) -> tuple[list[Any], list[str]]:
    from .reproduce import Check

    points = results[0]["points"]
    rate = {n: with_long_hold(float(p["ops_per_s"]), n) for n, p in zip(THREADS, points)}
    pub0, pred0 = PUBLISHED_STOCK[1][0], rate[1]
    rows = ["| writers | published (x10^7 per run, sd) | shape pub | shape pred | shape err | "
            "serial ns per acquisition, pub / pred |", "|---|---|---|---|---|---|"]
    checks: list[Check] = []
    errs: list[float] = []
    for n in THREADS:
        pub, sd = PUBLISHED_STOCK[n]
        shape_pub, shape_pred = pub / pub0, rate[n] / pred0
        err = shape_pred / shape_pub - 1
        holds = long_hold_ns(n) + short_hold_ns(n)
        serial_pred = 1e9 / rate[n] - holds
        serial_pub = 1e9 / pred0 / shape_pub - holds  # the model's one writer as the base
        rows.append(f"| {n} | {pub:.3f} ({sd:.3f}) | {shape_pub:.3f} | {shape_pred:.3f} | "
                    f"{err * 100:+.0f} % | {serial_pub:,.0f} / {serial_pred:,.0f} |")
        if n == 1:
            continue
        errs.append(abs(err))
        checks.append(Check(f"locktorture stock qspinlock, {n} writers: shape (±25 %)",
                            f"{shape_pub:.3f}", f"{shape_pred:.3f}", abs(err) <= BAND))
    med = statistics.median(errs)
    checks.insert(0, Check("locktorture shape median |error| (<= 15 %)", "0 %", f"{med * 100:.1f} %",
                           med <= 0.15))
    rows += ["", f"Source: {SOURCE}. Shapes: each figure over its one-writer figure; the "
             f"prediction's long hold (mdelay({LONGDELAY_MS}) once in writers x 200,000) added "
             f"analytically. Shape median |error| {med * 100:.1f} % over {len(errs)} points.", ""]
    # The CNA slow path: its speedup over the stock lock at each writer count.
    cna = {n: with_long_hold(float(p["ops_per_s"]), n) for n, p in zip(THREADS, results[1]["points"])}
    rows += ["| writers | CNA published (x10^7 per run, sd) | speedup pub | speedup pred | error | "
             "CNA serial ns per acquisition, pred |", "|---|---|---|---|---|---|"]
    for n in THREADS:
        pub, sd = PUBLISHED_CNA[n]
        up_pub, up_pred = pub / PUBLISHED_STOCK[n][0], cna[n] / rate[n]
        err = up_pred / up_pub - 1
        serial = 1e9 / cna[n] - long_hold_ns(n) - short_hold_ns(n)
        rows.append(f"| {n} | {pub:.3f} ({sd:.3f}) | {up_pub:.3f} | {up_pred:.3f} | {err * 100:+.0f} % | "
                    f"{serial:,.0f} |")
        if n > 1:  # one writer never waits: both locks are the same there
            checks.append(Check(f"locktorture CNA / stock, {n} writers (±25 %)", f"{up_pub:.3f}x",
                                f"{up_pred:.3f}x", abs(err) <= BAND))
    return checks, rows
