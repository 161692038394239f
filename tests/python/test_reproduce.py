"""`semsim reproduce` at reduced durations: the targets that the model meets
are asserted; the known misses are listed (with the model limitation behind
each in the issue note) and reported, not hidden."""
from __future__ import annotations

import os

import pytest

from semsim import reproduce as rp
from semsim import reproduce_misses

SMALL = rp.Settings(duration_ms=4.0, warmup_ms=0.5, seeds=1)


@pytest.fixture(scope="module")
def results():
    out = rp.reproduce(SMALL, only=["xeon24", "laptop4", "aim9", "swingbench"], workers=2)
    return {r.target.name: r for r in out}


def _check(result, prefix):
    matches = [c for c in result.checks if c.what.startswith(prefix)]
    assert matches, f"no check starting with {prefix!r}"
    return matches[0]


def test_every_target_runs(results):
    for name, r in results.items():
        assert not r.error, f"{name}: {r.error}"
        assert r.checks and r.rows


@pytest.mark.parametrize("prefix", [
    "vanilla: peak at N=10",
    "vanilla: peak / plateau",
    "vanilla: flat plateau",
    "per-sem: rising",
    # The rwlock's two locked RMWs per op on its word's line pay their conflict
    # (rmw_conflict, machine/cache_line.hpp): 4.4 -> 3.45 against a published 2.92.
    "rwlock/vanilla at N=10 ",
    "rwlock/vanilla at N=100 ",
    "per-sem/vanilla at N=100 ",
])
def test_xeon24_shape_and_ratios(results, prefix):
    c = _check(results["xeon24"], prefix)
    assert c.passed, f"{c.what}: published {c.published}, predicted {c.predicted}"


def test_stride_hot_share_counts_semaphore_0():
    # 10 threads on 10 semaphores: gcd(t, 10) for t = 1..9 is 1,2,1,2,5,2,1,2,1 (17), plus
    # thread 0 always there (10): 27 of 100.
    assert rp.stride_hot_share(10) == pytest.approx(0.27)
    assert rp.stride_hot_share(60) > rp.stride_hot_share(50) > rp.stride_hot_share(100)
    # Primes: only thread 0 returns to semaphore 0 more than once per n pairs.
    assert rp.stride_hot_share(7) == pytest.approx((7 + 6) / 49)


def test_hot_sensitivity_of_the_published_rows():
    # The published per-sem and rwlock rows follow the hot share; vanilla (one lock for
    # the array) does not care which semaphore is used.
    assert rp.hot_sensitivity([float(v) for v in rp.SEED001["per_sem_lock"]]) > 5
    assert rp.hot_sensitivity([float(v) for v in rp.SEED001["rwlock"]]) > 1.5
    assert abs(rp.hot_sensitivity([float(v) for v in rp.SEED001["global_lock"]])) < 0.3


# The model's misses per op follow the hot semaphore 0 (its stride share), but one line's
# queue absorbs them: rwlock 0.16 / per-sem 0.74 against a published 2.13 / 6.80
# (validation/xeon24-growth.md). Since the lookup's loads overlap (machine/mlp.hpp)
# the full reproduce run (20 ms x 3 seeds) gives per-sem 4.48, inside the +-50 % band,
# rwlock -0.23; at this module's 4 ms both still miss. Strict: the day they pass here,
# this mark must go.
@pytest.mark.xfail(strict=True, reason="one saturated line absorbs the hot semaphore's misses")
@pytest.mark.parametrize("prefix", ["rwlock: follows the hot semaphore", "per-sem: follows the hot semaphore"])
def test_xeon24_follows_the_hot_semaphore(results, prefix):
    c = _check(results["xeon24"], prefix)
    assert c.passed, f"{c.what}: published {c.published}, predicted {c.predicted}"


# The 3.9 share (47.8 % predicted against 59.7 % published at default settings) is a
# known miss: see the issue note; only the 3.10-rc2 share is asserted.
@pytest.mark.parametrize("prefix", ["3.10-rc2 _raw_spin_lock share"])
def test_laptop4_spin_shares(results, prefix):
    c = _check(results["laptop4"], prefix)
    assert c.passed, f"{c.what}: published {c.published}, predicted {c.predicted}"


def test_aim9_hysteresis_recovers_the_fence(results):
    c = _check(results["aim9"], "hysteresis (4.11) recovers it")
    assert c.passed, c.predicted
    fence = _check(results["aim9"], "complex_mode (4.9 smp_mb)")
    assert float(fence.predicted.rstrip(" %")) < 0, "the fence must cost something"


# With Oracle's set sizing (sets of 125 above SEMMSL 250) each array carries at most 125
# users whatever their number, so the 3.9 SETVAL post's scan of the set's sleepers costs
# the same at 400 and 800 users: no growth (36 / 46 / 31 %; with one set it grows,
# validation/swingbench.md). Strict: the day it passes, this mark must go.
@pytest.mark.xfail(strict=True, reason="sets of 125: the global lock's load per set does not grow")
def test_swingbench_global_lock_contention_grows_with_users(results):
    c = _check(results["swingbench"], "global_lock: contention grows steeply")
    assert c.passed, c.predicted


# The v3 series as posted takes every semaphore's lock of the set in each semctl(SETVAL)
# post: 105 to 126 uncontended atomics per post against the semop path's few us of
# kernel time, the only %sys the model has (75 % at every user count against 3-7 %).
# Strict: the day it passes, this mark must go.
@pytest.mark.xfail(strict=True, reason="v3's semctl takes every semaphore lock; no other Oracle %sys")
def test_swingbench_per_sem_lock_stays_below_global_lock(results):
    c = _check(results["swingbench"], "per_sem_lock: contention stays low")
    assert c.passed, c.predicted


def test_report_and_plots(results, tmp_path):
    path = rp.write_report(list(results.values()), tmp_path, SMALL)
    text = path.read_text()
    assert "| check | published | predicted | result |" in text
    assert rp.write_plots(list(results.values()), tmp_path)


def test_plots_drawn_by_two_processes_are_the_files_one_draws(results, tmp_path, monkeypatch):
    """write_plots draws half the targets in a forked child: the same PNG bytes as
    drawing each alone, and a child that fails leaves its half to the caller."""
    targets = list(results.values())
    alone = tmp_path / "alone"
    alone.mkdir()
    expected = {p.name: p.read_bytes() for r in targets if (p := rp._plot_target(r, alone))}
    assert len(expected) >= 2
    both = tmp_path / "both"
    both.mkdir()
    paths = rp.write_plots(targets, both)
    assert {p.name: p.read_bytes() for p in paths} == expected
    # A child that fails (here: every draw outside this process raises).
    me, draw = os.getpid(), rp._plot_target

    def only_here(r, out_dir):
        if os.getpid() != me:
            raise RuntimeError("the child fails")
        return draw(r, out_dir)

    monkeypatch.setattr(rp, "_plot_target", only_here)
    fallback = tmp_path / "fallback"
    fallback.mkdir()
    paths = rp.write_plots(targets, fallback)
    assert {p.name: p.read_bytes() for p in paths} == expected


def test_every_known_miss_has_its_mechanism_and_a_new_miss_is_flagged():
    """The nine checks validation/reproduce-misses.md explains are recognised by the names
    the targets give them; any other missed check is reported as new."""
    known = ["rwlock/vanilla at N=20 (±25 %)", "rwlock/vanilla at N=30 (±25 %)",
             "rwlock: follows the hot semaphore 0 (b/a of 1/rate vs its share, N>=30, ±50 %)",
             "global_lock: contention grows steeply with users", "per_sem_lock: contention stays low",
             "opteron-48 tas N=24 shape (±25 %)", "opteron-48 tas N=48 shape (±25 %)",
             "westmere-ex tas N=100 shape (±25 %)", "westmere-ex ticket N=60 shape (±25 %)"]
    for name in known:
        assert reproduce_misses.why(name), name
    for name in ["rwlock/vanilla at N=10 (±25 %)", "opteron-48 tas N=12 shape (±25 %)",
                 "per-sem/vanilla at N=20 (±25 %)", "westmere-ex ticket N=40 shape (±25 %)"]:
        assert reproduce_misses.why(name) is None, name
    lines = reproduce_misses.report_lines([known[5], "per-sem/vanilla at N=20 (±25 %)"])
    assert lines[0].startswith("Why these miss")
    assert "(misses 6-7)" in lines[2] and "**not a known miss**" in lines[3]
    assert reproduce_misses.report_lines([]) == []


def test_the_report_explains_its_misses(results, tmp_path):
    text = rp.write_report(list(results.values()), tmp_path, SMALL).read_text()
    missed = [c.what for r in results.values() for c in r.checks if c.passed is False]
    for name in missed:
        assert f"- {name}: " in text
