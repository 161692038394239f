#!/usr/bin/env python3
"""Collect semsim compare outputs (DIR/<scenario>/compare.json) into a markdown table.

usage: python validation/table.py DIR [DIR_BEFORE]
       python validation/table.py --sim SIMDIR COMPAREDIR
With a second directory, adds that run's predicted value and error beside each point.
With --sim, the predictions are SIMDIR/<scenario>.json (semsim run -o) paired with the
measurements of COMPAREDIR/<scenario>/compare.json, exactly as semsim.compare pairs
them (error against the measured median; exceeds = outside the measured min..max),
and COMPAREDIR's own predictions are shown as "before".
"""
import json, pathlib, statistics, sys

from semsim.compare import UNSTABLE_SPREAD


def load(d):
    rows = {}
    for f in sorted(pathlib.Path(d).glob("*/compare.json")):
        c = json.load(open(f))
        name = f.parent.name
        for p in c["points"]:
            rows[(name, p["threads"])] = p
    return rows


def load_sim(simdir, comparedir):
    meas = load(comparedir)
    rows = {}
    for f in sorted(pathlib.Path(simdir).glob("*.json")):
        name = f.stem
        for sp in json.load(open(f))["points"]:
            m = meas.get((name, sp["threads"]))
            if m is None:
                continue
            pred = sp["ops_per_s"]
            mm, lo, hi = m["measured_ops_per_s"], m["measured_min_ops_per_s"], m["measured_max_ops_per_s"]
            rows[(name, sp["threads"])] = {
                "predicted_ops_per_s": pred, "measured_ops_per_s": mm,
                "measured_min_ops_per_s": lo, "measured_max_ops_per_s": hi,
                "error_pct": (pred - mm) / mm * 100.0, "exceeds_spread": pred < lo or pred > hi,
                # What the measurement says of the host, whoever predicted it.
                **{k: m[k] for k in ("foreign_cpu_share", "host_busy", "host_drifted") if k in m}}
    # Scenarios not re-simulated keep their compare run's prediction, marked.
    simulated = {n for n, _ in rows}
    for (name, t), m in meas.items():
        if name not in simulated:
            rows[(name, t)] = dict(m, not_resimulated=True)
    return rows, meas


def _busy(p):
    """The measured point's foreign_cpu_share (other processes' share of the CPUs), if recorded."""
    f = p.get("foreign_cpu_share")
    return "-" if f is None else f"{f:.2f}"


def _unstable(p):
    """The measured repeats span more than UNSTABLE_SPREAD (max / min): two modes."""
    lo, hi = p["measured_min_ops_per_s"], p["measured_max_ops_per_s"]
    return bool(lo) and hi / lo > UNSTABLE_SPREAD


def main():
    if sys.argv[1] == "--sim":
        cur, old = load_sim(sys.argv[2], sys.argv[3])
    else:
        cur = load(sys.argv[1])
        old = load(sys.argv[2]) if len(sys.argv) > 2 else None
    hdr = "| scenario | threads | predicted ops/s | measured ops/s (min..max) | error % | exceeds spread? | host busy |"
    sep = "|---|---:|---:|---:|---:|---|---:|"
    if old is not None:
        hdr += " before: predicted | before: error % |"
        sep += "---:|---:|"
    print(hdr)
    print(sep)
    errs, steady = [], []
    for (name, t), p in sorted(cur.items()):
        e = p["error_pct"]
        errs.append(abs(e))
        if not (_unstable(p) or p.get("host_busy") or p.get("host_drifted")):
            steady.append(abs(e))
        mark = " (not re-simulated)" if p.get("not_resimulated") else ""
        line = (f"| {name}{mark} | {t} | {p['predicted_ops_per_s']:,.0f} | {p['measured_ops_per_s']:,.0f} "
                f"({p['measured_min_ops_per_s']:,.0f}..{p['measured_max_ops_per_s']:,.0f}) | {e:+.1f} | "
                f"{'yes' if p['exceeds_spread'] else 'no'}{', unstable' if _unstable(p) else ''} | "
                f"{_busy(p)} |")
        if old is not None:
            o = old.get((name, t))
            line += (f" {o['predicted_ops_per_s']:,.0f} | {o['error_pct']:+.1f} |" if o else " - | - |")
        print(line)
    if errs:
        print()
        print(f"points: {len(errs)}; median |error|: {statistics.median(errs):.1f} %; "
              f"max |error|: {max(errs):.1f} %; within 35 %: {sum(e <= 35 for e in errs)}/{len(errs)}; "
              f"within 15 %: {sum(e <= 15 for e in errs)}/{len(errs)}")
        if steady and len(steady) < len(errs):
            print(f"without unstable, busy or drifted points: {len(steady)} points; median |error|: "
                  f"{statistics.median(steady):.1f} %; max |error|: {max(steady):.1f} %; "
                  f"within 35 %: {sum(e <= 35 for e in steady)}/{len(steady)}")


main()
