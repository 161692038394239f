"""scenarios/scenario.schema.json: every shipped scenario follows it, and it agrees with the loader."""

from __future__ import annotations

import json

import jsonschema
import pytest

import semsim
from conftest import DEFAULT_SCENARIO, SCENARIOS

SCHEMA = json.loads((SCENARIOS / "scenario.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
FILES = sorted(p for p in SCENARIOS.rglob("*.json") if not p.name.endswith(".schema.json"))


def test_schema_is_valid():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert FILES, "no scenario files found"


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(SCENARIOS)) for p in FILES])
def test_scenario_file_follows_schema(path, calibrated_host):
    doc = json.loads(path.read_text())
    errors = sorted(VALIDATOR.iter_errors(doc), key=lambda e: list(e.path))
    assert not errors, "; ".join(f"{'/'.join(map(str, e.path))}: {e.message}" for e in errors)
    semsim.load_scenario(path)  # and the C++ loader accepts it


def test_enums_match_the_catalog():
    cat = semsim.catalog()
    assert set(SCHEMA["$defs"]["kernel_id"]["enum"]) == {k["id"] for k in cat["kernels"]}
    assert set(SCHEMA["properties"]["workload"]["properties"]["type"]["enum"]) == {
        w["type"] for w in cat["workloads"]
    }


def test_kernel_policies_match_the_catalog():
    # The schema's what-if keys are the policies every generation lists (semsim list --policies).
    what_if = next(o for o in SCHEMA["properties"]["kernel"]["oneOf"] if o.get("type") == "object")
    keys = set(what_if["properties"]) - {"base", "header"}  # header: a name for header_bytes
    for k in semsim.catalog()["kernels"]:
        assert set(k["policy"]) == keys, k["id"]
        # and each generation's id names its own policies
        assert semsim.load_scenario(DEFAULT_SCENARIO, kernel={"base": k["id"], **k["policy"]})


def _mutated(path: str, value):
    doc = json.loads(DEFAULT_SCENARIO.read_text())
    node = doc
    keys = path.split(".")
    for key in keys[:-1]:
        node = node[key]
    if value is _DELETE:
        del node[keys[-1]]
    else:
        node[keys[-1]] = value
    return doc


class _Delete:
    def __repr__(self) -> str:
        return "<deleted>"


_DELETE = _Delete()

REJECTED = [
    ("colour", "blue"),
    ("kernel", "no_such_kernel"),
    ("kernel", {"base": "no_such_kernel"}),
    ("threads", 0),
    ("threads", []),
    ("threads", [1, -2]),
    ("threads", "4"),
    ("workload.semaphores", 0),
    ("workload.semaphore", 4),
    ("workload.pattern", "diagonal"),
    ("workload.pin", "sometimes"),
    ("workload.type", "no-such-workload"),
    ("duration_ms", 0),
    ("warmup_ms", -1),
    ("seed", -1),
    ("repeats", 0),
    ("workload", _DELETE),
    ("machine", _DELETE),
    ("threads", 5000),
    ("kernel", {"base": "hysteresis", "spinlok": "ticket"}),
    ("kernel", {"spinlock": "ticket"}),
    ("kernel", {"base": "global_lock", "fence": "sometimes"}),
    ("kernel", 3),
]

ACCEPTED = [
    ("threads", 3),
    ("workload.pattern", "own"),
    ("workload.pattern", "random"),
    ("workload.pin", "unpinned"),
    ("kernel", "global_lock"),
    ("warmup_ms", 0),
    ("name", _DELETE),
    ("description", "free text"),
    ("kernel", {"base": "global_lock"}),
    ("kernel", {"base": "global_lock", "spinlock": "queued", "fence": "full", "sem_layout": "aligned64"}),
    ("kernel", {"base": "hysteresis", "hysteresis": 1, "wakeup": "in_wakeup", "fence": "full"}),
    ("kernel", {"base": "per_sem_lock", "otime": "per_sem", "sem_layout": "aligned64", "queues": "merged",
                "array_layout": "v3_11", "header": "ipc_rcu64"}),
]


@pytest.mark.parametrize("path,value", REJECTED, ids=[f"{p}={v!r}" for p, v in REJECTED])
def test_schema_and_loader_reject(path, value):
    doc = _mutated(path, value)
    assert list(VALIDATOR.iter_errors(doc)), "the schema accepts it"
    with pytest.raises(semsim.InputError):
        semsim.load_scenario(doc)


@pytest.mark.parametrize("path,value", ACCEPTED, ids=[f"{p}={v!r}" for p, v in ACCEPTED])
def test_schema_and_loader_accept(path, value):
    doc = _mutated(path, value)
    assert not list(VALIDATOR.iter_errors(doc))
    semsim.load_scenario(doc)


def test_the_swingbench_scenarios_follow_the_schema():
    # Several sets, semctl(SETVAL) posts and the lock_all what-if kernel (v3 as posted).
    from semsim import reproduce_swingbench as sb

    for doc in (sb.doc(sb.KERNEL_DOCS["per_sem_lock"], 400, 1.0, 1),
                sb.doc("global_lock", 100, 1.0, 1, post="semop")):
        errors = list(VALIDATOR.iter_errors(doc))
        assert not errors, errors[0].message
        semsim.load_scenario(doc)
    bad = sb.doc("global_lock", 100, 1.0, 1)
    bad["workload"]["tasks"][0]["ops"][0]["sops"] = [[0, 1]]  # both sops and setval
    assert list(VALIDATOR.iter_errors(bad))
