"""`semsim reproduce` at reduced durations: the targets that the model meets
are asserted; the known misses are listed (with the model limitation behind
each in the issue note) and reported, not hidden."""
from __future__ import annotations

import pytest

from semsim import reproduce as rp

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


def test_swingbench_global_lock_contention_grows_with_users(results):
    c = _check(results["swingbench"], "global_lock: contention grows steeply")
    assert c.passed, c.predicted


# Users in post/wait rings make per_sem_lock's complex op (the semctl_main-like op, one
# in 10 cycles, an assumption) wait for every one of the 800 per-semaphore locks under
# the array lock: its contention grows with users as the global lock's does (75.8 %
# against 7.4 % at 800 users). Strict: the day it passes, this mark must go.
@pytest.mark.xfail(strict=True, reason="per_sem_lock's complex op scans every semaphore's lock")
def test_swingbench_per_sem_lock_stays_below_global_lock(results):
    c = _check(results["swingbench"], "per_sem_lock: contention stays low")
    assert c.passed, c.predicted


def test_report_and_plots(results, tmp_path):
    path = rp.write_report(list(results.values()), tmp_path, SMALL)
    text = path.read_text()
    assert "| check | published | predicted | result |" in text
    assert rp.write_plots(list(results.values()), tmp_path)
