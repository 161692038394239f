"""locktorture (issue 19): the kernel-module workload through the scenario format and the
CLI, and the arithmetic of the reproduce target against the CNA v11 figures."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

import semsim
from semsim import reproduce_locktorture as rl


def _scenario(threads, **workload):
    w = {"type": "locktorture", "longdelay_ms": 0}
    w.update(workload)
    return {"name": "lt", "machine": "haswell-ex-144", "kernel": "hysteresis", "workload": w,
            "threads": threads, "duration_ms": 1.0, "warmup_ms": 0.2, "precision": 0}


def test_rates_and_the_torture_lock_in_the_lock_table():
    doc = semsim.simulate(_scenario([1, 8])).doc
    one, eight = (p["ops_per_s"] for p in doc["points"])
    # One writer: its own path plus the short hold's 0.5 us mean, about 1.6 M/s; eight on
    # four sockets hand the lock across them: well under one writer's rate.
    assert 1.2e6 < one < 2.2e6
    assert eight < one
    rows = {r["name"]: r for r in doc["points"][1]["lockstat"]}
    assert rows["torture_spinlock"]["acquisitions"] > 0
    assert rows["torture_spinlock"]["contended_share"] > 0.5


def test_native_refuses_a_kernel_module(tmp_path):
    path = tmp_path / "lt.json"
    path.write_text(json.dumps(_scenario([2])))
    proc = subprocess.run([sys.executable, "-m", "semsim", "native", str(path)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert "workload.type" in proc.stderr and "kernel module" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_bad_field_is_an_input_error():
    with pytest.raises(semsim.InputError, match="workload.shortdelay_us"):
        semsim.simulate(_scenario([1], shortdelay_us=-1))


def test_long_hold_mean_is_added_per_acquisition():
    # 100 ms once in n * 200,000 acquisitions: 500 ns / n on every acquisition.
    assert rl.long_hold_ns(1) == pytest.approx(500.0)
    assert rl.long_hold_ns(4) == pytest.approx(125.0)
    assert rl.short_hold_ns(2) == pytest.approx(250.0)
    assert rl.with_long_hold(2e6, 1) == pytest.approx(1e9 / (500.0 + 500.0))


def _results(rates, cna=None):
    cna = rates if cna is None else cna
    return [{"points": [{"ops_per_s": r} for r in rates]}, {"points": [{"ops_per_s": r} for r in cna]}]


def test_evaluate_passes_a_model_with_the_published_shape_and_fails_a_flat_one():
    # Rates whose long-hold-added shape is exactly the published one.
    base = 1e9 / 1100.0  # one writer: 600 ns of its own + the 500 ns long-hold mean
    want = [base * rl.PUBLISHED_STOCK[n][0] / rl.PUBLISHED_STOCK[1][0] for n in rl.THREADS]
    rates = [1e9 / (1e9 / w - rl.long_hold_ns(n)) for w, n in zip(want, rl.THREADS)]
    # and CNA rates whose speedup over those is the published one
    cna = [1e9 / (1e9 / (w * rl.PUBLISHED_CNA[n][0] / rl.PUBLISHED_STOCK[n][0]) - rl.long_hold_ns(n))
           for w, n in zip(want, rl.THREADS)]
    checks, rows = rl.evaluate(_results(rates, cna))
    assert all(c.passed for c in checks), [c.what for c in checks if not c.passed]
    assert checks[0].predicted == "0.0 %"
    assert [c.predicted for c in checks if "CNA" in c.what] == [
        f"{rl.PUBLISHED_CNA[n][0] / rl.PUBLISHED_STOCK[n][0]:.3f}x" for n in rl.THREADS[1:]]
    # CNA no faster than stock misses the writer counts where the published one gains 30 %+.
    checks, _ = rl.evaluate(_results(rates, rates))
    missed = [c.what for c in checks if c.passed is False]
    assert missed == [f"locktorture CNA / stock, {n} writers (±25 %)" for n in (16, 32, 36, 72, 108, 142)]
    # A model that does not scale at all misses the median and the far points.
    flat = [1e9 / (1e9 / base - rl.long_hold_ns(n)) for n in rl.THREADS]
    checks, _ = rl.evaluate(_results(flat))
    assert checks[0].passed is False
    assert any(c.passed is False for c in checks[1:])
    # the median, one shape and one CNA check per writer count above 1
    assert len(checks) == 1 + 2 * (len(rl.THREADS) - 1)
