"""Coverage of the adaptive run length's 95 % interval (sim/report/run_length.*).

For a scenario point, the adaptive window (precision 0.01) is started at several
minimum warm-ups (``warmup_ms`` = W0, W0 + step, ...) and, for each, its reported
interval is checked against a long reference run's rate (precision 0, the same
seeds, from ``--reference-from`` ms on). Where the point's seeds change the run,
each seed is a replication; where they do not (a run that makes no random draw,
e.g. the default scenario on host-default), the start offsets stand in for
replications: they are windows of one trajectory, overlapping, so the count is an
indication, not a binomial sample.

    python validation/run_length_coverage.py --threads 4 --offsets 20 --step 4

prints, per start, the window's rate relative to the reference, its half-width, and
whether it covers, then the coverage. (Measured on the default scenario, 41 starts
from 20 to 100 ms with an offline replay of the same rule: 41/41 for 4 and 8 threads;
the rules that would stop earlier covered 30-36 of 41, see the helper's report.)
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from semsim.sweeps import simulate_scenarios

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenario", default=str(ROOT / "scenarios" / "default.json"))
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--offsets", type=int, default=10, help="starts to try")
    ap.add_argument("--first", type=float, default=20.0, help="first warmup_ms")
    ap.add_argument("--step", type=float, default=4.0, help="ms between starts")
    ap.add_argument("--reference-ms", type=float, default=600.0, help="length of the reference run")
    ap.add_argument("--reference-from", type=float, default=60.0, help="its warm-up, ms")
    ap.add_argument("-j", type=int, default=None)
    args = ap.parse_args()
    base = json.loads(Path(args.scenario).read_text())
    base.update(threads=[args.threads], repeats=1)
    seeds = [base.get("seed", 1) + k for k in range(args.seeds)]
    refs = [dict(base, seed=s, precision=0, warmup_ms=args.reference_from, duration_ms=args.reference_ms)
            for s in seeds]
    starts = [args.first + i * args.step for i in range(args.offsets)]
    tries = [dict(base, seed=s, precision=0.01, warmup_ms=w) for s in seeds for w in starts]
    out = simulate_scenarios(refs + tries, jobs=args.j)
    ref_rate = {s: out[i]["points"][0]["ops_per_s"] for i, s in enumerate(seeds)}
    covered = total = 0
    for doc, res in zip(tries, out[len(refs):]):
        rl = res["points"][0]["run_length"]
        lo, hi = rl["ci95_per_s"]
        ref = ref_rate[doc["seed"]]
        ok = lo <= ref <= hi
        covered += ok
        total += 1
        print(f"seed {doc['seed']} start {doc['warmup_ms']:6.1f} ms: window {rl['runs'][0]['window_ms']:6.1f} ms, "
              f"{100 * (rl['rate_per_s'] / ref - 1):+.3f} % +-{100 * rl['half_width_rel']:.3f} % "
              f"{'covers' if ok else 'MISSES'}")
    print(f"coverage {covered}/{total} (reference: {args.reference_ms} ms from {args.reference_from} ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
