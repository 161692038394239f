"""Fast path against reference mode on random scenarios: the time-order invariant, fuzzed.

core/simulation.hpp promises that the fast path (turns taken inline, owed turns,
read-ahead of quiet lines, SMT runs) gives the same bytes as the reference mode,
which queues at every turn. tests/cpp holds that promise on a fixed set; this tool
draws scenarios the fixed set does not hold -- every preset, with and without OS
noise and wake-up IPIs, every generation and random policy overrides, every
workload with random fields, oversubscription, pinned and unpinned placement, both
start orders -- runs each both ways and compares the result documents byte for byte.

    python3 tests/fuzz/order_fuzz.py --seed 7 --runs 200 --duration-ms 1 --jobs 2 --out /tmp/fz
    python3 tests/fuzz/order_fuzz.py --presets uniform-64,host-default --ipi-share 0 --runs 200

(The second draws only where a spinlock's settled wait owes its turn: no SMT, no wake-up
IPI; machine/spinlock.hpp, "Time order".)

A difference is written to OUT as case-N.json (with its machine file beside it) and
replays with `semsim run case-N.json` and `semsim run --reference-order case-N.json`.
Exit status 0: no difference; 1: some; 2: bad arguments. The same seed draws the same
scenarios. tests/python/test_order_fuzz.py runs a short slice of it in CI.
"""

from __future__ import annotations

import argparse
import functools
import json
import multiprocessing
import random
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
GENERATIONS = ["global_lock", "rwlock", "per_sem_lock", "per_sem_lock_rc", "split_queues",
               "moved_otime", "wait_array", "complex_mode", "hysteresis"]
# Policy overrides of a kernel object (scenario.schema.json, "kernel") and their values.
POLICIES: dict[str, list[Any]] = {
    "spinlock": ["ticket", "queued", "cna"],
    "sem_lock": ["global_lock", "rwlock", "per_sem_lock", "lock_all", "wait_array", "complex_mode",
                 "hysteresis"],
    "fence": ["none", "full", "rmb"],
    "hysteresis": [1, 10],
    "sem_layout": ["packed24", "packed32", "unaligned48", "unaligned56", "aligned64"],
    "array_layout": ["v3_9", "v3_10_split", "v3_11", "v4_8", "current"],
    "otime": ["array", "per_sem"],
    "otime_all_ops": [False, True],
    "queues": ["global", "one_list", "merged"],
    "missed_wakeup_fix": [False, True],
    "blocking_store": [False, True],
    "two_pass": [False, True],
    "wakeup": ["in_wakeup", "wake_q"],
    "header_bytes": [0, 16, 40],
}
# OS noise variants: none, dense short interruptions, sparse long ones (per second, ns).
NOISES: list[dict[str, Any] | None] = [
    None,
    {"per_s": 200000.0, "durations_ns": [300.0, 2000.0]},
    {"per_s": 20000.0, "durations_ns": [1000.0, 20000.0]},
]
THREADS = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64]


@dataclass
class Outcome:
    runs: int = 0      # scenarios run both ways
    refused: int = 0   # scenarios the loader refused (a drawn combination that is not allowed)
    errors: int = 0    # run both ways to the same error (e.g. a deadlock the workload allows)
    diffs: list[dict[str, Any]] = field(default_factory=list)


@functools.cache
def presets() -> tuple[str, ...]:
    return tuple(sorted(p.stem for p in (REPO / "cpu_models").glob("*.json") if p.stem != "machine.schema"))


@functools.cache
def host_scenarios() -> tuple[Path, ...]:
    return tuple(sorted((REPO / "scenarios" / "host").glob("*.json")))


@dataclass(frozen=True)
class Machines:
    """Which machines the scenarios are drawn on: some presets only (None: all), and the
    share of them given a 3 us wake-up IPI. The defaults draw what the tool always drew."""
    presets: tuple[str, ...] | None = None
    ipi_share: float = 0.3


def machine_file(rng: random.Random, workdir: Path, machines: Machines = Machines()) -> tuple[Path, int]:
    """A preset, maybe with OS noise and a wake-up IPI cost added; its path and CPU count."""
    name = rng.choice(machines.presets or presets())
    model = json.loads((REPO / "cpu_models" / f"{name}.json").read_text())
    noise = rng.choice(NOISES)
    ipi = rng.random() < machines.ipi_share
    if noise is not None:
        model["os_noise"] = {"value": noise, "source": "order fuzz"}
    if ipi:
        model.setdefault("costs_ns", {})["ipi_target"] = {"value": 3000.0, "source": "order fuzz"}
    model["name"] = f"fz-{name}-{'noise' if noise else 'quiet'}{'-ipi' if ipi else ''}"
    path = workdir / f"{model['name']}-{noise['per_s'] if noise else 0:.0f}.json"
    path.write_text(json.dumps(model, indent=1))
    return path, int(model["cpus"])


def kernel(rng: random.Random) -> Any:
    base = rng.choice(GENERATIONS)
    if rng.random() < 0.7:
        return base
    doc: dict[str, Any] = {"base": base}
    for key in rng.sample(sorted(POLICIES), rng.randint(1, 3)):
        doc[key] = rng.choice(POLICIES[key])
    return doc


def workload(rng: random.Random) -> dict[str, Any]:
    pin = {"pin": rng.choice(["pinned", "unpinned"])} if rng.random() < 0.3 else {}
    kind = rng.choice(["semop-multi", "sem-scalebench", "sem-lockunlock", "aim9-shm", "lat-sem",
                       "sembench", "lock-stress", "locktorture", "host"])
    if kind == "host":  # a shipped host scenario's workload as it is
        return json.loads(rng.choice(host_scenarios()).read_text())["workload"]
    if kind == "semop-multi":
        return {"type": kind, "semaphores": rng.choice([1, 2, 8, 64, 128]),
                "pattern": rng.choice(["stride", "own", "random"]), **pin}
    if kind == "sem-scalebench":
        doc = {"type": kind, "mode": rng.choice([1, 2, 4]), **pin}
        if rng.random() < 0.3:
            doc["threads_per_core"] = rng.choice([2, 4])  # oversubscribed CPUs
        if rng.random() < 0.3:
            doc["interleave"] = rng.choice([2, 3])
        if rng.random() < 0.3:
            doc["delay"] = rng.choice([1, 10])
        if doc["mode"] == 2 and rng.random() < 0.3:
            doc["complex_every"] = rng.choice([2, 7])
        return doc
    if kind == "sem-lockunlock":
        return {"type": kind, "semaphores": rng.choice([1, 4, 64]), "loops": rng.choice([100, 400]),
                "busy_in": rng.choice([0, 20]), "busy_out": rng.choice([0, 50]), **pin}
    if kind == "aim9-shm":
        return {"type": kind, "loops": rng.choice([1, 4]), **pin}
    if kind == "sembench":
        return {"type": kind, "wake_num": rng.choice([1, 4, 16]), "wake_batch": rng.choice([1, 8]), **pin}
    if kind == "lock-stress":
        return {"type": kind, "lock": rng.choice(["ticket", "mcs", "tas", "ttas"]),
                "critical_cycles": rng.choice([0, 100, 1000]), "delay_cycles": rng.choice([0, 200, 3000]),
                "data_lines": rng.choice([0, 1, 4]),
                "pin": rng.choice(["pinned", "unpinned", "compact", "spread", "cores-first"])}
    if kind == "locktorture":
        return {"type": kind, "longdelay_ms": rng.choice([0, 1]), "shortdelay_us": rng.choice([0, 2]),
                "pin": rng.choice(["pinned", "unpinned", "compact", "spread", "cores-first"])}
    return {"type": kind, **pin}  # lat-sem


def scenario(rng: random.Random, workdir: Path, duration_ms: float,
             machines: Machines = Machines()) -> dict[str, Any]:
    machine, cpus = machine_file(rng, workdir, machines)
    load = workload(rng)
    # Up to twice the CPUs (oversubscription), even for ping-pong pairs.
    threads = rng.choice([t for t in THREADS if t <= 2 * cpus] or [1])
    if load["type"] == "sem-scalebench" and load.get("mode") == 2:
        threads = max(2, threads - threads % 2)
    if load["type"] == "lat-sem":
        threads = 2  # a ping-pong between exactly two processes
    return {"name": "order-fuzz", "machine": str(machine), "kernel": kernel(rng), "workload": load,
            "threads": threads, "duration_ms": duration_ms, "warmup_ms": 0.05, "precision": 0,
            "repeats": 1, "seed": rng.randint(1, 10**6),
            "start_order": rng.choice(["spawn", "spawn", "shuffled"])}


def run_both(core: Any, text: str) -> tuple[str, str]:
    out = []
    for reference in (False, True):
        core.set_reference_order(reference)
        try:
            out.append(core.simulate(text))
        except Exception as e:  # an error must be the same error both ways
            out.append(f"error {type(e).__name__}: {e}")
        finally:
            core.set_reference_order(False)
    return out[0], out[1]


def check(doc: dict[str, Any], compare: Any = run_both) -> tuple[bool, bool, bool]:
    """One drawn scenario: (run at all, the bytes differ, both ended in the same error)."""
    from semsim import _core

    try:
        text = _core.load_scenario(json.dumps(doc), [])
    except _core.InputError:
        return False, False, False
    fast, reference = compare(_core, text)
    return True, fast != reference, fast.startswith("error ") and fast == reference


def fuzz(seed: int, runs: int, duration_ms: float, out: Path | None = None, progress: bool = False,
         compare: Any = run_both, jobs: int = 1, machines: Machines = Machines()) -> Outcome:
    """Draw `runs` scenarios from `seed` on `machines` and run each fast and in reference
    mode (`jobs` at once in forked processes: the same scenarios, the same outcome)."""
    result = Outcome()
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="order-fuzz-") as tmp:
        rng = random.Random(seed)
        docs = [scenario(rng, Path(tmp), duration_ms, machines) for _ in range(runs)]
        if jobs > 1:
            pool = multiprocessing.get_context("fork").Pool(jobs)
            outcomes = pool.imap(check, docs)
        else:
            pool = None
            outcomes = (check(doc, compare) for doc in docs)
        try:
            for i, (doc, (ran, differs, error)) in enumerate(zip(docs, outcomes)):
                result.runs += ran
                result.refused += not ran
                result.errors += error
                if differs:
                    result.diffs.append(doc)
                    if out is not None:
                        save(out, len(result.diffs), doc)
                    print(f"order fuzz: DIFFERENT bytes: {describe(doc)}", file=sys.stderr)
                if progress:
                    print(f"\rorder fuzz: {i + 1}/{runs} drawn, {result.runs} run, {len(result.diffs)} different, "
                          f"{time.monotonic() - start:.0f} s", end="", file=sys.stderr, flush=True)
        finally:
            if pool is not None:
                pool.terminate()
    if progress:
        print(file=sys.stderr)
    return result


def describe(doc: dict[str, Any]) -> str:
    return (f"{Path(doc['machine']).stem} {json.dumps(doc['kernel'])} {json.dumps(doc['workload'])} "
            f"threads={doc['threads']} seed={doc['seed']} start_order={doc['start_order']}")


def save(out: Path, n: int, doc: dict[str, Any]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    machine = out / f"case-{n}-machine.json"
    machine.write_text(Path(doc["machine"]).read_text())
    (out / f"case-{n}.json").write_text(json.dumps({**doc, "machine": str(machine.resolve())}, indent=1) + "\n")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seed", type=int, default=1, help="draws the scenarios (default 1)")
    p.add_argument("--runs", type=int, default=50, help="scenarios to draw (default 50)")
    p.add_argument("--duration-ms", type=float, default=1.0, help="simulated window of each (default 1)")
    p.add_argument("--out", type=Path, help="where to write the scenarios that differ")
    p.add_argument("--jobs", type=int, default=1, help="scenarios at once, in forked processes (default 1)")
    p.add_argument("--presets", help="draw on these presets only, comma-separated (default: every one)")
    p.add_argument("--ipi-share", type=float, default=0.3,
                   help="share of the draws given a 3 us wake-up IPI, 0..1 (default 0.3)")
    args = p.parse_args(argv)
    if args.runs < 1 or args.jobs < 1 or not 0 < args.duration_ms <= 1000:
        print("order_fuzz: --runs and --jobs must be >= 1 and --duration-ms in (0, 1000]", file=sys.stderr)
        return 2
    if not 0 <= args.ipi_share <= 1:
        print("order_fuzz: --ipi-share must be in [0, 1]", file=sys.stderr)
        return 2
    chosen = tuple(args.presets.split(",")) if args.presets else None
    if chosen is not None and (unknown := [n for n in chosen if n not in presets()]):
        print(f"order_fuzz: --presets: unknown preset {unknown[0]!r}; the presets are {', '.join(presets())}",
              file=sys.stderr)
        return 2
    result = fuzz(args.seed, args.runs, args.duration_ms, args.out, progress=True, jobs=args.jobs,
                  machines=Machines(chosen, args.ipi_share))
    print(f"order fuzz: seed {args.seed}: {result.runs} scenarios run both ways, {result.refused} refused, "
          f"{result.errors} of them ending in the same error, {len(result.diffs)} different")
    return 1 if result.diffs else 0


if __name__ == "__main__":
    sys.exit(main())
