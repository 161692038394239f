"""Coverage of a point's pooled interval (adaptive run length, R seeds) against the
mean over many seeds.

run_length_coverage.py checks one run's interval against a long run of the same
seed. A point of R seeds claims more: its interval (sim/report/run_length.*,
pool_repeats()) holds the model's mean over seeds, differences between seeds'
steady states included. This script checks that claim. For each thread count it
simulates ``--reference`` single-seed runs at precision 0 (``--reference-ms`` after
``--reference-from`` ms of warm-up) and takes the mean of their rates as the
reference, then ``--points`` points of the scenario as it stands (its precision and
repeats, seeds ``--first-seed`` + R * k), and counts the points whose 95 % interval
holds the reference, with their median half-width, simulated time, second rounds and
how many stood on their runs' replication interval (the batches' assumptions failed).

    python validation/run_length_pooled_coverage.py --threads 1,2,4,8 --points 20

(Measured on the default scenario, host model of the 2-vCPU Intel guest, 2026-12-07:
19, 17, 19 and 19 of 20 at 1, 2, 4 and 8 threads; validation/bench-speed.md,
fourteenth stop, has the table and what a per-run floor of 8 batches did.)
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
from pathlib import Path

from semsim.sweeps import simulate_scenarios

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenario", default=str(ROOT / "scenarios" / "default.json"))
    ap.add_argument("--machine", default="host", help="machine of the points (default: host)")
    ap.add_argument("--threads", default="1,2,4,8", help="comma-separated thread counts")
    ap.add_argument("--points", type=int, default=20, help="points (of R seeds each) per thread count")
    ap.add_argument("--first-seed", type=int, default=10)
    ap.add_argument("--reference", type=int, default=12, help="single-seed reference runs")
    ap.add_argument("--reference-ms", type=float, default=600.0, help="length of each reference run")
    ap.add_argument("--reference-from", type=float, default=60.0, help="their warm-up, ms")
    ap.add_argument("-j", type=int, default=None)
    args = ap.parse_args()
    base = json.loads(Path(args.scenario).read_text())
    base["machine"] = args.machine
    repeats = int(base.get("repeats", 1))
    for threads in (int(t) for t in args.threads.split(",")):
        refs = [dict(base, threads=[threads], repeats=1, seed=1000 + 7 * k, precision=0,
                     warmup_ms=args.reference_from, duration_ms=args.reference_ms)
                for k in range(args.reference)]
        points = [dict(base, threads=[threads], seed=args.first_seed + repeats * k) for k in range(args.points)]
        out = simulate_scenarios(refs + points, jobs=args.j)
        rates = [r["points"][0]["ops_per_s"] for r in out[:len(refs)]]
        ref = statistics.mean(rates)
        ref_hw = 1.96 * statistics.stdev(rates) / math.sqrt(len(rates)) if len(rates) > 1 else 0.0
        covered, widths, simulated, second, replications = 0, [], [], 0, 0
        for res in out[len(refs):]:
            rl = res["points"][0]["run_length"]
            lo, hi = rl["ci95_per_s"]
            covered += lo <= ref <= hi
            widths.append(rl["half_width_rel"])
            simulated.append(rl["simulated_ms"])
            second += rl.get("rounds", 1) == 2
            replications += rl.get("interval") == "replications"
        print(f"{threads} threads: reference {ref:,.0f} +-{100 * ref_hw / ref:.2f} % ({len(rates)} seeds, "
              f"spread of seeds {100 * statistics.pstdev(rates) / ref:.2f} %); points covering it "
              f"{covered}/{len(widths)}, median half-width {100 * statistics.median(widths):.2f} %, "
              f"mean simulated {statistics.mean(simulated):.0f} ms per point, second rounds {second}, "
              f"points on their runs' replication interval {replications}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
