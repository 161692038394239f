"""lock-stress (issue 19): the workload through the scenario format, its
placement modes and errors, and the lock-curve reproduce target's arithmetic."""
from __future__ import annotations

import pytest

import semsim
from semsim import reproduce_locks as rl


def _scenario(lock, threads, pin="compact", **extra):
    w = {"type": "lock-stress", "lock": lock, "critical_cycles": 1000, "delay_cycles": 0,
         "pin": pin}
    w.update(extra)
    return {"name": "ls", "machine": "opteron-48", "kernel": "global_lock", "workload": w,
            "threads": threads, "duration_ms": 1.0, "warmup_ms": 0.2, "precision": 0}


def _rates(result):
    return [p["ops_per_s"] for p in result.doc["points"]]


def test_mcs_flat_ticket_degrades_on_opteron():
    # MCS: within the reproduce target's 15 % of the published 701,214 / 763,378 = 0.919
    # (the queue hands on at the mean distance of a random order: 0.82 since the threads
    # reach the lock in a random order; 0.94 in thread order).
    mcs = _rates(semsim.simulate(_scenario("mcs", [6, 48])))
    ticket = _rates(semsim.simulate(_scenario("ticket", [6, 48])))
    assert abs((mcs[1] / mcs[0]) / (701214 / 763378) - 1) <= 0.15
    assert ticket[1] / ticket[0] < 0.5


def test_spread_is_slower_than_compact_for_few_threads():
    # 6 threads on one die (117-cycle transfers) vs one per die (197-300 cycles)
    compact = _rates(semsim.simulate(_scenario("ticket", [6], pin="compact")))[0]
    spread = _rates(semsim.simulate(_scenario("ticket", [6], pin="spread")))[0]
    assert spread < compact


def test_same_seed_same_bytes():
    a = semsim.simulate(_scenario("tas", [12]))
    b = semsim.simulate(_scenario("tas", [12]))
    assert _rates(a) == _rates(b)


@pytest.mark.parametrize("bad, field", [
    ({"lock": "clh"}, "workload.lock"),
    ({"critical_cycles": -1}, "workload.critical_cycles"),
    ({"pin": "diagonal"}, "workload.pin"),
])
def test_bad_input_names_the_field(bad, field):
    with pytest.raises(semsim.InputError, match=field.replace(".", r"\.")):
        doc = _scenario("ticket", [2])
        doc["workload"].update(bad)
        semsim.simulate(doc)


def test_cores_first_uses_every_core_before_a_sibling():
    # 20 MCS threads on westmere-ex-160: compact puts them on 10 cores' both threads (every
    # holder beside a busy sibling, smt_compute_slowdown 2), cores-first on 20 cores of two
    # sockets one hop apart (no sibling busy): cores-first is faster, and says so in the point.
    def run(pin):
        doc = _scenario("mcs", [20], pin=pin)
        doc.update(machine="westmere-ex-160", duration_ms=0.3, warmup_ms=0.1)
        return semsim.simulate(doc).doc["points"][0]
    compact, cores_first = run("compact"), run("cores-first")
    assert cores_first["ops_per_s"] > 1.3 * compact["ops_per_s"]
    assert rl.PLACEMENT == "cores-first"


def test_compact_is_refused_for_a_semaphore_workload():
    doc = {"name": "x", "machine": "opteron-48", "kernel": "global_lock",
           "workload": {"type": "semop-multi", "pin": "compact"}, "threads": [2]}
    with pytest.raises(semsim.InputError, match=r"workload\.pin"):
        semsim.simulate(doc)


def test_reproduce_target_scores_a_perfect_prediction_as_passing():
    # Feed the published medians back as the predictions: zero error everywhere.
    results = []
    for host, lock, _machine, ns in rl._groups():
        med = {n: m for n, m, _, _ in rl.PUBLISHED[host][lock]}
        results.append({"points": [{"ops_per_s": med[n]} for n in ns]})
    checks, rows = rl.evaluate(results)
    assert all(c.passed for c in checks)
    assert rows[-1].startswith("Summary: shape median |error| 0.0 %")


def test_reproduce_target_flags_a_steep_ticket_curve():
    results = []
    for host, lock, _machine, ns in rl._groups():
        pts = {n: m for n, m, _, _ in rl.PUBLISHED[host][lock]}
        n0 = rl.PUBLISHED[host][lock][0][0]
        # ticket twice as steep as published beyond the first point
        results.append({"points": [{"ops_per_s": pts[n] * (0.5 if lock == "ticket" and n != n0
                                                           else 1.0)} for n in ns]})
    checks, _ = rl.evaluate(results)
    failed = [c.what for c in checks if not c.passed]
    assert failed and all("ticket" in w or "median" in w for w in failed)


def _westmere160(tmp_path, spin_slowdown=None):
    """westmere-ex-160, or a copy of it with smt_spin_slowdown replaced."""
    if spin_slowdown is None:
        return "westmere-ex-160"
    import json
    from pathlib import Path
    d = json.loads((Path(__file__).resolve().parents[2] / "cpu_models" / "westmere-ex-160.json").read_text())
    d["name"] = "westmere-ex-160-spin"
    d["smt_spin_slowdown"] = {"value": spin_slowdown, "source": "test"}
    p = tmp_path / "westmere-ex-160-spin.json"
    p.write_text(json.dumps(d))
    return str(p)


def _curve(machine, lock, threads, duration_ms):
    doc = _scenario(lock, threads, pin="cores-first")
    doc.update(machine=machine, duration_ms=duration_ms, warmup_ms=0.1)
    return _rates(semsim.simulate(doc))


def test_smt_spin_slowdown_is_calibrated_on_the_westmere_mcs_drop(tmp_path):
    # Published (mctop_lock_backoff_diassrv8.csv, MCS no_backoff): 160 threads over 80 =
    # 431,073 / 677,811 = 0.636. From 81 threads on, cores-first gives every core a second
    # thread, each holder beside a waiter spinning on its node: smt_spin_slowdown 2.0 (the
    # preset's, importer's SMT_SPIN_SLOWDOWN) lands within 15 %; without it (1.0) MCS stays flat.
    published = 431073 / 677811
    r80, r160 = _curve(_westmere160(tmp_path), "mcs", [80, 160], 0.5)
    assert abs((r160 / r80) / published - 1) <= 0.15
    f80, f160 = _curve(_westmere160(tmp_path, 1.0), "mcs", [80, 160], 0.5)
    assert f160 / f80 > 0.9


def test_tas_falls_once_siblings_spin_with_xchg():
    # Published: TAS at 160 threads is 0.75 of its 80-thread rate (23,842 / 31,661). A TAS
    # holder's release beside a sibling whose xchg is in flight cannot ride that locked RMW
    # (cache_line.hpp, Intel SDM 3A 8.1.4): it queues at the home agent. When it rode it, the
    # release skipped the queue and TAS at 160 came out 2.0x its 80-thread rate.
    r80, r160 = _curve("westmere-ex-160", "tas", [80, 160], 2.0)
    assert r160 < r80


def test_threads_reach_the_lock_in_a_random_order():
    # Published (mctop_lock_backoff_diassrv8.csv, MCS no_backoff): 40 threads over 20 =
    # 676,807 / 754,798 = 0.897: from 2 sockets to 4 the hand-over to the next queued node
    # gets farther. The MCS queue repeats the order of the threads' first requests
    # (workloads/lock_stress.cpp first_arrival); in thread order (cores-first) it hands on
    # within the socket 9 times in 10 and the curve stayed flat (0.983); in a random order
    # the hand-over is at the mean distance of the threads' CPUs.
    r20, r40 = _curve("westmere-ex-80", "mcs", [20, 40], 0.5)
    assert r40 / r20 < 0.95
    assert abs((r40 / r20) / (676807 / 754798) - 1) <= 0.1
