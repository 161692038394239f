"""Fuzz test of the command line's flags (the input contract of issue 17, for flags as
test_fuzz_inputs.py is for files): seeded random command lines of the commands that
stay fast on bad input (run, sweep, diff, validate, list, reproduce with a bad --only,
machine import), with values drawn from a list of awkward ones, each run through the CLI
in a forked child with a time bound. Every case must end in exit 0, or exit 2 with one
line ``semsim: error: <field or flag>: <what>``; never a signal, a hang, another status or a
traceback (test_fuzz_inputs.outcome()).

It found `--set=--`: argparse drops a "--" given as a flag's value and handed the command
an empty list (an internal error, exit 1).
"""

from __future__ import annotations

import collections
import json
import random
import time
from pathlib import Path

from test_fuzz_inputs import outcome, run_case

SEED = 19
CASES = 200

VALUES = ["", "0", "-1", "1", "2", "1e9", "nan", "inf", "x", "1..4", "1..64*2", "10..1", "1,2,,4", "a=b",
          "=", "threads=[1]", "workload.semaphores=0", "workload=5", "threads=[]", "seed=-1",
          "duration_ms=1e-9", "0..0", "0..1", "-0.5..1", "999999999", "BASE", "/dev/null",
          "/nonexistent/x.json", "OUT.json", "OUT.csv", "dir/", "global_lock", "hysteresis",
          '{"base":"complex_mode"}', '{"base":1}', "[", "é", "\x7f", "laptop-4", "host", "uniform-64",
          "process", "threads", "a" * 300, "--", "-", "-x", ",", "1.5", "kernel=global_lock",
          "machine=host", "workload.type=nope", "--set=--"]
VALUES += ["--", "-", "="] * 3  # the values argparse treats specially, drawn more often
FLAGS = {
    "run": ["--set", "-o", "--profile", "--folded", "--trace", "--trace-window", "--trace-limit", "-j",
            "--reference-order", "--uncertainty", "--corners"],
    "sweep": ["--threads", "--kernel", "--machine", "--semaphores", "--repeats", "--executor", "-j",
              "--no-progress", "--set", "-o"],
    "diff": ["--kernel", "--repeats", "--set", "-o"],
    "validate": ["--set"],
    "list": [],
    "reproduce": ["-o", "--duration-ms", "--seeds", "-j", "--uncertainty"],
    "machine": ["--format", "--ghz", "--name", "-o", "--costs-from", "--sockets", "--smt", "--drop-smt",
                "--topology", "--numbering", "--gap"],
}
NO_VALUE = {"--profile", "--reference-order", "--uncertainty", "--corners", "--no-progress", "--drop-smt"}
BASE = {"name": "b", "machine": "laptop-4", "kernel": "hysteresis",
        "workload": {"type": "semop-multi", "semaphores": 2}, "threads": [1, 2], "duration_ms": 0.3,
        "warmup_ms": 0.1, "seed": 1, "repeats": 1}


def write_matrix(path: Path) -> Path:
    """A 4-CPU core-to-core table in nviennot's layout: two SMT pairs on one die."""
    ns = {(1, 0): 7.0, (2, 0): 20.0, (2, 1): 20.5, (3, 0): 20.2, (3, 1): 19.8, (3, 2): 7.1}
    lines = ["# SOURCE: test, synthetic", "# MACHINE: 'Test CPU @ 2.00GHz' (synthetic)", "# UNIT: ns",
             "cpu_i,cpu_j,latency_ns"] + [f"{i},{j},{v}" for (i, j), v in sorted(ns.items())]
    path.write_text("\n".join(lines) + "\n")
    return path


def command_line(rng: random.Random, base: str, out: str, matrix: str) -> list[str]:
    command = rng.choice(sorted(FLAGS))
    argv = [command]
    if command == "machine":
        argv += [rng.choice(["import", "import", "x"]), rng.choice([matrix, matrix, base, "nope.csv", ""])]
        if rng.random() < 0.6:
            argv += ["--format", "nviennot"]
    if command in ("run", "sweep", "validate", "diff") and rng.random() < 0.9:
        argv.append(rng.choice([base, base, "nope.json", "", "-"]))
    if command == "diff" and rng.random() < 0.5:
        argv.append(rng.choice([base, out]))
    for _ in range(rng.randint(0, 4) if FLAGS[command] else 0):
        flag = rng.choice(FLAGS[command])
        value = rng.choice(VALUES).replace("BASE", base).replace("OUT", out)
        attach = rng.random()
        if flag in NO_VALUE:
            argv.append(flag)
        elif attach < 0.3:
            argv.append(f"{flag}={value}")
        elif attach < 0.4 and not flag.startswith("--"):
            argv.append(flag + value)  # -j4, -o--
        else:
            argv += [flag, value]
    if command == "reproduce":  # a bad target keeps it fast: refused before any work
        argv += ["--only", rng.choice(["nope", "", "locks,nope", "--"])]
    return argv


def test_fuzz_flags(tmp_path: Path):
    rng = random.Random(SEED)
    base = tmp_path / "base.json"
    base.write_text(json.dumps(BASE))
    matrix = write_matrix(tmp_path / "c2c.csv")
    counts: collections.Counter[str] = collections.Counter()
    failures = []
    started = time.monotonic()
    for i in range(CASES):
        argv = command_line(rng, str(base), str(tmp_path / "out"), str(matrix))
        code, out, err = run_case(argv, tmp_path)
        result = outcome(code, out, err)
        counts[f"{argv[0]}: {result}"] += 1
        if result not in ("ok", "error 2"):
            failures.append({"case": i, "argv": argv, "outcome": result, "stderr": err[-600:]})
    summary = {"seed": SEED, "cases": CASES, "seconds": round(time.monotonic() - started, 1),
               "by_outcome": dict(sorted(counts.items()))}
    print("\nfuzz:", json.dumps(summary))
    assert not failures, json.dumps(failures[:5], indent=1)
