"""`semsim bench`: how fast the simulator is.

Reports, each as the median of repeats (with min..max):
  * simulated semops per wall-second for the standard cases (marginal: a run of
    4x the duration minus a run of 1x, so engine set-up does not count);
  * the floor: wall time of one sleep_for() of a bare SimGrid actor loop,
    measured in the same process right before each timed run, and our wall time
    per simulated semop as a multiple of it (a ratio, so it holds on any
    machine): the median over the repeats of each run's ratio to its own floor,
    so that a host that slows down between the floor and the cases moves both;
  * peak memory of a run with 1,024 simulated tasks.
Wall-clock figures are noisy on a shared 2-vCPU VM: read the ratios and the
spreads, not single numbers. This is a benchmark, never a timed test.
"""
from __future__ import annotations

import json
import resource
import statistics
import sys
import time
from typing import Any

from . import _core

# The standard cases. Durations keep each run around a second of wall time.
CASES: list[dict[str, Any]] = [
    {"case": "semop-multi 64 thr / 64 sems, uniform-64, global_lock", "machine": "uniform-64",
     "kernel": "global_lock", "threads": 64, "semaphores": 64, "duration_ms": 50.0},
    {"case": "semop-multi 64 thr / 64 sems, uniform-64, hysteresis", "machine": "uniform-64",
     "kernel": "hysteresis", "threads": 64, "semaphores": 64, "duration_ms": 0.5},
    {"case": "semop-multi 256 thr / 128 sems, laptop-4 (4 CPUs), hysteresis", "machine": "laptop-4",
     "kernel": "hysteresis", "threads": 256, "semaphores": 128, "duration_ms": 5.0},
    {"case": "sem-scalebench ping-pong (mode 2), 64 thr, uniform-64, hysteresis", "machine": "uniform-64",
     "kernel": "hysteresis", "threads": 64, "semaphores": 64, "duration_ms": 2.0,
     "workload": {"type": "sem-scalebench", "mode": 2}},
]


def _scenario(case: dict[str, Any], **extra: Any) -> dict[str, Any]:
    doc = {
        "name": "bench",
        "machine": case["machine"],
        "kernel": case["kernel"],
        "workload": case.get("workload", {"type": "semop-multi", "semaphores": case["semaphores"],
                                           "pattern": "stride"}),
        "threads": case["threads"],
        "duration_ms": case["duration_ms"],
        "warmup_ms": 0.1,
        "seed": 1,
        "repeats": 1,
        "precision": 0,  # the full duration: the benchmark times a fixed amount of simulated work
    }
    doc.update(extra)
    return doc


def _timed(case: dict[str, Any], duration_ms: float) -> tuple[float, int, int, int, int]:
    text = _core.load_scenario(json.dumps(_scenario(case, duration_ms=duration_ms)), [])
    handoffs, _, reads, reruns = _core.engine_counters()
    start = time.perf_counter()
    result = json.loads(_core.simulate(text))
    wall = time.perf_counter() - start
    handoffs_after, _, reads_after, reruns_after = _core.engine_counters()
    return (wall, int(result["points"][0]["semops_simulated"]), handoffs_after - handoffs,
            reads_after - reads, reruns_after - reruns)


def time_case(case: dict[str, Any]) -> tuple[float, int, int, int, int]:
    """Marginal wall seconds, semops, actor hand-offs and reads ahead of the clock
    of simulating the case: the difference between a run of 4x the case's
    duration and one of 1x, so that building the engine, machine and tasks (a
    fixed cost per run) does not count; and the runs of both done again after
    a read-ahead conflict (each costs a whole run twice)."""
    short = _timed(case, case["duration_ms"])
    long = _timed(case, 4 * case["duration_ms"])
    return (max(1e-9, long[0] - short[0]), max(1, long[1] - short[1]), max(0, long[2] - short[2]),
            max(0, long[3] - short[3]), short[4] + long[4])


def peak_memory_mib(tasks: int = 1024) -> float:
    """Peak RSS (MiB) of a fresh process simulating `tasks` tasks (the sweeps' runner)."""
    from .sweeps import run_scenarios

    case = {"machine": "uniform-64", "kernel": "hysteresis", "threads": tasks, "semaphores": 64,
            "duration_ms": 0.2}
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    run_scenarios([_scenario(case)], max_workers=1, kind="bench scenario")
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(before, after) / 1024.0


def build_kind() -> str:
    """Which build of the extension runs: the figures of a profile-guided build and a plain
    one differ by about 10 % (validation/bench-speed.md, twenty-first stop)."""
    return {"use": "profile-guided (setup.sh)", "generate": "instrumented for a profile (slow: not a speed figure)",
            "off": "plain (no profile: setup.sh builds a profile-guided one)"}.get(_core.pgo_mode(), _core.pgo_mode())


def pgo_training(out=sys.stdout) -> None:
    """The training run of the profile-guided build (setup.sh, between its two builds), on
    the instrumented extension, in this process: each bench case once, the demo's scenario
    and the shipped host scenarios on two presets, briefly. The profile steers how the
    next build lays out and inlines the model's code, never what it computes; code the
    training does not reach is built as without a profile."""
    from ._data import data_dir, default_scenario_path

    docs = [_scenario(case) for case in CASES]
    default = json.loads(default_scenario_path().read_text())
    docs.append(dict(default, duration_ms=40, precision=0, repeats=1))
    base = data_dir()
    for path in sorted((base / "scenarios" / "host").glob("*.json")) if base is not None else []:
        doc = json.loads(path.read_text())
        for machine in ("box-64", "laptop-4"):
            docs.append(dict(doc, machine=machine, duration_ms=1, warmup_ms=0.1, precision=0, repeats=1))
    tty = out.isatty()
    for k, doc in enumerate(docs, 1):
        _core.simulate(_core.load_scenario(json.dumps(doc), []))
        if tty:
            print(f"\rsemsim: profile training {k}/{len(docs)}", end="", file=out, flush=True)
    print(f"{chr(13) if tty else ''}semsim: profile training: {len(docs)} runs", file=out)


def run(repeats: int = 3, out=sys.stdout) -> dict[str, Any]:
    floors: list[float] = []
    report: dict[str, Any] = {"cases": []}
    print(f"{'case':64s} {'semops/wall-s':>14s} {'spread':>22s} {'x floor':>8s} "
          f"{'hand-offs/op':>12s} {'read-ahead/op':>13s} {'reruns':>6s}", file=out)
    for case in CASES:
        rates, ratios = [], []
        per_op = reads_per_op = 0.0
        reruns = 0
        for _ in range(repeats):
            floor = _core.sleep_floor(64, 20000)  # paired with the run that follows
            wall, semops, handoffs, reads, reruns = time_case(case)
            floors.append(floor)
            rates.append(semops / wall)
            ratios.append((wall / semops) / floor)
            per_op = handoffs / semops  # deterministic: the same every repeat
            reads_per_op = reads / semops
        rate = statistics.median(rates)
        ratio = statistics.median(ratios)
        report["cases"].append({"case": case["case"], "semops_per_wall_s": rate,
                                "min": min(rates), "max": max(rates), "floor_multiple": ratio,
                                "floor_multiple_min": min(ratios), "floor_multiple_max": max(ratios),
                                "handoffs_per_semop": per_op,
                                "read_aheads_per_semop": reads_per_op,
                                "read_ahead_reruns": reruns})
        print(f"{case['case']:64s} {rate:14,.0f} {min(rates):10,.0f}..{max(rates):<10,.0f} "
              f"{ratio:8.2f} {per_op:12.2f} {reads_per_op:13.2f} {reruns:6d}", file=out)
    floor = statistics.median(floors)
    report["floor_ns_per_sleep_for"] = {"median": floor * 1e9, "min": min(floors) * 1e9,
                                        "max": max(floors) * 1e9}
    print(f"floor: bare SimGrid sleep_for = {floor * 1e9:.0f} ns "
          f"({min(floors) * 1e9:.0f}..{max(floors) * 1e9:.0f}), {1 / floor / 1e6:.2f} M/s, "
          f"measured before each run; x floor is the median of each run's ratio to its own", file=out)
    report["build"] = build_kind()
    print(f"build: {report['build']}", file=out)
    mem = peak_memory_mib(1024)
    report["peak_rss_mib_1024_tasks"] = mem
    print(f"peak memory, 1,024 simulated tasks: {mem:.0f} MiB", file=out)
    return report
