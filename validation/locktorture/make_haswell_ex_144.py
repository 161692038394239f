"""Writes cpu_models/haswell-ex-144.json from haswell-48.json (the same Haswell-EX
generation): the X5-4 of the qspinlock/CNA v11 figures, 4 x Xeon E7-8895 v3
(18 cores, 2 threads each, 2.6 GHz). Run from the repository root:

    python3 validation/locktorture/make_haswell_ex_144.py
"""
import json
import re

SRC = "cpu_models/haswell-48.json"
OUT = "cpu_models/haswell-ex-144.json"
CNA = ("LKML '[PATCH v11 0/5] Add NUMA-awareness to qspinlock' (Alex Kogan, 2020-09-15, "
       "Message-Id 20200915180535.2975060-1-alex.kogan@oracle.com; "
       "shared/reference/data/qspinlock_cna/)")
GHZ = 2.6

base = json.load(open(SRC))
out = {
    "name": "haswell-ex-144",
    "description": "Oracle X5-4 of the qspinlock/CNA v11 figures: 4 x Xeon E7-8895 v3 "
                   "(Haswell-EX, 18 cores x 2 threads, 2.6 GHz), 144 CPUs",
    "cpus": 144,
    "topology": {
        "sockets": 4, "dies_per_socket": 1, "cores_per_die": 18, "threads_per_core": 2,
        "numbering": "linux",
        "source": f"{CNA}: 'four Intel Xeon E7-8895 v3 @ 2.60GHz sockets with 18 hyperthreaded "
                  "cores each' (144 logical CPUs); linux numbering (cpu_models/README.md: "
                  "consecutive CPUs on the sockets in turn, a core's second thread 72 CPUs "
                  "after its first) is an assumption, the usual enumeration of Intel servers; all sockets one QPI hop apart (a 4-socket "
                  "E7 v3 is fully connected: 3 QPI links per socket), so socket_hops is omitted",
    },
    "latency_ns": {},
}
carried = ("; carried in ns from the 4 x 12-core Haswell-EX of haswell-48 (the same core, "
           "ring and QPI generation, whose uncore clocks do not follow the core clock): an "
           "assumption, no matrix of the E7-8895 v3 is in the shared data")
out["latency_ns"]["smt"] = {
    "value": round(17 / 2.1, 2),
    "source": "mctop desc/lpdquad.mct (github.com/LPD-EPFL/mctop @ 09f80fa, 4 x 12-core "
              "Haswell-EX with SMT, the stored version haswell-48's latencies come from: "
              "17 / 127 / 305 cycles for SMT / socket / cross-socket, cpu_models/README.md "
              "haswell-48): SMT siblings 17 cycles; 17 cycles / 2.1 GHz" + carried,
}
for level in ("same_die", "one_hop"):
    v = base["latency_ns"][level]
    out["latency_ns"][level] = {"value": v["value"], "source": v["source"] + carried}
# Ranges (cpu_models/README.md, "Ranges and alternatives"): the carried latencies against
# the measured 2 x 18-core Broadwell of c2c_nviennot (the same 18-core die family; its
# one-way CAS medians: 43.54 ns within a socket, 118.07 ns across QPI) at the low end, and
# the carried value + 20 % at the high end (a larger ring than the 12-core part's).
NVIENNOT = ("c2c_nviennot 'Intel(R) Xeon(R) CPU E5-2695 v4 @ 2.10GHz' (github.com/nviennot/"
            "core-to-core-latency @ 96a943a, results/*.csv; ../shared/reference/data/c2c_nviennot/), "
            "a measured 2 x 18-core x 2-thread Broadwell-EP, one-way CAS ping-pong")
out["latency_ns"]["same_die"]["range"] = {
    "low": 43.54, "high": round(out["latency_ns"]["same_die"]["value"] * 1.2, 2),
    "source": f"low: pairs within a socket of {NVIENNOT}, median 43.54 ns; high: the value + 20 %, "
              "an 18-core die's two rings against the 12-core part's one"}
out["latency_ns"]["one_hop"]["range"] = {
    "low": 118.07, "high": round(out["latency_ns"]["one_hop"]["value"] * 1.2, 2),
    "source": f"low: pairs across the sockets of {NVIENNOT}, median 118.07 ns; high: the value + 20 %"}
out["memory_latency_ns"] = {"value": base["memory_latency_ns"]["value"],
                            "source": base["memory_latency_ns"]["source"] + carried}

costs = {}
for key, v in base["costs_ns"].items():
    src = v["source"]
    m = re.search(r"([0-9.]+) cycles? / 2\.1 GHz\s*$", src)
    if m:  # a cost in cycles of the core: the same cycles at 2.6 GHz
        cycles = float(m.group(1))
        value = round(cycles / GHZ, 3 if cycles / GHZ < 1 else 2)
        src = src[: m.start()] + f"{m.group(1)} cycles / {GHZ} GHz (haswell-48's cycles, " \
              "this machine's clock)"
        costs[key] = {"value": value, "source": src}
    else:
        costs[key] = dict(v)
# 144 CPUs: CFS's log scaling caps at 8 CPUs, so the slice is haswell-48's.
out["costs_ns"] = costs
out["clock_ghz"] = {"value": GHZ, "source": f"{CNA}: 'Intel Xeon E7-8895 v3 @ 2.60GHz'"}
refill = base["switch_refill_process_ns"]
cycles = 400
out["switch_refill_process_ns"] = {
    "value": [[1, round(cycles / GHZ, 2)]],
    "source": re.sub(r"400 cycles / 2\.1 GHz\s*$", f"400 cycles / {GHZ} GHz", refill["source"])
              + ". The CNA figures' 5.9 kernel has PCID, so this overstates a switch there; "
                "locktorture's kthreads never switch address space (unused by it)",
}
west = json.load(open("cpu_models/westmere-ex-160.json"))
for key in ("smt_compute_slowdown", "smt_spin_slowdown"):
    out[key] = west[key]
json.dump(out, open(OUT, "w"), indent=2)
open(OUT, "a").write("\n")
print("wrote", OUT)
