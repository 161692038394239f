"""`semsim diff` / `semsim.diff()`: the numbers against known runs, verdicts, difffolded."""
from __future__ import annotations

import json

import pytest

import semsim
from conftest import DEFAULT_SCENARIO, SCENARIOS

TINY = dict(duration_ms=1, warmup_ms=0.2, repeats=3, threads=[1, 4])


@pytest.fixture(scope="module")
def runs():
    a = semsim.simulate(DEFAULT_SCENARIO, kernel="hysteresis", **TINY)
    b = semsim.simulate(DEFAULT_SCENARIO, kernel="global_lock", **TINY)
    return a, b


def test_a_result_against_itself_is_no_change(runs):
    a, _ = runs
    d = semsim.diff(a, a)
    assert [p["change"] for p in d.points] == [0.0, 0.0]
    assert all(v.startswith("no change of semop-multi.ops_per_sec") for v in d.verdicts)
    assert d.verdict.startswith("no change")
    for p in d.points:
        assert all(f["delta_ns_per_op"] == 0 for f in p["functions"])
    for line in d.difffolded().splitlines():
        _, ca, cb = line.rsplit(" ", 2)
        assert ca == cb and int(ca) > 0


def test_global_lock_is_a_regression_against_hysteresis_at_four_threads(runs):
    a, b = runs
    d = semsim.diff(a, b)
    assert d.labels == ("hysteresis", "global_lock")
    four = next(p for p in d.points if p["threads"] == 4)
    pa, pb = a.points[1], b.points[1]
    assert four["ops_per_s_a"] == pa["ops_per_s"] and four["ops_per_s_b"] == pb["ops_per_s"]
    assert four["change"] == pytest.approx(pb["ops_per_s"] / pa["ops_per_s"] - 1)
    assert four["change"] < -0.3 and four["exceeds_spread"] is True
    assert four["verdict"].startswith(
        f"{100 * four['change']:+.1f}% regression of semop-multi.ops_per_sec at 4 threads")
    assert d.verdict == four["verdict"]  # the largest significant change is the headline
    spin = next(f for f in four["functions"] if f["function"] == "_raw_spin_lock")
    assert spin["delta_ns_per_op"] > 0
    assert spin["ns_per_op_b"] == pytest.approx(
        next(e["cpu_ns"] for e in pb["profile"] if e["function"] == "_raw_spin_lock") / pb["ops_total"])
    locks = {r["lock"]: r for r in four["locks"]}
    assert locks["sma->sem_perm.lock"]["contended_share_b"] > 0.5
    assert locks["sem->lock"]["contended_share_b"] is None  # global_lock has no per-semaphore lock


def test_difffolded_counts_are_each_sides_profile(runs):
    a, b = runs
    text = semsim.diff(a, b).difffolded()
    total_a = total_b = 0
    for line in text.splitlines():
        stack, ca, cb = line.rsplit(" ", 2)
        assert stack.startswith("semsim;threads=")
        total_a, total_b = total_a + int(ca), total_b + int(cb)
    expect_a = sum(round(e["cpu_ns"]) for p in a.points for e in p["profile"])
    expect_b = sum(round(e["cpu_ns"]) for p in b.points for e in p["profile"])
    assert (total_a, total_b) == (expect_a, expect_b)


def _doc(runs_per_point):
    points = []
    for threads, runs in runs_per_point.items():
        ordered = sorted(runs)
        points.append({"threads": threads, "kernel": "k", "machine": "m", "ops_total": 1,
                       "ops_per_s": ordered[(len(ordered) - 1) // 2], "ops_per_s_runs": runs})
    return {"side": "simulated", "scenario": {"workload": {"type": "w"}}, "points": points}


def test_spread_decides_the_verdict():
    a = _doc({1: [100.0, 101.0, 99.0], 2: [100.0, 101.0, 99.0], 3: [100.0]})
    b = _doc({1: [100.5, 102.0, 99.5], 2: [90.0, 91.0, 89.0], 3: [95.0]})
    d = semsim.diff(a, b, labels=["x", "y"])
    one, two, three = d.points
    assert one["exceeds_spread"] is False
    assert one["verdict"].startswith("no change of w.ops_per_sec at 1 threads: +0.5%")
    assert two["exceeds_spread"] is True
    assert two["verdict"].startswith("-10.0% regression of w.ops_per_sec at 2 threads")
    assert "spread ±1.0% / ±1.1% over 3 seeds" in two["verdict"]
    assert three["exceeds_spread"] is None and "one seed: spread unknown" in three["verdict"]
    assert d.verdict == two["verdict"]


def test_what_if_kernel_object_fence_removal_is_faster():
    d = semsim.diff(SCENARIOS / "host" / "aim9-shm.json",
                    kernel=["complex_mode", {"base": "complex_mode", "fence": "none"}],
                    machine="i3-ivybridge", threads=[1], duration_ms=2, warmup_ms=0.5)
    p = d.points[0]
    assert len(p["runs_a"]) == 3  # several seeds by default
    assert p["change"] > 0 and "improvement of aim9.shared_memory.ops_per_sec at 1 threads" in d.verdict
    # sem_lock() is inlined into SYSC_semtimedop (4.9), whose row perf shows it in.
    sem_lock = next(f for f in p["functions"] if f["function"] == "SYSC_semtimedop")
    assert sem_lock["delta_ns_per_op"] < 0  # the smp_mb() after spin_lock() is what went
    assert "<b>" in d._repr_html_()


def test_cli_diff_writes_table_json_and_difffolded(run_cli, tmp_path, runs):
    a, b = runs
    a.to_json(tmp_path / "a.json")
    b.to_json(tmp_path / "b.json")
    proc = run_cli("diff", "a.json", "b.json", "-o", "out")
    assert proc.returncode == 0, proc.stderr
    assert "regression of semop-multi.ops_per_sec at 4 threads" in proc.stdout
    out = tmp_path / "out"
    assert {p.name for p in out.iterdir()} == {"diff.txt", "diff.json", "diff.difffolded", "diff.png"}
    assert json.loads((out / "diff.json").read_text())["verdict"] == semsim.diff(a, b).verdict
    assert (out / "diff.difffolded").read_text() == semsim.diff(a, b).difffolded()


@pytest.mark.parametrize("args, words", [
    (["a.json"], "two result files"),
    (["SCEN", "--kernel", "hysteresis"], "--kernel twice"),
    (["a.json", "missing.json"], "no such file"),
    (["SCEN", "SCEN"], "not a result document"),
    (["SCEN", "--kernel", "hysteresis", "--kernel", "{bad"], "malformed JSON"),
])
def test_cli_diff_bad_input_is_one_line_exit_2(run_cli, tmp_path, runs, args, words):
    runs[0].to_json(tmp_path / "a.json")
    args = [str(DEFAULT_SCENARIO) if x == "SCEN" else x for x in args]
    proc = run_cli("diff", *args)
    assert proc.returncode == 2, proc.stderr
    assert words in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
