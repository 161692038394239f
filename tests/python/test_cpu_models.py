"""Checks of the machine models in cpu_models/ (format: cpu_models/README.md).

Every preset must validate against cpu_models/machine.schema.json, carry a
source for every parameter, and be consistent: the CPU count matches the
topology, the latency classes that can occur on the topology are present and
ordered by distance, socket_hops is a well-formed hop matrix, and both CPU
numbering schemes map the CPU ids one-to-one onto (socket, die, core, thread).
"""

import json
import math
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "cpu_models"
SCHEMA_PATH = MODELS / "machine.schema.json"

REQUIRED_PRESETS = {
    "i3-ivybridge",
    "laptop-4",
    "xeon-24",
    "opteron-48",
    "westmere-ex-80",
    "box-64",
    "haswell-48",
    "uniform-64",
    "host-default",
}

CLASS_ORDER = ["smt", "same_die", "same_socket", "one_hop", "two_hops"]
HOP_CLASS = {1: "one_hop", 2: "two_hops"}


def _no_duplicate_keys(pairs):
    keys = [k for k, _ in pairs]
    dupes = sorted({k for k in keys if keys.count(k) > 1})
    if dupes:
        raise ValueError(f"duplicate keys {dupes}")
    return dict(pairs)


def _load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f, object_pairs_hook=_no_duplicate_keys)


def _model_paths():
    return sorted(p for p in MODELS.glob("*.json") if p.name != SCHEMA_PATH.name)


MODEL_PATHS = _model_paths()
IDS = [p.stem for p in MODEL_PATHS]


@pytest.fixture(scope="module")
def validator():
    schema = _load(SCHEMA_PATH)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


@pytest.fixture(params=MODEL_PATHS, ids=IDS)
def model(request):
    return _load(request.param), request.param


# --------------------------------------------------------------- numbering
def cpu_location(cpu, topo):
    """(socket, die, core, thread) of a logical CPU id; see README 'CPU numbering'."""
    S, D = topo["sockets"], topo["dies_per_socket"]
    C, T = topo["cores_per_die"], topo["threads_per_core"]
    if topo["numbering"] == "smt-adjacent":
        thread = cpu % T
        core_global = cpu // T
        core = core_global % C
        die_global = core_global // C
        return die_global // D, die_global % D, core, thread
    # linux: first threads of all cores (sockets round-robin), then each further sibling set
    cores = S * D * C
    thread = cpu // cores
    k = cpu % cores
    socket = k % S
    j = k // S
    return socket, j // C, j % C, thread


def distance_class(a, b, topo):
    """Latency class of a transfer between two distinct CPUs; see README 'Distance classes'."""
    sa, da, ca, _ = cpu_location(a, topo)
    sb, db, cb, _ = cpu_location(b, topo)
    if (sa, da, ca) == (sb, db, cb):
        return "smt"
    if (sa, da) == (sb, db):
        return "same_die"
    if sa == sb:
        return "same_socket"
    hops = topo.get("socket_hops")
    return HOP_CLASS[hops[sa][sb] if hops else 1]


def occurring_classes(topo):
    classes = set()
    if topo["threads_per_core"] > 1:
        classes.add("smt")
    if topo["cores_per_die"] > 1:
        classes.add("same_die")
    if topo["dies_per_socket"] > 1:
        classes.add("same_socket")
    if topo["sockets"] > 1:
        hops = topo.get("socket_hops")
        if hops is None:
            classes.add("one_hop")
        else:
            for i, row in enumerate(hops):
                for j, h in enumerate(row):
                    if i != j:
                        classes.add(HOP_CLASS[h])
    return classes


# --------------------------------------------------------------- tests
def test_schema_is_valid_draft_2020_12():
    schema = _load(SCHEMA_PATH)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)


def test_all_presets_present():
    missing = REQUIRED_PRESETS - set(IDS)
    assert not missing, f"missing presets: {sorted(missing)}"


def test_validates_against_schema(model, validator):
    m, path = model
    errors = sorted(validator.iter_errors(m), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{path.name}: {'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors)


def test_name_is_file_stem(model):
    m, path = model
    assert m["name"] == path.stem


def test_cpus_match_topology(model):
    m, _ = model
    t = m["topology"]
    assert isinstance(m["cpus"], int) and not isinstance(m["cpus"], bool)
    assert m["cpus"] == t["sockets"] * t["dies_per_socket"] * t["cores_per_die"] * t["threads_per_core"]


def _params(node, path=""):
    if isinstance(node, dict):
        if "value" in node:
            yield path, node
        for k, v in node.items():
            if k != "value":
                yield from _params(v, f"{path}/{k}")


def test_every_parameter_has_a_source(model):
    m, path = model
    params = list(_params(m))
    assert len(params) >= 13 + 3, "expected the costs, memory latency, clock and at least one latency class"
    for where, p in params:
        value = p["value"]
        if where == "/wakeup_preemption":  # a scheduler behaviour: on or off
            assert isinstance(value, bool), f"{path.name}{where}"
        elif where in ("/switch_refill_ns", "/switch_refill_process_ns"):  # [[distance, ns], ...]
            assert value and all(isinstance(d, int) and isinstance(ns, (int, float)) and ns >= 0
                                 for d, ns in value), f"{path.name}{where}"
            assert [d for d, _ in value] == sorted({d for d, _ in value}), f"{path.name}{where}"
        elif where == "/wakeup_jitter":  # {"waker": [...], "wakee": [...]}, multiples of the mean
            assert set(value) == {"waker", "wakee"}, f"{path.name}{where}"
            for side in value.values():
                assert len(side) >= 2 and all(isinstance(x, (int, float)) and x > 0 for x in side), (
                    f"{path.name}{where}")
        elif where == "/os_noise":  # {"per_s": rate, "durations_ns": [...]}
            assert set(value) == {"per_s", "durations_ns"}, f"{path.name}{where}"
            assert value["per_s"] >= 0 and value["durations_ns"], f"{path.name}{where}"
            assert all(isinstance(x, (int, float)) and x > 0 for x in value["durations_ns"]), (
                f"{path.name}{where}")
        else:
            assert isinstance(value, (int, float)) and not isinstance(value, bool), f"{path.name}{where}"
        src = p.get("source")
        assert isinstance(src, str) and src.strip(), f"{path.name}{where}: empty source"
        if src.lower().startswith("assumption"):
            assert src.startswith("assumption:") and src[len("assumption:"):].strip(), (
                f"{path.name}{where}: an assumption must read 'assumption: <justification>'")
    assert isinstance(m["topology"].get("source"), str) and m["topology"]["source"].strip()


def test_latency_classes_present_for_topology(model):
    m, _ = model
    t = m["topology"]
    present = set(m["latency_ns"])
    needed = occurring_classes(t)
    assert needed <= present, f"missing latency classes {sorted(needed - present)}"
    if t["sockets"] == 1:
        assert not {"one_hop", "two_hops"} & needed
    else:
        assert "one_hop" in present


def test_latency_increases_with_distance(model):
    m, _ = model
    values = [(c, m["latency_ns"][c]["value"]) for c in CLASS_ORDER if c in m["latency_ns"]]
    for (c1, v1), (c2, v2) in zip(values, values[1:]):
        assert v1 <= v2, f"{c1} ({v1} ns) > {c2} ({v2} ns)"
    assert all(v > 0 for _, v in values)


def test_socket_hops_well_formed(model):
    m, _ = model
    t = m["topology"]
    hops = t.get("socket_hops")
    if hops is None:
        return
    n = t["sockets"]
    assert len(hops) == n and all(len(row) == n for row in hops)
    for i in range(n):
        assert hops[i][i] == 0
        for j in range(n):
            assert hops[i][j] == hops[j][i]
            if i != j:
                assert hops[i][j] in HOP_CLASS
    # hop counts are shortest paths: a 2-hop pair has a common 1-hop neighbour
    for i in range(n):
        for j in range(n):
            if hops[i][j] == 2:
                assert any(hops[i][k] == 1 and hops[k][j] == 1 for k in range(n)), (i, j)


def test_numbering_is_a_bijection(model):
    m, _ = model
    t = m["topology"]
    locs = [cpu_location(c, t) for c in range(m["cpus"])]
    assert len(set(locs)) == m["cpus"]
    for s, d, c, th in locs:
        assert 0 <= s < t["sockets"] and 0 <= d < t["dies_per_socket"]
        assert 0 <= c < t["cores_per_die"] and 0 <= th < t["threads_per_core"]


def test_every_cpu_pair_has_a_latency(model):
    m, _ = model
    t = m["topology"]
    n = m["cpus"]
    seen = set()
    for a in range(n):
        for b in range(n):
            if a != b:
                seen.add(distance_class(a, b, t))
    missing = sorted(seen - set(m["latency_ns"]))
    assert seen <= set(m["latency_ns"]), f"pairs fall in classes without a latency: {missing}"


def test_numbering_examples():
    i3 = _load(MODELS / "i3-ivybridge.json")["topology"]
    assert i3["numbering"] == "smt-adjacent"
    assert distance_class(0, 1, i3) == "smt" and distance_class(2, 3, i3) == "smt"
    assert distance_class(0, 2, i3) == "same_die"
    laptop = _load(MODELS / "laptop-4.json")["topology"]
    assert distance_class(0, 2, laptop) == "smt" and distance_class(0, 1, laptop) == "same_die"
    xeon = _load(MODELS / "xeon-24.json")["topology"]
    assert cpu_location(0, xeon) == (0, 0, 0, 0)
    assert cpu_location(1, xeon) == (1, 0, 0, 0)
    assert cpu_location(2, xeon) == (0, 0, 1, 0)
    assert cpu_location(12, xeon) == (0, 0, 0, 1)
    assert distance_class(0, 12, xeon) == "smt" and distance_class(0, 1, xeon) == "one_hop"
    opteron = _load(MODELS / "opteron-48.json")["topology"]
    assert distance_class(0, 5, opteron) == "same_die"
    assert distance_class(0, 6, opteron) == "one_hop"  # package mate
    assert distance_class(0, 12, opteron) == "one_hop"
    assert distance_class(0, 18, opteron) == "two_hops"


def test_time_slice_follows_cfs_default(model):
    m, _ = model
    if "generator" in m.get("provenance", {}):
        pytest.skip("a calibrated model carries the measured slice, not the formula")
    factor = 1 + int(math.log2(min(m["cpus"], 8)))
    assert m["costs_ns"]["time_slice"]["value"] == pytest.approx(750_000 * factor)


def test_cycle_conversions_agree_with_clock(model):
    """Values whose source states 'N cycles / G GHz' must equal N / G."""
    m, path = model
    import re

    pattern = re.compile(r"(\d+(?:\.\d+)?) cycles / (\d+(?:\.\d+)?) GHz\s*$")
    for where, p in _params(m):
        hit = pattern.search(p["source"])
        if hit:
            cycles, ghz = float(hit.group(1)), float(hit.group(2))
            # A [[distance, ns], ...] table derived from cycles: every entry.
            values = [ns for _, ns in p["value"]] if isinstance(p["value"], list) else [p["value"]]
            for value in values:
                assert value == pytest.approx(cycles / ghz, rel=1e-3), f"{path.name}{where}"
