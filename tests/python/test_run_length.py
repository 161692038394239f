"""Adaptive run length (`precision`): schema and loader agree, results carry the interval,
`semsim run` prints the simulated time each point used."""

from __future__ import annotations

import json

import jsonschema
import pytest

import semsim
from conftest import DEFAULT_SCENARIO, SCENARIOS

SCHEMA = json.loads((SCENARIOS / "scenario.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
QUICK = dict(threads=[2], duration_ms=20, warmup_ms=0.5, repeats=1)


def _doc(precision):
    doc = json.loads(DEFAULT_SCENARIO.read_text())
    doc["precision"] = precision
    return doc


@pytest.mark.parametrize("value", [0, 0.01, 0.5, 1e-6])
def test_schema_and_loader_accept(value):
    assert not list(VALIDATOR.iter_errors(_doc(value)))
    semsim.load_scenario(_doc(value))


@pytest.mark.parametrize("value", [-0.01, 1, 1.5, "1%", True, None])
def test_schema_and_loader_reject(value):
    assert list(VALIDATOR.iter_errors(_doc(value)))
    with pytest.raises(semsim.InputError, match="precision"):
        semsim.load_scenario(_doc(value))


def test_result_frame_carries_the_interval():
    res = semsim.simulate(DEFAULT_SCENARIO, **QUICK)
    point = res.points[0]
    rl = point["run_length"]
    assert rl["applicable"] and rl["counter"] == "semops"
    assert rl["reached"] and rl["simulated_ms"] < 20.5  # stopped before the ceiling
    frame = res.to_frame()
    lo, hi = frame.loc[0, "ops_per_s_ci95_lo"], frame.loc[0, "ops_per_s_ci95_hi"]
    assert lo <= frame.loc[0, "ops_per_s"] <= hi
    assert (hi - lo) / 2 <= 0.01 * frame.loc[0, "ops_per_s"] * (1 + 1e-9)
    assert list(frame.columns[:6]) == ["threads", "kernel", "machine", "ops_per_s",
                                       "ops_per_s_ci95_lo", "ops_per_s_ci95_hi"]


def test_run_prints_the_simulated_time_per_point(run_cli, tmp_path):
    proc = run_cli("run", DEFAULT_SCENARIO, "--set", "threads=[1,2]", "--set", "duration_ms=20",
                   "--set", "warmup_ms=0.5", "--set", "repeats=1", "-o", tmp_path / "r.json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((tmp_path / "r.json").read_text())
    for p in doc["points"]:
        used = f"{p['run_length']['simulated_ms']:.2f} ms reached"
        assert used in proc.stderr, proc.stderr
    assert "ci95" in proc.stderr and "+-" in proc.stderr


def test_precision_zero_runs_the_full_duration():
    res = semsim.simulate(DEFAULT_SCENARIO, **QUICK, precision=0)
    point = res.points[0]
    assert point["window_s"] == pytest.approx(0.020, abs=1e-12)
    assert point["run_length"]["simulated_ms"] == pytest.approx(20.5)
    assert point["run_length"]["reached"] is False
