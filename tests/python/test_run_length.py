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


def _random_doc(**over):
    doc = json.loads(DEFAULT_SCENARIO.read_text())
    doc["workload"]["pattern"] = "random"  # seeded draws: every seed its own run
    doc.update(threads=[2], duration_ms=20, warmup_ms=0.5, repeats=3, precision=0.002, **over)
    return doc


def test_repeats_pool_into_the_points_interval():
    res = semsim.simulate(_random_doc(), jobs=1)
    point = res.points[0]
    rl = point["run_length"]
    assert rl["pooled_runs"] == 3 and len(rl["runs"]) == 3
    rates = [r["rate_per_s"] for r in rl["runs"]]
    assert point["ops_per_s"] == pytest.approx(sum(rates) / 3, rel=1e-12)
    assert rl["rate_per_s"] == point["ops_per_s"]
    se = (sum(r["std_error_per_s"] ** 2 for r in rl["runs"]) ** 0.5) / 3
    assert rl["std_error_per_s"] == pytest.approx(se, rel=1e-9)
    assert rl["simulated_ms"] == pytest.approx(sum(rl["simulated_ms_runs"]))
    assert all(r["run_precision"] == pytest.approx(0.002 * 3 ** 0.5) for r in rl["runs"])
    assert rl["reached"] and rl["half_width_rel"] <= 0.002
    lo, hi = rl["ci95_per_s"]
    assert lo <= point["ops_per_s"] <= hi
    # parallel workers: the same bytes whichever run ends first
    assert semsim.simulate(_random_doc(), jobs=2).to_json() == res.to_json()


def test_run_prints_the_pooled_time_of_several_runs(run_cli, tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(_random_doc()))
    proc = run_cli("run", path, "-o", tmp_path / "r.json")
    assert proc.returncode == 0, proc.stderr
    rl = json.loads((tmp_path / "r.json").read_text())["points"][0]["run_length"]
    assert f"{rl['simulated_ms']:.2f} ms in 3 runs reached" in proc.stderr, proc.stderr
    assert f"+-{100 * rl['half_width_rel']:.2f}%" in proc.stderr


def test_run_says_when_seeds_that_disagreed_ran_a_second_round(run_cli, tmp_path):
    # The case of tests/cpp/test_run_length.cpp's SeedsThatDisagreeRunASecondRound.
    doc = {"name": "rl", "machine": "i3-ivybridge", "kernel": "hysteresis", "threads": [4],
           "workload": {"type": "semop-multi", "semaphores": 4, "pattern": "random"},
           "duration_ms": 60, "warmup_ms": 0.5, "seed": 1, "repeats": 3, "precision": 0.002}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    proc = run_cli("run", path, "-o", tmp_path / "r.json")
    assert proc.returncode == 0, proc.stderr
    rl = json.loads((tmp_path / "r.json").read_text())["points"][0]["run_length"]
    assert rl["rounds"] == 2 and rl["reached"] and rl["first_round_dispersion"] > 3
    assert f"{rl['simulated_ms']:.2f} ms in 3 runs (2 rounds) reached" in proc.stderr, proc.stderr


def _lockunlock_doc(repeats):
    return {"name": "ll", "machine": "box-64", "kernel": "per_sem_lock", "threads": [16],
            "workload": {"type": "sem-lockunlock", "semaphores": 4, "loops": 400},
            "seed": 1, "repeats": repeats}


def test_run_to_completion_has_its_seeds_interval(run_cli, tmp_path):
    path = tmp_path / "ll.json"
    path.write_text(json.dumps(_lockunlock_doc(3)))
    proc = run_cli("run", path, "-o", tmp_path / "r.json")
    assert proc.returncode == 0, proc.stderr
    point = semsim.Result.from_json(tmp_path / "r.json").points[0]
    rl = point["run_length"]
    assert not rl["applicable"] and rl["interval"] == "replications" and rl["pooled_runs"] == 3
    lo, hi = semsim.api.ops_interval(point)
    assert lo < min(point["ops_per_s_runs"]) <= max(point["ops_per_s_runs"]) < hi
    state = "reached" if rl["reached"] else "not reached"
    assert f"to completion, 3 runs {state}" in proc.stderr, proc.stderr
    # one seed: no interval, and the table says so
    one = semsim.simulate(_lockunlock_doc(1)).points[0]
    assert semsim.api.ops_interval(one) is None and one["run_length"]["ci95_per_s"] is None


def test_run_to_completion_stops_once_its_seeds_are_precise(run_cli, tmp_path):
    """repeats is the ceiling of a run to completion's seeds: 8 tasks on box-64 agree to
    +-0.01 % after two seeds, so the other two are not simulated; precision 0 runs all."""
    doc = dict(_lockunlock_doc(4), threads=[8],
               workload={"type": "sem-lockunlock", "semaphores": 2, "loops": 2000})
    path = tmp_path / "ll.json"
    path.write_text(json.dumps(doc))
    proc = run_cli("run", path, "-o", tmp_path / "r.json")
    assert proc.returncode == 0, proc.stderr
    point = semsim.Result.from_json(tmp_path / "r.json").points[0]
    rl = point["run_length"]
    assert point["seeds"] == [1, 2] and rl["runs_not_needed"] == 2 and rl["reached"]
    assert f"{rl['simulated_ms']:.2f} ms to completion, 2 of 4 runs reached" in proc.stderr, proc.stderr
    assert rl["simulated_ms"] == pytest.approx(sum(rl["simulated_ms_runs"])) and rl["simulated_ms"] > 0
    full = semsim.simulate(dict(doc, precision=0)).points[0]
    assert full["seeds"] == [1, 2, 3, 4] and full["run_length"]["runs_not_needed"] == 0
    assert full["ops_per_s_runs"][:2] == point["ops_per_s_runs"]


def test_run_says_why_a_point_missed_its_precision(run_cli, tmp_path):
    """8 tasks on host-default's 2 CPUs: a batch spans a scheduler rotation, and a 5 ms
    ceiling holds fewer than the 20 batches the interval needs; the point says so, with
    the duration_ms that would hold them, and the reached point says nothing."""
    proc = run_cli("run", DEFAULT_SCENARIO, "--set", "threads=[1,8]", "--set", "duration_ms=5",
                   "--set", "warmup_ms=0.5", "--set", "repeats=1", "-o", tmp_path / "r.json")
    assert proc.returncode == 0, proc.stderr
    one, eight = json.loads((tmp_path / "r.json").read_text())["points"]
    assert one["run_length"]["reached"] and one["run_length"]["not_reached"] is None
    rl = eight["run_length"]
    assert not rl["reached"]
    assert "fewer than 20" in rl["not_reached"]
    run = rl["runs"][0]
    assert rl["needs_duration_ms"] == pytest.approx(run["warmup_ms"] + 20 * run["batch_ms"] - 0.5)
    assert rl["needs_duration_ms"] > 5
    assert f"8 threads: precision not reached: {rl['not_reached']}" in proc.stderr
    assert "1 threads: precision not reached" not in proc.stderr
    assert semsim.api.precision_note(eight) == rl["not_reached"]
    assert semsim.api.precision_note(one) is None


def test_one_run_to_completion_gets_no_precision_note(run_cli, tmp_path):
    """One run of a run-to-completion workload has no interval (no window to size), and
    the table says nothing of it; with two replications a wide interval is noted."""
    lockunlock = {"type": "sem-lockunlock", "semaphores": 1, "loops": 400}
    one = semsim.simulate(DEFAULT_SCENARIO, threads=[2], workload=lockunlock, repeats=1)
    rl = one.points[0]["run_length"]
    assert not rl["reached"] and "repeats >= 2" in rl["not_reached"]
    assert semsim.api.precision_note(one.points[0]) is None
    wide = dict(rl, applicable=False, pooled_runs=2, not_reached="too wide")
    assert semsim.api.precision_note({"run_length": wide}) == "too wide"
