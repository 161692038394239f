"""CPU time of one `semsim bench` case (validation/bench-speed.md).

    python3 bench_case_cpu.py CASE [MS]   # CASE: index into semsim.bench.CASES; MS: default 4x
"""
import json
import sys
import time

from semsim import _core, bench

case = bench.CASES[int(sys.argv[1])]
ms = float(sys.argv[2]) if len(sys.argv) > 2 else 4 * case["duration_ms"]
text = _core.load_scenario(json.dumps(bench._scenario(case, duration_ms=ms)), [])
before = _core.engine_counters()
cpu = time.process_time()
point = json.loads(_core.simulate(text))["points"][0]
cpu = time.process_time() - cpu
handoffs = _core.engine_counters()[0] - before[0]
n = point["semops_simulated"]
print(f"{case['case']}: cpu {cpu:.3f} s, semops {n}, us/op {cpu / n * 1e6:.3f}, "
      f"hand-offs/op {handoffs / n:.2f}, ops/s {point['ops_per_s']}")
