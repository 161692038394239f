"""The per-lock table (lock_stat / perf lock contention columns) in the JSON and in --profile."""
from __future__ import annotations

import pytest

import semsim
from conftest import DEFAULT_SCENARIO

TINY = dict(precision=0, duration_ms=1, warmup_ms=0.2, repeats=1)


def rows(point):
    return {r["name"]: r for r in point["lockstat"]}


def test_one_pinned_thread_never_contends_nor_bounces():
    point = semsim.simulate(DEFAULT_SCENARIO, threads=[1], kernel="hysteresis", **TINY).points[0]
    sem = rows(point)["sem->lock"]
    assert sem["acquisitions"] > 1000
    assert sem["contentions"] == 0 and sem["con_bounces"] == 0 and sem["acq_bounces"] == 0
    assert sem["wait_total_ns"] == 0 and sem["wait_max_ns"] == 0
    assert 0 < sem["hold_avg_ns"] <= sem["hold_max_ns"]


def test_contended_lock_columns_are_consistent_with_each_other_and_with_locks():
    point = semsim.simulate(DEFAULT_SCENARIO, threads=[8], kernel="global_lock", **TINY).points[0]
    table = rows(point)
    lock = table["sma->sem_perm.lock"]
    old = next(r for r in point["locks"] if r["lock"].startswith("sem_perm.lock"))
    assert lock["acquisitions"] == old["acquisitions"]
    assert lock["contended_share"] == pytest.approx(old["contended_share"])
    assert lock["contentions"] > 0
    assert lock["contended_share"] == pytest.approx(lock["contentions"] / lock["acquisitions"])
    assert lock["wait_avg_ns"] == pytest.approx(lock["wait_total_ns"] / lock["contentions"])
    assert lock["wait_avg_ns"] <= lock["wait_max_ns"] <= lock["wait_total_ns"]
    assert lock["hold_avg_ns"] == pytest.approx(lock["hold_total_ns"] / lock["acquisitions"])
    assert lock["hold_avg_ns"] <= lock["hold_max_ns"]
    # Eight pinned CPUs take one lock in turn: most acquisitions move its line.
    assert 0.5 * lock["acquisitions"] < lock["acq_bounces"] <= lock["acquisitions"]
    assert lock["con_bounces"] <= lock["contentions"]
    for rq in [r for r in point["lockstat"] if r["name"] == "rq->lock"]:  # only if anyone slept
        assert rq["hold_total_ns"] is None and rq["acquisitions"] >= rq["acq_bounces"]


def test_rwlock_has_read_rows_under_the_array_lock_name():
    point = semsim.simulate(DEFAULT_SCENARIO, threads=[4], kernel="rwlock", **TINY).points[0]
    table = rows(point)
    # Every simple semop takes the rwlock for reading and its semaphore's lock (the
    # window's edges may split a pair: at most one per thread).
    reads, sems = table["sma->sem_perm.lock-R"]["acquisitions"], table["sem->lock"]["acquisitions"]
    assert reads > 1000 and abs(reads - sems) <= 4
    assert table["sma->sem_perm.lock-R"]["kind"] == "rwlock-read"


def test_profile_prints_the_lock_table(run_cli):
    proc = run_cli("run", DEFAULT_SCENARIO, "--set", "threads=[4]", "--set", "duration_ms=0.5",
                   "--set", "repeats=1", "--profile", "--folded", "x.folded")
    assert proc.returncode == 0, proc.stderr
    assert "con-bounces" in proc.stdout and "holdtime-max" in proc.stdout
    line = next(x for x in proc.stdout.splitlines() if x.startswith("sem->lock"))
    assert len(line.split()) == 12


def test_lockstat_frame():
    res = semsim.simulate(DEFAULT_SCENARIO, threads=[1, 2], **TINY)
    frame = semsim.lockstat.frame(res)
    assert set(frame["threads"]) == {1, 2} and "wait_max_ns" in frame.columns
