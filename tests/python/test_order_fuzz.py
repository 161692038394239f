"""The time-order invariant fuzzed: random scenarios give the same bytes on the fast
path and in reference mode (tests/fuzz/order_fuzz.py; a short slice of it here)."""

from __future__ import annotations

import importlib.util
import json
import random
import sys
from pathlib import Path

from conftest import REPO

_spec = importlib.util.spec_from_file_location("order_fuzz", REPO / "tests" / "fuzz" / "order_fuzz.py")
order_fuzz = importlib.util.module_from_spec(_spec)
sys.modules["order_fuzz"] = order_fuzz  # before it runs: its dataclasses look it up
_spec.loader.exec_module(order_fuzz)


def test_a_fixed_slice_of_random_scenarios_gives_the_same_bytes_both_ways(tmp_path):
    result = order_fuzz.fuzz(seed=20261207, runs=150, duration_ms=1.0, out=tmp_path, jobs=2)
    assert result.runs >= 120, "too many drawn scenarios refused: the slice tests little"
    assert result.diffs == [], [order_fuzz.describe(d) for d in result.diffs]


def test_where_spinlock_waits_settle_the_fast_path_still_gives_the_same_bytes(tmp_path):
    # Only the presets without SMT and without wake-up IPIs, where a spinlock's wait whose
    # outcome is settled at its issue owes its turn (machine/spinlock.hpp, "Time order").
    machines = order_fuzz.Machines(presets=("uniform-64", "host-default"), ipi_share=0.0)
    result = order_fuzz.fuzz(seed=20261208, runs=60, duration_ms=1.0, out=tmp_path, jobs=2,
                             machines=machines)
    assert result.runs >= 45, "too many drawn scenarios refused: the slice tests little"
    assert result.diffs == [], [order_fuzz.describe(d) for d in result.diffs]
    from semsim import _core

    doc = {"name": "settled", "machine": "uniform-64", "kernel": "hysteresis",
           "workload": {"type": "sem-scalebench", "mode": 2}, "threads": 16, "duration_ms": 0.2,
           "warmup_ms": 0.05, "precision": 0, "repeats": 1, "seed": 1}
    before = _core.settled_lock_steps()
    _core.simulate(_core.load_scenario(json.dumps(doc), []))
    assert _core.settled_lock_steps() > before + 100, "no wait settled: the slice tests nothing new"


def test_the_machines_drawn_on_can_be_narrowed(tmp_path):
    rng = random.Random(4)
    machines = order_fuzz.Machines(presets=("uniform-64",), ipi_share=0.0)
    docs = [order_fuzz.scenario(rng, tmp_path, 0.5, machines) for _ in range(20)]
    models = [json.loads(Path(d["machine"]).read_text()) for d in docs]
    assert all(m["name"].startswith("fz-uniform-64-") and "-ipi" not in m["name"] for m in models)
    assert order_fuzz.main(["--presets", "nope"]) == 2
    assert order_fuzz.main(["--ipi-share", "2"]) == 2


def test_a_difference_is_reported_and_saved_as_a_replayable_case(tmp_path):
    result = order_fuzz.fuzz(seed=3, runs=3, duration_ms=0.1, out=tmp_path,
                             compare=lambda core, text: ("fast", "reference"))
    assert len(result.diffs) == result.runs >= 1
    case = json.loads((tmp_path / "case-1.json").read_text())
    assert Path(case["machine"]) == (tmp_path / "case-1-machine.json").resolve()
    from semsim import _core

    _core.load_scenario(json.dumps(case), [])  # loads as it is, its machine beside it


def test_the_draws_cover_every_workload_generation_and_noisy_smt(tmp_path):
    rng = random.Random(20261207)
    docs = [order_fuzz.scenario(rng, tmp_path, 0.5) for _ in range(48)]
    workloads = {d["workload"]["type"] for d in docs}
    assert {"semop-multi", "sem-scalebench", "sem-lockunlock", "lock-stress", "locktorture"} <= workloads
    bases = {d["kernel"] if isinstance(d["kernel"], str) else d["kernel"]["base"] for d in docs}
    assert len(bases) >= 7
    machines = [json.loads(Path(d["machine"]).read_text()) for d in docs]
    assert any("os_noise" in m and m["topology"].get("threads_per_core", 1) > 1 for m in machines)
    assert any(d["threads"] > m["cpus"] for d, m in zip(docs, machines)), "no oversubscribed draw"


def test_the_same_seed_draws_the_same_scenarios(tmp_path):
    def draws(where: Path) -> list[tuple[dict, str]]:
        where.mkdir()
        rng = random.Random(5)
        docs = [order_fuzz.scenario(rng, where, 1.0) for _ in range(10)]
        return [({**d, "machine": Path(d["machine"]).name}, Path(d["machine"]).read_text()) for d in docs]

    assert draws(tmp_path / "a") == draws(tmp_path / "b")


def test_forked_jobs_run_the_same_scenarios_as_one_process(tmp_path):
    one = order_fuzz.fuzz(seed=11, runs=12, duration_ms=0.2)
    two = order_fuzz.fuzz(seed=11, runs=12, duration_ms=0.2, jobs=2)
    assert (one.runs, one.refused, one.errors, one.diffs) == (two.runs, two.refused, two.errors, two.diffs)
