"""Runs at once (``jobs``): a scenario's runs in forked processes give the same bytes as
one after the other, bad ``jobs`` values are bad input, progress still comes, and a batch
of scenarios (``semsim reproduce``) gives each scenario the document it gets alone."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import semsim
from conftest import DEFAULT_SCENARIO
from semsim import _core, api, sweeps

SMALL = {"duration_ms": 0.6, "warmup_ms": 0.2}

# Several kinds of scenario: a windowed one with seeds and thread counts (adaptive run
# length), oversubscription, a run to completion, a script, several arrays per task.
CASES = {
    "default-adaptive": dict(machine="laptop-4", threads=[1, 2, 4], repeats=3, precision=0.01, **SMALL),
    "oversubscribed": dict(machine="laptop-4", threads=[12], repeats=2, kernel="global_lock", **SMALL),
    "to-completion": dict(machine="laptop-4", threads=[2, 3], repeats=2,
                          workload={"type": "sem-lockunlock", "semaphores": 2, "loops": 300,
                                    "busy_in": 0, "busy_out": 0}),
    "aim9": dict(machine="i3-ivybridge", threads=[1], repeats=3, kernel="complex_mode",
                 workload={"type": "aim9-shm"}, **SMALL),
    "box64": dict(machine="box-64", threads=[8, 64], repeats=1, kernel="moved_otime",
                  workload={"type": "semop-multi", "semaphores": 64}, **SMALL),
}


def _text(**overrides):
    return json.dumps(semsim.load_scenario(DEFAULT_SCENARIO, **overrides))


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_bytes_whatever_jobs(name):
    text = _text(**CASES[name])
    one = _core.simulate(text, None, 0.25, 1)
    assert one == _core.simulate(text, None, 0.25, 2)
    assert one == _core.simulate(text, None, 0.25, 3)


def test_api_default_jobs_is_the_cpu_count_and_gives_the_one_process_bytes():
    assert api.default_jobs() >= 1
    scenario = semsim.load_scenario(DEFAULT_SCENARIO, **CASES["default-adaptive"])
    assert semsim.simulate(scenario).to_json() == semsim.simulate(scenario, jobs=1).to_json()
    assert semsim.simulate(scenario, jobs=2).to_json() == semsim.simulate(scenario, jobs=1).to_json()


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "2"])
def test_bad_jobs_is_bad_input(bad):
    with pytest.raises(semsim.InputError, match="jobs: expected an integer from 1 to 1024"):
        semsim.simulate(DEFAULT_SCENARIO, jobs=bad, duration_ms=0.2)
    with pytest.raises(semsim.InputError, match="jobs"):
        sweeps.simulate_scenarios([semsim.load_scenario(DEFAULT_SCENARIO)], jobs=bad)


def test_core_refuses_bad_jobs():
    with pytest.raises(semsim.InputError, match="jobs"):
        _core.simulate(_text(**SMALL), None, 0.25, 0)
    with pytest.raises(semsim.InputError, match="jobs"):
        _core.simulate_batch([_text(**SMALL)], 0)


@pytest.mark.parametrize("args", [["run", str(DEFAULT_SCENARIO), "--jobs", "0"],
                                  ["run", str(DEFAULT_SCENARIO), "-j", "two"],
                                  ["demo", "--jobs", "-3"],
                                  ["compare", str(DEFAULT_SCENARIO), "--jobs", "0"],
                                  ["reproduce", "--workers", "0", "--only", "aim9"]])
def test_cli_bad_jobs_is_one_line_and_status_2(args, tmp_path):
    r = subprocess.run([sys.executable, "-m", "semsim", *args], capture_output=True, text=True, cwd=tmp_path,
                       timeout=120)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "expected an integer from 1 to 1024" in lines[0] and "Traceback" not in r.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "report").exists()  # nothing ran


def test_cli_run_jobs_gives_the_same_result(tmp_path):
    outs = []
    for jobs in ("1", "2"):
        out = tmp_path / f"r{jobs}.json"
        r = subprocess.run([sys.executable, "-m", "semsim", "run", str(DEFAULT_SCENARIO), "--set", "threads=[1,2]",
                            "--set", "duration_ms=0.5", "--set", "warmup_ms=0.1", "--jobs", jobs, "-o", str(out)],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]


def test_progress_with_jobs_reports_every_run_and_keeps_the_bytes():
    text = _text(machine="laptop-4", threads=[1, 4], repeats=2, duration_ms=2, warmup_ms=0.5, precision=0)
    seen = []
    out = _core.simulate(text, lambda *a: seen.append(a), 0.0, 2)
    assert out == _core.simulate(text, None, 0.25, 1)
    assert {r[0] for r in seen} == {1, 2, 3, 4}  # the runs numbered as one after the other
    finished = [r[0] for r in seen if r[4]]
    assert sorted(finished) == [1, 2, 3, 4]  # each run's last report comes back
    for run in (1, 2, 3, 4):
        done = [r[1] for r in seen if r[0] == run]
        assert done == sorted(done) and done[-1] == 2_500_000
        assert all(r[2] == 2_500_000 for r in seen if r[0] == run)


def test_api_progress_with_jobs_names_point_and_seed(monkeypatch):
    monkeypatch.setattr(api, "PROGRESS_INTERVAL_S", 0.0)  # every report, unthrottled
    seen = []
    semsim.simulate(DEFAULT_SCENARIO, threads=[1, 2], repeats=2, jobs=2, progress=seen.append, **SMALL)
    assert seen and all(isinstance(p, semsim.RunProgress) for p in seen)
    assert {(p.point, p.seed) for p in seen if p.finished} == {(1, 1), (1, 2), (2, 1), (2, 2)}
    assert all(p.points == 2 and p.seeds == 2 for p in seen)


def test_progress_callback_error_is_raised_after_a_parallel_run():
    def boom(*_):
        raise RuntimeError("callback failed")

    with pytest.raises(RuntimeError, match="callback failed"):
        _core.simulate(_text(threads=[1, 2], **SMALL), boom, 0.0, 2)


def test_batch_gives_each_scenario_its_own_bytes_in_input_order():
    docs = [semsim.load_scenario(DEFAULT_SCENARIO, **CASES[name]) for name in sorted(CASES)]
    done = []
    got = sweeps.simulate_scenarios(docs, jobs=2, done=done.append)
    assert sorted(done) == list(range(len(docs)))
    for doc, result in zip(docs, got):
        assert result == json.loads(semsim.simulate(doc, jobs=1).to_json())


def test_batch_bad_input_names_the_scenario_before_anything_runs():
    good = semsim.load_scenario(DEFAULT_SCENARIO, **SMALL)
    with pytest.raises(semsim.InputError, match=r"case #1: threads"):
        sweeps.simulate_scenarios([good, dict(good, threads=[0])], kind="case")


def test_batch_of_normalized_texts_gives_the_documents_of_the_scenarios():
    # semsim reproduce normalizes each scenario once and simulates the texts.
    docs = [semsim.load_scenario(DEFAULT_SCENARIO, **CASES[name]) for name in ("aim9", "oversubscribed")]
    texts = [api._load_text(doc, []) for doc in docs]
    assert sweeps.simulate_normalized(texts, jobs=2) == sweeps.simulate_scenarios(docs, jobs=2)
    unknown = json.dumps(dict(json.loads(texts[0]), machine="no-such-machine-x"))
    bad = sweeps.simulate_normalized([texts[0], unknown], names=["a", "b"])
    assert isinstance(bad[0], dict) and isinstance(bad[1], semsim.InputError) and str(bad[1]).startswith("b: ")


@pytest.mark.parametrize("enabled", [True, False])
def test_gc_paused_restores_the_collector(enabled):
    import gc

    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        with pytest.raises(RuntimeError), sweeps.gc_paused():
            assert not gc.isenabled()
            raise RuntimeError("the block failed")
        assert gc.isenabled() == enabled
    finally:
        (gc.enable if was else gc.disable)()
