"""Uncertainty as data: ranges on assumed machine parameters and topology alternatives
(cpu_models/README.md, "Ranges and alternatives"), `semsim run --uncertainty`,
`semsim reproduce --uncertainty` and `semsim.simulate_uncertainty`."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import semsim
from semsim import reproduce as rp
from semsim import uncertainty

REPO = Path(__file__).resolve().parents[2]
MODELS = REPO / "cpu_models"

# xeon-24, one semaphore: one thread alone (no line moves between CPUs, nobody blocks),
# then two threads on CPUs 0 and 1, which the linux numbering puts on different sockets.
TINY = {"name": "unc", "machine": "xeon-24", "kernel": "global_lock",
        "workload": {"type": "semop-multi", "semaphores": 1, "pattern": "stride"},
        "threads": [1, 2], "duration_ms": 0.5, "warmup_ms": 0.1, "seed": 1, "repeats": 1}


def _model(name: str) -> dict:
    return json.loads((MODELS / f"{name}.json").read_text())


def _write(tmp_path: Path, doc: dict, name: str = "m.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


@pytest.fixture(scope="module")
def result():
    return semsim.simulate_uncertainty(TINY, workers=2)


@pytest.fixture(scope="module")
def small_machine(tmp_path_factory):
    """xeon-24 with only two ranges (one_hop, semop_kernel_path) and one alternative: 5
    variants, for the tests of the plumbing (the shipped file has 18)."""
    doc = _model("xeon-24")
    for group in ("latency_ns", "costs_ns"):
        for key, p in doc[group].items():
            if key not in ("one_hop", "semop_kernel_path"):
                p.pop("range", None)
    for p in doc.values():  # top-level parameters (write_after_read)
        if isinstance(p, dict) and "value" in p:
            p.pop("range", None)
    doc["topology"]["alternatives"] = doc["topology"]["alternatives"][:1]
    return _write(tmp_path_factory.mktemp("small"), doc, "xeon-24.json")


def _bar(point: dict, parameter: str) -> dict:
    return next(b for b in point["tornado"] if b["parameter"] == parameter)


# ------------------------------------------------------------------ the files and the syntax

def test_the_guessed_presets_carry_ranges_and_alternatives():
    for name in ("xeon-24", "box-64"):
        info = semsim.machine_uncertainty(name)
        params = {p["parameter"]: p for p in info["parameters"]}
        assert len(params["topology"]["alternatives"]) == 2
        for key in ("costs_ns.full_fence", "costs_ns.semop_kernel_path", "latency_ns.one_hop"):
            lo, hi = params[key]["range"]
            assert lo <= params[key]["nominal"] <= hi and lo < hi
            assert params[key]["source"]
        # The nominal model's hash is the file's without the annotations.
        assert info["model_hash"] == semsim.machine_info(name)["hash"]
    # The hash the golden results of xeon-24 record: the annotations never change it.
    golden = Path(__file__).resolve().parents[1] / "golden" / "outputs" / "reproduce-xeon24-000.json"
    assert semsim.machine_info("xeon-24")["hash"] == json.loads(golden.read_text())["provenance"]["machine_model_hash"]
    assert semsim.machine_uncertainty("laptop-4")["parameters"] == []


def test_schema_and_readme_document_the_syntax():
    schema = json.loads((MODELS / "machine.schema.json").read_text())
    assert schema["$defs"]["range"]["required"] == ["low", "high", "source"]
    assert "range" in schema["$defs"]["param"]["properties"]
    alt = schema["$defs"]["topology"]["properties"]["alternatives"]["items"]
    assert alt["required"] == ["name", "source", "topology"]
    readme = (MODELS / "README.md").read_text()
    assert "### Ranges and alternatives" in readme
    for word in ('"range": {"low"', '"alternatives"', "--uncertainty", "--corners", "swing_rel"):
        assert word in readme, word


@pytest.mark.parametrize("edit, field, what", [
    (lambda d: d["latency_ns"]["one_hop"].__setitem__("range", {"low": 120, "high": 100, "source": "x"}),
     "latency_ns.one_hop.range", "low (120) is above high (100)"),
    (lambda d: d["costs_ns"]["l1_hit"].__setitem__("range", {"low": 1, "high": 2, "source": "x"}),
     "costs_ns.l1_hit.range", "marked as an assumption"),
    (lambda d: d["costs_ns"].__setitem__("bogus", {"value": 1, "source": "assumption: x",
                                                    "range": {"low": 0, "high": 2, "source": "x"}}),
     "costs_ns.bogus", "unknown field"),
    (lambda d: d["costs_ns"]["ipi"].__setitem__("range", [500, 2000]), "costs_ns.ipi.range", "must be"),
    (lambda d: d["topology"]["alternatives"][0]["topology"].__setitem__("sockets", 3),
     "topology.alternatives[0]", "cpus"),
])
def test_bad_annotations_are_input_errors_naming_the_field(tmp_path, edit, field, what):
    doc = _model("xeon-24")
    edit(doc)
    path = _write(tmp_path, doc)
    for call in (lambda: semsim.machine_info(str(path)), lambda: semsim.machine_uncertainty(str(path)),
                 lambda: semsim.validate(dict(TINY, machine=str(path)))):
        with pytest.raises(semsim.InputError) as err:
            call()
        message = str(err.value)
        assert field in message and what in message and "\n" not in message


def test_bad_annotation_exits_2_with_one_line(tmp_path, run_cli):
    doc = _model("xeon-24")
    doc["latency_ns"]["one_hop"]["range"] = {"low": 120, "high": 100, "source": "x"}
    scenario = _write(tmp_path, dict(TINY, machine=str(_write(tmp_path, doc))), "s.json")
    proc = run_cli("run", scenario, "--uncertainty")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "latency_ns.one_hop.range" in proc.stderr


# ------------------------------------------------------------------ the prediction over the ranges

def test_a_range_end_moves_the_case_that_depends_on_it_and_not_the_other(result):
    section = result.doc["uncertainty"]
    one, two = section["points"]
    assert (one["threads"], two["threads"]) == (1, 2)
    # One thread alone moves no line between sockets and never blocks: the cross-socket
    # latency, the SMT latency and the wake-up latency do not matter to it.
    for parameter in ("latency_ns.one_hop", "latency_ns.smt", "costs_ns.wakeup_latency"):
        bar = _bar(one, parameter)
        assert bar["min"] == bar["max"] == one["ops_per_s"], parameter
    # Its kernel path does: every semop runs it.
    assert _bar(one, "costs_ns.semop_kernel_path")["swing_rel"] > 0.05
    # Two threads on CPUs 0 and 1 (two sockets) pass the lock's line across the socket
    # boundary: a slower hop, fewer operations.
    hop = _bar(two, "latency_ns.one_hop")["ops_per_s"]
    assert hop["high"] < two["ops_per_s"] < hop["low"]
    assert two["low"] <= min(hop.values()) and two["high"] >= max(hop.values())
    # Variants: each machine variant has a model hash of its own and a rate per point;
    # the start order's runs the nominal model, last.
    ids = [v["id"] for v in section["variants"]]
    assert "latency_ns.one_hop=high" in ids and any(i.startswith("topology=") for i in ids)
    assert ids[-1] == "start_order=shuffled"
    assert section["variants"][-1]["model_hash"] == section["model_hash"]
    assert len({v["model_hash"] for v in section["variants"][:-1]}) == len(ids) - 1
    # full_fence's low end is its value: the nominal model, not simulated again.
    fence_low = next(v for v in section["variants"] if v["id"] == "costs_ns.full_fence=low")
    assert fence_low["simulated"] is False and fence_low["ops_per_s"] == [one["ops_per_s"], two["ops_per_s"]]
    # The nominal points are those of a plain simulate.
    plain = semsim.simulate(TINY)
    assert [p["ops_per_s"] for p in plain.points] == [one["ops_per_s"], two["ops_per_s"]]


def test_same_scenario_same_bytes(small_machine):
    scenario = dict(TINY, machine=str(small_machine))
    one, two = (semsim.simulate_uncertainty(scenario, workers=w).to_json() for w in (1, 2))
    assert one == two
    assert "/tmp" not in one.split('"uncertainty"')[1]  # no temporary path in the section


def test_corners_add_all_low_and_all_high(small_machine):
    out = semsim.simulate_uncertainty(dict(TINY, machine=str(small_machine), threads=[1]), mode="corners",
                                      workers=2)
    ids = [v["id"] for v in out.doc["uncertainty"]["variants"]]
    assert ids[-2:] == ["all=low", "all=high"]
    rates = {v["id"]: v["ops_per_s"][0] for v in out.doc["uncertainty"]["variants"]}
    assert rates["all=low"] > rates["all=high"]  # every cost at its low end is faster
    with pytest.raises(semsim.InputError, match="allowed: each, corners"):
        semsim.simulate_uncertainty(TINY, mode="sideways")


def test_the_start_order_is_an_uncertain_assumption_of_the_scenario():
    """A lock held all the time by ten threads on xeon-24 keeps its first waiters' order:
    the start order moves the prediction by tens of percent; the variant runs the other
    order, and a one-thread point (no order to take) does not move."""
    scenario = dict(TINY, machine="laptop-4", threads=[1, 4], duration_ms=0.3)
    section = semsim.simulate_uncertainty(scenario).doc["uncertainty"]
    assert [p["parameter"] for p in section["parameters"]] == ["start_order"]
    order = section["parameters"][0]
    assert order["nominal"] == "spawn" and order["alternatives"] == ["shuffled"]
    (variant,) = section["variants"]
    assert variant["id"] == "start_order=shuffled" and variant["simulated"]
    one, four = section["points"]
    assert _bar(one, "start_order")["swing_rel"] == 0
    plain = semsim.simulate(dict(scenario, start_order="shuffled"))
    assert _bar(four, "start_order")["ops_per_s"] == {"shuffled": plain.points[1]["ops_per_s"]}
    # Explicitly shuffled: the variant is the spawn order.
    section = semsim.simulate_uncertainty(dict(scenario, start_order="shuffled",
                                               threads=[4])).doc["uncertainty"]
    assert section["variants"][0]["id"] == "start_order=spawn"


def test_a_saturated_fifo_lock_keeps_its_start_order():
    """xeon-24, 3.9's global lock, 10 threads on CPUs 0-9 (sockets alternating): in spawn
    order every hand-off crosses the socket; shuffled starts let some stay on one."""
    doc = dict(TINY, threads=[10], duration_ms=1, precision=0)
    doc["workload"] = dict(TINY["workload"], semaphores=10)
    spawn = semsim.simulate(doc).points[0]
    shuffled = semsim.simulate(dict(doc, start_order="shuffled")).points[0]

    def lock_line(p):
        return next(line for line in p["hot_lines"] if "sem_perm.lock" in line["line"])

    assert set(lock_line(spawn)["transfers"]) == {"one_hop"}
    assert lock_line(shuffled)["transfers"].get("same_die", 0) > 0
    assert shuffled["ops_per_s"] > 1.05 * spawn["ops_per_s"]
    # spawn is the default: naming it changes no figure.
    assert semsim.simulate(dict(doc, start_order="spawn")).points[0]["ops_per_s"] == spawn["ops_per_s"]


def test_a_bad_start_order_names_the_field():
    with pytest.raises(semsim.InputError, match=r'start_order: must be "spawn" or "shuffled"; got "random"'):
        semsim.load_scenario(dict(TINY, start_order="random"))


def test_a_machine_without_ranges_gives_empty_lists():
    out = semsim.simulate_uncertainty(dict(TINY, machine="laptop-4", threads=[1]))
    section = out.doc["uncertainty"]
    assert section["parameters"] == [] and section["variants"] == []
    assert section["points"][0]["low"] == section["points"][0]["high"] == section["points"][0]["ops_per_s"]


# ------------------------------------------------------------------ the command line

def test_run_uncertainty_writes_the_section_and_the_table(tmp_path, run_cli, small_machine):
    scenario = _write(tmp_path, dict(TINY, machine=str(small_machine), threads=[2]), "s.json")
    proc = run_cli("run", scenario, "--uncertainty", "-o", tmp_path / "out.json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((tmp_path / "out.json").read_text())
    assert doc["uncertainty"]["points"][0]["tornado"]
    # Its three ranged assumptions, and the scenario's start order.
    assert "uncertainty of xeon-24: 4 uncertain parameters, 6 variants simulated" in proc.stderr
    assert "low..high" in proc.stderr and "latency_ns.one_hop" in proc.stderr


@pytest.mark.parametrize("args, what", [
    (["--corners"], "--corners needs --uncertainty"),
    (["--uncertainty=each"], "--uncertainty"),
])
def test_bad_flags_exit_2(tmp_path, run_cli, args, what):
    scenario = _write(tmp_path, TINY, "s.json")
    proc = run_cli("run", scenario, *args)
    assert proc.returncode == 2
    assert what in proc.stderr and proc.stderr.count("\n") == 1


def test_reproduce_uncertainty_flag_is_known(run_cli):
    proc = run_cli("reproduce", "--uncertainty", "--only", "nosuch")
    assert proc.returncode == 2 and "unknown target 'nosuch'" in proc.stderr


# ------------------------------------------------------------------ reproduce rows

def _tiny_target(machine: str) -> rp.Target:
    """A two-scenario target (the seed 001 ratio at N=2, one semaphore each)."""
    def scenarios(s: rp.Settings) -> list[dict]:
        w = {"type": "semop-multi", "semaphores": 2, "pattern": "stride"}
        return [rp._doc(machine, k, w, 2, s) for k in ("global_lock", "per_sem_lock")]

    def evaluate(results: list[dict]) -> tuple[list[rp.Check], list[str]]:
        g, p = rp._rate(results[0]), rp._rate(results[1])
        return ([rp.Check("per-sem/vanilla at N=2", "1.20", f"{p / g:.2f}", rp._within(p / g, 1.2, 0.25)),
                 rp.Check("a shape", "flat", "flat", True)], ["| row |"])

    return rp.Target("tiny", "tiny target", scenarios, evaluate)


def test_reproduce_rows_carry_the_range(tmp_path, monkeypatch, small_machine):
    monkeypatch.setattr(rp, "TARGETS", [_tiny_target(str(small_machine))])
    settings = rp.Settings(duration_ms=0.5, warmup_ms=0.1, seeds=1)
    plain = rp.reproduce(settings, workers=2)[0]
    assert not plain.error and plain.checks[0].low is None
    ranged = rp.reproduce(settings, workers=2, uncertainty=True)[0]
    assert not ranged.error, ranged.error
    ratio, shape = ranged.checks
    assert ratio.predicted == plain.checks[0].predicted
    assert ratio.low <= float(ratio.predicted) <= ratio.high and ratio.low < ratio.high
    assert ratio.within == (ratio.low <= 1.20 <= ratio.high)
    assert ratio.widest.startswith(f"{small_machine}: ")
    assert shape.low is None and shape.within is None  # nothing numeric to range over
    # one_hop and semop_kernel_path low and high, one topology; then the start order
    assert len(ranged.variants) == 6
    assert all(v.startswith(f"{small_machine}: ") for v in ranged.variants[:5])
    assert ranged.variants[5] == "start_order=shuffled"
    path = rp.write_report([ranged], tmp_path, settings)
    text = path.read_text()
    assert "| check | published | predicted | range | in range | widest | result |" in text
    assert f"[{ratio.low:.4g}, {ratio.high:.4g}]" in text
    rp.write_plots([ranged], tmp_path)
    assert (tmp_path / "reproduce-tiny.png").stat().st_size > 0
    # Without --uncertainty the report keeps its columns.
    assert "| check | published | predicted | result |" in rp.write_report([plain], tmp_path, settings).read_text()


def test_reproduce_rows_range_over_the_start_order(monkeypatch):
    """xeon-24's global lock held by ten threads keeps its first waiters' order: the
    start-order variant widens the check's range (laptop-4 has no ranged assumption, so
    it is the only variant)."""
    def scenarios(s: rp.Settings) -> list[dict]:
        w = {"type": "semop-multi", "semaphores": 10, "pattern": "stride"}
        return [rp._doc("xeon-24", "global_lock", w, 10, s), rp._doc("laptop-4", "global_lock", w, 1, s)]

    def evaluate(results: list[dict]) -> tuple[list[rp.Check], list[str]]:
        rate = rp._rate(results[0])
        return [rp.Check("vanilla at N=10", "610,652", f"{rate:.0f}", True)], ["| row |"]

    monkeypatch.setattr(rp, "TARGETS", [rp.Target("order", "order", scenarios, evaluate)])
    monkeypatch.setattr(uncertainty, "machine_uncertainty",
                        lambda machine, corners=False: {"machine": machine, "model_hash": "-",
                                                        "parameters": [], "variants": []})
    settings = rp.Settings(duration_ms=1, warmup_ms=0.5, seeds=1)
    ranged = rp.reproduce(settings, workers=2, uncertainty=True)[0]
    assert not ranged.error, ranged.error
    assert ranged.variants == ["start_order=shuffled"]  # the one-thread scenario is not re-run
    (check,) = ranged.checks
    assert check.widest == "start_order=shuffled"
    assert check.high > 1.05 * float(check.predicted) and check.low == float(check.predicted)


def test_tornado_plot(result, tmp_path):
    fig = uncertainty.plot_tornado(result, point=1, top=4)
    fig.savefig(tmp_path / "t.png")
    assert (tmp_path / "t.png").stat().st_size > 0
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == \
        [b["parameter"] for b in result.doc["uncertainty"]["points"][1]["tornado"][:4]]
    with pytest.raises(semsim.InputError, match="point"):
        uncertainty.plot_tornado(result, point=7)
