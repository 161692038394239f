"""Fuzz test of the input contract (issue 17): several hundred seeded mutations of the
shipped scenarios (scenarios/) and machine files (cpu_models/), each run through the CLI
in a forked child with a time bound. Every case must end in exit 0 with a valid result,
or exit 2 with one line ``semsim: error: <field>: <what>``; never a signal, a hang, exit
1 or 3, or a traceback.

Most cases run ``semsim validate`` (which makes every check ``run`` and ``native``
make); a sample runs ``semsim run`` on a 0.2 ms window. The figures (cases by outcome)
are printed (pytest -s) and written to the test's tmp directory as fuzz-summary.json.
"""

from __future__ import annotations

import collections
import copy
import io
import json
import os
import random
import re
import signal
import sys
import time
from pathlib import Path

from conftest import REPO, SCENARIOS

SEED = 17
SCENARIO_CASES = 300
MACHINE_CASES = 160
RUN_SAMPLE = 40
TIMEOUT_S = 30.0

BAD_VALUES = [0, -1, 1, 2, 2**31, 2**63, 2**64 + 1, 4294967297, 2**53 + 1, 1e300, -1e300, 1e-300, 0.5,
              1e-4, "", "x", "x" * 300, None, True, False, [], {}, [1], [0, -1], {"a": 1}, "host",
              "nowait", "ü", 10**30]
TEXT_NUMBERS = ["1e309", "-1e309", "1" * 400, "1e-400", "0.0000000000000000000000001"]
SLOW_FIELDS = {"duration_ms", "warmup_ms", "threads", "repeats", "loops", "tasks", "repeat", "busy_in",
               "busy_out", "think_ns", "delay", "time_slice", "wake_num", "semaphores", "distance",
               "per_s", "durations_ns"}


def paths(doc, prefix=()):
    """Every (path, value) of a JSON document, containers included."""
    yield prefix, doc
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from paths(v, prefix + (i,))


def parent_of(doc, path):
    for p in path[:-1]:
        doc = doc[p]
    return doc


def mutate_doc(rng: random.Random, doc):
    """One structural mutation; returns (text, touched field names)."""
    doc = copy.deepcopy(doc)
    choices = [p for p, _ in paths(doc) if p]
    path = rng.choice(choices)
    touched = {str(p) for p in path}
    kind = rng.random()
    if kind < 0.55:
        parent_of(doc, path)[path[-1]] = copy.deepcopy(rng.choice(BAD_VALUES))
    elif kind < 0.70:
        parent = parent_of(doc, path)
        del parent[path[-1]]
    elif kind < 0.80:
        objects = [p for p, v in paths(doc) if isinstance(v, dict)]
        parent = parent_of(doc, rng.choice(objects) + ("_",))
        parent[rng.choice(["bogus", "Name", "value ", "source"])] = rng.choice(BAD_VALUES)
        touched = {"_new"}
    elif kind < 0.90:
        # A number the JSON text holds but Python would not write: beyond a double.
        marker = "__NUMBER__"
        parent_of(doc, path)[path[-1]] = marker
        return json.dumps(doc).replace(f'"{marker}"', rng.choice(TEXT_NUMBERS)), touched
    else:
        text = json.dumps(doc, indent=1)
        cut = rng.randrange(len(text))
        op = rng.random()
        if op < 0.4:
            text = text[:cut]
        elif op < 0.7:
            text = text[:cut] + rng.choice(["{", "]", ",", '"', "\\", ":", "\x00", "tru"]) + text[cut:]
        else:
            text = text[:cut] + "[" * 70 + "]" * 70 + text[cut:]
        return text, touched | {"_text"}
    return json.dumps(doc), touched


def outcome(code: int | None, out: str, err: str, command: str | None = None) -> str:
    """A case's outcome: "ok", "error 2" or what went wrong. Without `command`, any exit 0
    is "ok" (its output is not checked)."""
    if code is None:
        return "hang"
    if code < 0:
        return f"signal {-code}"
    if "Traceback" in err:
        return "traceback"
    if code == 0:
        if command is None:
            return "ok"
        if command == "validate":
            return "ok" if out.startswith("ok: ") and out.count("\n") == 1 else "exit 0, bad output"
        try:
            points = json.loads(out)["points"]
        except (ValueError, KeyError, TypeError):
            return "exit 0, bad output"
        return "ok" if isinstance(points, list) and points else "exit 0, bad output"
    if code == 2:
        one_line = err.count("\n") == 1 and err.endswith("\n")
        # The field path or flag: plain text, and quoted parts ("JSON" names, 'repr' values).
        quoted = r"""(?:"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')"""
        named = re.match(rf"""^semsim: error: (?:{quoted}|[^:\s"'])(?:{quoted}|[^:"'])*: .+""", err) is not None
        return "error 2" if one_line and named and len(err) < 1200 else "exit 2, not one named line"
    return f"exit {code}"


def run_case(argv: list[str], tmp: Path) -> tuple[int | None, str, str]:
    """cli.main(argv) in a forked child working in `tmp` (what a case writes lands there),
    stdout/stderr to files, at most TIMEOUT_S."""
    out_path, err_path = tmp / "out.txt", tmp / "err.txt"
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 70
        try:
            out_fd = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            err_fd = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(out_fd, 1)
            os.dup2(err_fd, 2)
            sys.stdout = io.TextIOWrapper(os.fdopen(1, "wb", closefd=False), encoding="utf-8")
            sys.stderr = io.TextIOWrapper(os.fdopen(2, "wb", closefd=False), encoding="utf-8",
                                          errors="backslashreplace")
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.chdir(tmp)
            from semsim import cli

            code = cli.main(argv)
        except BaseException:  # a traceback is an outcome
            import traceback

            traceback.print_exc()
            code = 71
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code if isinstance(code, int) else 72)
    deadline = time.monotonic() + TIMEOUT_S
    status = None
    while time.monotonic() < deadline:
        done, st = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            status = st
            break
        time.sleep(0.002)
    if status is None:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        code = None
    else:
        code = os.waitstatus_to_exitcode(status)
    read = lambda p: p.read_text(encoding="utf-8", errors="backslashreplace") if p.exists() else ""  # noqa: E731
    return code, read(out_path), read(err_path)


def quick(doc: dict) -> dict:
    """A shipped scenario made fast: a short window, few threads, a preset machine."""
    doc = copy.deepcopy(doc)
    doc.update(duration_ms=0.2, warmup_ms=0, repeats=1)
    if doc.get("machine") == "host":
        doc["machine"] = "host-default"
    threads = doc.get("threads")
    if isinstance(threads, list) and len(threads) > 2:
        doc["threads"] = threads[:2]
    return doc


def test_fuzz_inputs(tmp_path):
    rng = random.Random(SEED)
    scenario_files = sorted(p for p in SCENARIOS.rglob("*.json") if not p.name.endswith(".schema.json"))
    machine_files = sorted(p for p in (REPO / "cpu_models").glob("*.json") if "schema" not in p.name)
    scenarios = [quick(json.loads(p.read_text())) for p in scenario_files]
    machines = [json.loads(p.read_text()) for p in machine_files]
    base = quick(json.loads((SCENARIOS / "default.json").read_text()))

    cases = []  # (command, scenario text, machine text or None, runnable)
    for _ in range(SCENARIO_CASES):
        doc = rng.choice(scenarios)
        text, touched = mutate_doc(rng, doc)
        runnable = not (touched & SLOW_FIELDS) and doc["workload"]["type"] != "sem-lockunlock"
        cases.append(("validate", text, None, runnable))
    for _ in range(MACHINE_CASES):
        text, touched = mutate_doc(rng, rng.choice(machines))
        cases.append(("validate", json.dumps(base), text, not (touched & SLOW_FIELDS)))
    runnable = [c for c in cases if c[3]]
    cases += [("run",) + c[1:] for c in rng.sample(runnable, min(RUN_SAMPLE, len(runnable)))]

    counts: collections.Counter[str] = collections.Counter()
    failures = []
    scenario_path, machine_path = tmp_path / "scenario.json", tmp_path / "machine.json"
    started = time.monotonic()
    for i, (command, scenario_text, machine_text, _) in enumerate(cases):
        scenario_path.write_text(scenario_text, encoding="utf-8")
        argv = [command, str(scenario_path)]
        if machine_text is not None:
            machine_path.write_text(machine_text, encoding="utf-8")
            argv += ["--set", f"machine={machine_path}"]
        code, out, err = run_case(argv, tmp_path)
        result = outcome(code, out, err, command)
        counts[f"{command}: {result}"] += 1
        if result not in ("ok", "error 2"):
            failures.append({"case": i, "argv": argv, "outcome": result, "stderr": err[-600:],
                             "scenario": scenario_text[:400], "machine": (machine_text or "")[:400]})
    summary = {"seed": SEED, "cases": len(cases), "seconds": round(time.monotonic() - started, 1),
               "by_outcome": dict(sorted(counts.items()))}
    (tmp_path / "fuzz-summary.json").write_text(json.dumps({**summary, "failures": failures}, indent=2))
    print("\nfuzz:", json.dumps(summary))
    assert not failures, json.dumps(failures[:5], indent=1)
