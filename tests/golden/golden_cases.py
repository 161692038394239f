"""The golden-output guard: the simulation output of every shipped scenario and of
every scenario `semsim reproduce` writes, at small settings, recorded as files.

A refactoring that must not change model behaviour keeps these byte-identical
(`tests/python/test_golden.py`). A change that is meant to move results records
them again (`python3 tests/golden/golden_cases.py --record`) and says why in its
commit message.
"""
from __future__ import annotations

import argparse
import copy
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).resolve().parent / "outputs"
# Small windows, no adaptive stop: the guard is about bytes, not accuracy.
SMALL = {"duration_ms": 2.0, "warmup_ms": 0.5, "precision": 0}
# The host scenarios name "host"; a guard must not depend on this host's calibration.
HOST_STANDINS = ["laptop-4", "box-64"]


def _shipped() -> dict[str, dict[str, Any]]:
    cases: dict[str, dict[str, Any]] = {}
    for path in sorted((ROOT / "scenarios").rglob("*.json")):
        if path.name.endswith(".schema.json"):
            continue
        doc = json.loads(path.read_text())
        machines = HOST_STANDINS if doc.get("machine") == "host" else [doc["machine"]]
        for machine in machines:
            d = copy.deepcopy(doc)
            d.update(SMALL, machine=machine)
            if isinstance(d.get("threads"), list):
                d["threads"] = [t for t in d["threads"] if t <= 16][:3] or d["threads"][:1]
            rel = path.relative_to(ROOT / "scenarios").with_suffix("")
            cases[f"scenario-{str(rel).replace('/', '-')}-{machine}"] = d
    return cases


def _reproduce() -> dict[str, dict[str, Any]]:
    from semsim import reproduce as r

    settings = r.Settings(duration_ms=SMALL["duration_ms"], warmup_ms=SMALL["warmup_ms"], seeds=1)
    cases: dict[str, dict[str, Any]] = {}
    for target in r.TARGETS:
        for i, doc in enumerate(target.scenarios(settings)):
            d = copy.deepcopy(doc)
            d["precision"] = 0
            cases[f"reproduce-{target.name}-{i:03d}"] = d
    return cases


def cases() -> dict[str, dict[str, Any]]:
    return {**_shipped(), **_reproduce()}


def outputs(docs: dict[str, dict[str, Any]], workers: int | None = None) -> dict[str, str]:
    """Each case's result as the bytes we keep: provenance's version line dropped
    (a release bump is not a behaviour change)."""
    from semsim.reproduce import run_all

    names = sorted(docs)
    results = run_all([docs[n] for n in names], workers)
    out = {}
    for name, res in zip(names, results):
        res.get("provenance", {}).pop("semsim_version", None)
        out[name] = json.dumps(res, indent=1, sort_keys=True) + "\n"
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--record", action="store_true", help="write tests/golden/outputs/")
    ap.add_argument("-j", type=int, default=None)
    args = ap.parse_args()
    got = outputs(cases(), args.j)
    if args.record:
        OUT.mkdir(exist_ok=True)
        for old in OUT.glob("*.json"):
            old.unlink()
        for name, text in got.items():
            (OUT / f"{name}.json").write_text(text)
        print(f"recorded {len(got)} golden outputs in {OUT}")
        return 0
    bad = [n for n, t in got.items() if not (OUT / f"{n}.json").is_file()
           or (OUT / f"{n}.json").read_text() != t]
    print(f"{len(got) - len(bad)} of {len(got)} golden outputs identical")
    for n in bad:
        print(f"  differs: {n}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
