"""``semsim machine import``: a machine model from a measured core-to-core latency matrix.

Reads a matrix in one of the layouts of the shared reference data
(``reference/data/mctop/``: rows ``table,i,j,value`` with the CAS latency of every
pair of hardware contexts in cycles, plus memory latency per context and node and
cache levels; ``reference/data/c2c_nviennot/``: rows ``cpu_i,cpu_j,latency_ns``,
lower-triangular, one-way ns), infers the topology from the latency clusters
(or takes it from flags), and writes a machine model (``cpu_models/README.md``)
that carries the whole matrix as ``latency_matrix_ns`` and sources every
parameter to the file, to a named preset, or to an assumption.

Topology inference, in the matrix's own unit:

1. the distinct off-diagonal latencies, sorted, are split into classes wherever
   one value exceeds the previous by more than ``gap`` (15 %);
2. for each class, the CPUs are grouped by connected components of the graph
   "latency <= the class's largest value". A grouping counts as a level of the
   hierarchy only if every group is a clique under that threshold (all its
   pairs are that close: a NUMA hop graph is connected but is not one) and all
   groups have the same size (the model is uniform); noise that puts one pair
   in a class of its own then only drops that class;
3. the finest level is SMT siblings if the file says the machine has SMT, or
   (when it says nothing) if its groups have 2-4 CPUs, at most 20 ns and at most
   0.6x the latency to the rest of the next level; sockets are the level with
   the socket count the file states (mctop: ``#Nodes``; nviennot: a name
   starting with "Dual" means 2, else 1) or ``--sockets``, else the coarsest
   level whose groups see each other at one latency class per pair; dies are the
   first level above the cores within a socket;
4. socket pairs are one or two hops apart by the class of their median latency.

A topology that does not come out uniform is modelled as one die of all CPUs
(the matrix still gives every pair), as ``semsim calibrate`` does for hosts.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .api import InputError
from .matrix_files import FORMATS, Measured, first_sentences, read_matrix, read_mctop, read_nviennot
from .topology_inference import (
    DEFAULT_GAP,
    NUMBERINGS,
    Inferred,
    Level,
    assign_ids,
    components,
    drop_smt,
    given_topology,
    hierarchy,
    infer_topology,
    latency_classes,
    location,
    median,
    model_id,
    socket_hops,
    uniform_problem,
)

__all__ = [
    "DEFAULT_COSTS_FROM", "DEFAULT_GAP", "FORMATS", "NUMBERINGS", "Inferred", "Level", "Measured", "Options",
    "build_model", "components", "dump", "find_preset", "hierarchy", "import_matrix", "infer_topology",
    "latency_classes", "location", "model_id", "read_matrix", "read_mctop", "read_nviennot", "summary", "valid_name",
]

DEFAULT_COSTS_FROM = "uniform-64"
# smt_compute_slowdown and smt_spin_slowdown (machine/smt.hpp) of an imported machine with SMT when
# --costs-from gives none for SMT: the shared values, the same for every machine with SMT (the
# hand-written presets with SMT carry the same; cpu_models/README.md, "SMT"); of one without SMT:
# not applicable.
SMT_COMPUTE_SLOWDOWN = {
    "value": 1.6,
    "source": (
        "assumption: a core's SMT throughput gain of 1.25 on the model's compute-bound work (kernel "
        "paths, critical sections, context switches), i.e. threads_per_core / 1.25 = 1.6 per thread "
        "while its sibling computes. Published: Hyper-Threading gains up to 30 % on common server "
        "application benchmarks (Marr et al., 'Hyper-Threading Technology Architecture and "
        "Microarchitecture', Intel Technology Journal 6(1), 2002, p. 11; S. D. Casey, 'How to "
        "Determine the Effectiveness of Hyper-Threading Technology with an Application', Intel, 2011, "
        "software.intel.com), i.e. a per-thread slowdown of 1.54-2.0 over gains of 1.3-1.0; 1.25, "
        "towards the upper end for code with branches and misses such as the syscall path (a "
        "stalled thread leaves its issue slots to its sibling), is the assumption. A sibling "
        "spinning on a lock costs more: smt_spin_slowdown. Checked on seed 000 "
        "(laptop-4 with all four hardware threads busy, whose semop_kernel_path divides it out: "
        "validation/kernel-path-profile.md) and the lock curves (westmere-ex-160: `semsim reproduce "
        "--only locks`); the same for every machine with SMT; not probed (this host has no SMT "
        "siblings). Before: 2.0 (no gain), chosen on the Westmere-EX MCS curve before "
        "smt_spin_slowdown took the spinning sibling's share"
    ),
}
SMT_SPIN_SLOWDOWN = {
    "value": 2.0,
    "source": (
        "calibrated on the published Westmere-EX MCS curve above 80 threads (github.com/LPD-EPFL/mctop "
        "results/locks/lock_backoff_1_1000_diassrv8.txt, no_backoff; mctop_lock_backoff_diassrv8.csv), "
        "cores-first placement, so that from 100 threads on holders share their core with an MCS "
        "waiter spinning on its own node (libslock src/mcs.c: while (I->waiting) PAUSE): swept 1.5, "
        "2.0, 2.5, 3.0, MCS shape at 100/120/140/160 threads +22..+28 %, -1..+8 %, -3..-18 %, "
        "-12..-30 % against the published 0.705/0.617/0.588/0.571; TAS, TTAS and ticket move by at "
        "most 7 % over that sweep (swept with smt_compute_slowdown 2.0). A PAUSE spin beside a "
        "critical section costs it more than a computing sibling (smt_compute_slowdown 1.6): the "
        "spinner's loads of the lock's line compete for the core's load ports and its L1. The same "
        "for every machine with SMT"
    ),
}
#: The clocks (GHz) a model may have, from --ghz or the file.
MIN_GHZ, MAX_GHZ = 0.1, 10.0
SMT_NOT_APPLICABLE = {"value": 1, "source": "not applicable: threads_per_core 1 (no SMT siblings)"}
_CYCLES_RE = re.compile(r"(\d+(?:\.\d+)?) cycles / (\d+(?:\.\d+)?) GHz\s*$")
_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9._-]*$")


def valid_name(name: str) -> bool:
    """Whether ``name`` may name a machine model (lower-case letters, digits, ``.``, ``_``, ``-``)."""
    return bool(_NAME_RE.match(name))

def _round(x: float) -> float:
    """As the presets write values: 2 decimals from 10 up, else 4 significant digits."""
    if x >= 10:
        return round(x, 2)
    return float(f"{x:.4g}")


def _num(x: float) -> float | int:
    return int(x) if float(x).is_integer() else round(x, 6)


def _ghz_text(ghz: float) -> str:
    return f"{ghz:g}"


def find_preset(name_or_path: str) -> tuple[Path, dict[str, Any]]:
    """A machine file by preset name (./cpu_models first, then the installed data), ``host``
    (this host's calibrated model, as everywhere else) or path."""
    candidates = []
    if not isinstance(name_or_path, str) or not name_or_path.strip():
        raise InputError(f"machine import: --costs-from {name_or_path!r}: expected a machine preset "
                         "(see semsim list), 'host' or a machine file")
    if name_or_path == "host":
        from .api import host_model_path

        host = Path(host_model_path())
        if not host.is_file():
            state = "is not a file" if host.exists() else "does not exist yet: run semsim calibrate"
            raise InputError(f"machine import: --costs-from host: this host's model {host} {state}")
        candidates.append(host)
    elif "/" in name_or_path or name_or_path.endswith(".json"):
        candidates.append(Path(name_or_path))
    else:
        from . import _data

        candidates.append(Path("cpu_models") / f"{name_or_path}.json")
        base = _data.data_dir()
        if base is not None:
            candidates.append(base / "cpu_models" / f"{name_or_path}.json")
    for c in candidates:
        if c.is_dir():
            raise InputError(f"machine import: --costs-from {name_or_path}: {c} is a directory, not a machine file")
        if c.is_file():
            try:
                return c, json.loads(c.read_text(encoding="utf-8"))
            except (OSError, ValueError) as e:
                raise InputError(f"machine import: --costs-from {name_or_path}: {c}: {e}") from None
    raise InputError(f"machine import: --costs-from {name_or_path!r}: no such preset or machine file")


def _carry(param: dict[str, Any], preset: str, same_machine: bool, ghz: float) -> dict[str, Any]:
    """A preset's parameter: cycle counts kept at this model's clock; an assumption when the
    preset describes another machine."""
    value, src = param["value"], str(param["source"])
    hit = _CYCLES_RE.search(src)
    moved = bool(hit) and abs(float(hit.group(2)) - ghz) > 1e-9
    if hit and moved:
        value = _round(float(hit.group(1)) / ghz)
        src = src[:hit.start()] + f"{hit.group(1)} cycles / {_ghz_text(ghz)} GHz"
    if not same_machine:
        body = src[len("assumption:"):].strip() if src.startswith("assumption:") else src
        how = ", its cycle count kept at this clock" if moved else ""
        src = f"assumption: preset {preset}'s value for another machine{how}: {body}"
    return {"value": value, "source": src}


def _carry_table(param: dict[str, Any], preset: str, same_machine: bool, ghz: float) -> dict[str, Any]:
    """A preset's [[distance, ns], ...] table, as _carry carries one value: entries derived
    from cycles keep them at this model's clock."""
    table, src = param["value"], str(param["source"])
    hit = _CYCLES_RE.search(src)
    if hit and abs(float(hit.group(2)) - ghz) > 1e-9:
        scale = float(hit.group(2)) / ghz
        table = [[d, _round(v * scale)] for d, v in table]
    carried = _carry({"value": 0, "source": src}, preset, same_machine, ghz)
    return {"value": table, "source": carried["source"]}


def _smt_slowdown(preset: dict[str, Any], name: str, same_machine: bool, threads: int,
                  key: str = "smt_compute_slowdown", shared: dict[str, Any] | None = None) -> dict[str, Any]:
    """An SMT factor (`key`): none without SMT; the preset's where it has SMT; else the shared value."""
    if threads == 1:
        return dict(SMT_NOT_APPLICABLE)
    param = preset.get(key)
    if param is not None and preset.get("topology", {}).get("threads_per_core", 1) > 1:
        if same_machine:
            return dict(param)
        src = str(param["source"])
        body = src[len("assumption:"):].strip() if src.startswith("assumption:") else src
        return {"value": param["value"], "source": f"assumption: preset {name}'s value for another machine: {body}"}
    return dict(shared if shared is not None else SMT_COMPUTE_SLOWDOWN)


def _time_slice(cpus: int) -> dict[str, Any]:
    factor = 1 + int(math.log2(min(cpus, 8)))
    ms = 0.75 * factor
    return {"value": 750_000.0 * factor,
            "source": "Linux 3.x-4.x CFS default (kernel/sched/fair.c): sched_min_granularity 0.75 ms x "
                      "(1 + ilog2(min(ncpus, 8))) with SCHED_TUNABLESCALING_LOG; "
                      f"{cpus} CPUs -> factor {factor} -> {ms:g} ms, the slice each CPU-bound task gets "
                      "once more than sched_nr_latency = 8 tasks share a CPU"}


CLASS_TEXT = {
    "smt": "SMT siblings (the closest groups)",
    "same_die": "another core of the same die",
    "same_socket": "another die of the same socket",
    "one_hop": "a socket one hop away",
    "two_hops": "a socket two hops away",
}


def _class_of(a: int, b: int, loc: dict[int, tuple[int, int, int, int]], hops: list[list[int]]) -> str:
    la, lb = loc[a], loc[b]
    if la[:3] == lb[:3]:
        return "smt"
    if la[:2] == lb[:2]:
        return "same_die"
    if la[0] == lb[0]:
        return "same_socket"
    return "two_hops" if hops[la[0]][lb[0]] >= 2 else "one_hop"


@dataclass
class Options:
    fmt: str
    ghz: float | None = None
    name: str | None = None
    description: str | None = None
    costs_from: str = DEFAULT_COSTS_FROM
    gap: float = DEFAULT_GAP
    smt: bool | None = None  # None: the file's statement, else the heuristic
    sockets: int | None = None
    topology: tuple[int, int, int, int] | None = None
    numbering: str | None = None
    drop_smt: bool = False
    note: str | None = None  # appended to the topology's source


def _check_options(o: Options) -> None:
    if o.fmt not in FORMATS:
        raise InputError(f"machine import: --format {o.fmt!r}: allowed: {', '.join(FORMATS)}")
    if o.ghz is not None and not (math.isfinite(o.ghz) and MIN_GHZ <= o.ghz <= MAX_GHZ):
        raise InputError(f"machine import: --ghz {o.ghz:g}: must be a clock in GHz between {MIN_GHZ:g} and "
                         f"{MAX_GHZ:g}")
    for flag, text in (("--description", o.description), ("--note", o.note)):
        if text is not None and not text.strip():
            raise InputError(f"machine import: {flag}: empty value; expected one line of text (or leave it out)")
    if o.name is not None and not _NAME_RE.match(o.name):
        raise InputError(f"machine import: --name {o.name!r}: must match [a-z0-9][a-z0-9._-]*")
    if not (0 < o.gap < 10):
        raise InputError(f"machine import: --gap {o.gap:g}: must be a relative gap between 0 and 10 (0.15 = 15 %)")
    if o.sockets is not None and o.sockets < 1:
        raise InputError(f"machine import: --sockets {o.sockets}: must be >= 1")
    if o.numbering is not None and o.numbering not in NUMBERINGS:
        raise InputError(f"machine import: --numbering {o.numbering!r}: allowed: {', '.join(NUMBERINGS)}")
    if o.topology is not None and (len(o.topology) != 4 or min(o.topology) < 1):
        raise InputError("machine import: --topology: expected S,D,C,T (sockets, dies per socket, cores "
                         "per die, threads per core), each >= 1")


def _default_name(path: Path) -> str:
    stem = re.sub(r"[^a-z0-9._-]+", "-", path.stem.lower()).strip("-._")
    return stem or "imported"


def _clock(measured: Measured, o: Options, preset: dict[str, Any], same_machine: bool,
           ref: str) -> tuple[float, str]:
    """The clock and its source: cycles -> ns for mctop; the conversion of cycle-count costs for both."""
    preset_clock = preset.get("clock_ghz", {})
    if o.ghz is not None:
        ghz = o.ghz
        if preset_clock.get("value") == ghz:
            clock_src = str(preset_clock.get("source"))
        elif measured.clock_ghz is not None and measured.clock_ghz != ghz:
            clock_src = (f"assumption: the clock given to semsim machine import (--ghz {ghz:g}); {ref}: "
                         f"{measured.clock_text} states {measured.clock_ghz:g} GHz")
        else:
            clock_src = f"assumption: the clock given to semsim machine import (--ghz {ghz:g})"
    elif measured.clock_ghz is not None:
        ghz = measured.clock_ghz
        if not (math.isfinite(ghz) and MIN_GHZ <= ghz <= MAX_GHZ):
            raise InputError(f"machine import: {measured.path}: the clock the file states, {ghz:g} GHz "
                             f"({measured.clock_text}), is not between {MIN_GHZ:g} and {MAX_GHZ:g} GHz: "
                             "give --ghz")
        if preset_clock.get("value") == ghz and same_machine:
            clock_src = str(preset_clock.get("source"))
            if measured.path.name not in clock_src:  # (regenerating keeps it as it is)
                clock_src += f"; the same as {ref}: {measured.clock_text}"
        else:
            inferred = " (INFERRED there)" if "INFERRED" in measured.clock_text else ""
            clock_src = f"assumption: the clock {ref} states{inferred}: {measured.clock_text}"
    elif measured.unit == "cycles":
        raise InputError(f"machine import: {measured.path}: the latencies are in cycles and the file "
                         "states no clock: give --ghz")
    elif isinstance(preset_clock.get("value"), (int, float)):
        ghz = float(preset_clock["value"])
        clock_src = (f"assumption: the file states no clock; preset {o.costs_from}'s, which converts "
                     "only the cycle counts of the costs (the matrix is in ns)")
    else:
        raise InputError(f"machine import: {measured.path}: the file states no clock: give --ghz")
    return ghz, clock_src


def _topology(measured: Measured, o: Options, ns_per_unit: float, notes: list[str]) -> Inferred:
    """The topology given by --topology, else inferred; one die of all CPUs if not uniform."""
    m = measured.matrix
    n = measured.cpus
    if o.topology is not None:
        inf = given_topology(n, o.topology, o.numbering or "linux")
        inf.socket_hops = socket_hops(m, inf.sockets, o.gap, inf.notes)
    else:
        smt, smt_text = (o.smt, "--smt on the command line") if o.smt is not None else (measured.smt, measured.smt_text)
        sockets, sockets_text = ((o.sockets, "--sockets on the command line") if o.sockets is not None
                                 else (measured.sockets, measured.sockets_text))
        inf = infer_topology(m, gap=o.gap, smt=smt, smt_text=smt_text, sockets=sockets,
                             sockets_text=sockets_text, ns_per_unit=ns_per_unit,
                             stated_by_flag=o.sockets is not None)
        why = uniform_problem(inf)
        if why:
            notes.append(f"the latency clusters give {why}; modelled as one die of {n} CPUs (the matrix "
                         "keeps every measured pair)")
            all_cpus = tuple(range(n))
            inf = Inferred([all_cpus], [all_cpus], [(c,) for c in range(n)], False, [[0]],
                           inf.how + f"; not uniform ({why}): one die of all CPUs", [], inf.classes, inf.levels)
    return inf


def build_model(measured: Measured, o: Options) -> dict[str, Any]:
    """The machine model (a dict in the format of cpu_models/README.md)."""
    _check_options(o)
    name = o.name or _default_name(measured.path)
    preset_path, preset = find_preset(o.costs_from)
    # The same machine: regenerating a preset, or a preset imported from this very file.
    same_machine = (preset.get("name") == name
                    or preset.get("provenance", {}).get("input", {}).get("sha256") == measured.sha256)
    ref = measured.reference()
    notes: list[str] = []

    ghz, clock_src = _clock(measured, o, preset, same_machine, ref)
    ns_per_unit = 1 / ghz if measured.unit == "cycles" else 1.0
    unit = measured.unit

    def conv(v: float) -> str:
        return f"{v:g} cycles / {_ghz_text(ghz)} GHz" if unit == "cycles" else f"{v:g} ns"

    m = measured.matrix
    n = measured.cpus
    inf = _topology(measured, o, ns_per_unit, notes)
    full = inf
    kept = list(range(n))
    if o.drop_smt and inf.smt:
        inf, kept = drop_smt(inf)
    elif o.drop_smt:
        notes.append("--drop-smt: the matrix shows no SMT siblings, nothing dropped")
    notes.extend(inf.notes)
    numbering, cpu_map, kept_order = assign_ids(inf, o.numbering if o.topology is None else o.numbering or "linux")
    shape = inf.shape
    S, D, C, T = shape
    cpus = S * D * C * T
    model_of = {f: i for i, f in enumerate(cpu_map)}
    loc = {f: location(model_of[f], shape, numbering) for f in cpu_map}
    hops = inf.socket_hops

    topo_src = f"{ref}: {inf.how}"
    if not kept_order:
        topo_src += (f"; the file numbers its CPUs in neither scheme, so they are renumbered '{numbering}' "
                     "(model CPU i = file CPU provenance.cpu_map[i]; sockets in order of their lowest file CPU)")
    elif cpu_map != list(range(n)):
        topo_src += "; model CPU i = the i-th of the kept file CPUs (provenance.cpu_map)"
    else:
        topo_src += f"; the file's own CPU numbering, which is the '{numbering}' scheme"
    topology: dict[str, Any] = {"sockets": S, "dies_per_socket": D, "cores_per_die": C, "threads_per_core": T,
                                "numbering": numbering}
    # The inference's socket k is the model's socket of its CPUs.
    order = [loc[g[0]][0] for g in inf.sockets]
    model_hops = [[0] * S for _ in range(S)]
    for a in range(S):
        for b in range(S):
            model_hops[order[a]][order[b]] = hops[a][b]
    if any(h == 2 for row in model_hops for h in row):
        topology["socket_hops"] = model_hops
        topo_src += "; socket_hops: 1 for the nearest class of socket-pair median latencies, 2 for the farther"
    if o.note:
        topo_src += f". {o.note}"
    topology["source"] = topo_src

    # Latency classes: the median of the file's pairs in each.
    by_class: dict[str, list[float]] = {}
    for a in cpu_map:
        for b in cpu_map:
            if a != b:
                by_class.setdefault(_class_of(a, b, loc, model_hops), []).append(m[a][b])
    latency: dict[str, Any] = {}
    previous = 0.0
    for cls in ("smt", "same_die", "same_socket", "one_hop", "two_hops"):
        vals = by_class.get(cls)
        if not vals:
            continue
        med = median(vals)
        ns = _round(med * ns_per_unit)
        spread = (f"all {med:g} {unit}" if min(vals) == max(vals)
                  else f"{min(vals):g}-{max(vals):g} {unit}, median {med:g}")
        src = f"{ref}: {CLASS_TEXT[cls]}, {len(vals)} ordered CPU pairs, {spread}; {conv(med)}"
        if ns < previous:
            src = (f"{ref}: {CLASS_TEXT[cls]}, {len(vals)} ordered CPU pairs, median {med:g} {unit}, below the "
                   f"nearer class: raised to {previous:g} ns to keep the classes ordered by distance (the matrix "
                   "keeps the measured pairs)")
            ns = previous
        previous = ns
        latency[cls] = {"value": ns, "source": src}

    matrix = [[0 if i == j else _round(m[cpu_map[i]][cpu_map[j]] * ns_per_unit) if unit == "cycles"
               else round(m[cpu_map[i]][cpu_map[j]], 3) for j in range(cpus)] for i in range(cpus)]
    matrix_src = (f"{ref}: {first_sentences(measured.header.get('BENCHMARK', 'core-to-core latency'), 400)}; "
                  f"every pair of the {cpus} model CPUs (model CPU i = file CPU provenance.cpu_map[i]), "
                  + ("cycles / " + _ghz_text(ghz) + " GHz" if unit == "cycles" else "ns as measured, to 1 ps")
                  + ("; the file gives the lower triangle, mirrored (one round trip measures both directions)"
                     if measured.format == "nviennot" else "") + "; diagonal unused")

    model: dict[str, Any] = {
        "name": name,
        "description": o.description or (preset["description"] if preset.get("name") == name and
                                         preset.get("description") else _description(measured, shape)),
        "cpus": cpus,
        "topology": topology,
        "latency_ns": latency,
        "latency_matrix_ns": {"matrix": matrix, "source": matrix_src},
    }

    # Memory: mctop's dependent-load latency per context and node.
    mem = _memory(measured, full, inf, loc, model_of, ghz, ref, notes)
    if mem is not None:
        if mem[1] is not None:
            model["numa_distance"] = mem[1]
        model["memory_latency_ns"] = mem[0]
    elif "memory_latency_ns" in preset:
        model["memory_latency_ns"] = _carry(preset["memory_latency_ns"], o.costs_from, same_machine, ghz)
    else:
        raise InputError(f"machine import: --costs-from {o.costs_from}: has no memory_latency_ns, and the "
                         "file gives none")
    # Keep the key order of the presets: memory before costs.
    costs = {}
    for key, param in preset.get("costs_ns", {}).items():
        if key == "time_slice":
            continue
        costs[key] = _carry(param, o.costs_from, same_machine, ghz)
    l1 = measured.figures.get("cache_level1_latency_cycles")
    if l1 and str(costs.get("l1_hit", {}).get("source", "assumption:")).startswith("assumption:"):
        costs["l1_hit"] = {"value": _round(l1 / ghz),
                           "source": f"{ref}: cache_level1_latency_cycles (mctop's L1D latency estimate) "
                                     f"{l1:g} cycles; {l1:g} cycles / {_ghz_text(ghz)} GHz"}
    old_slice = preset.get("costs_ns", {}).get("time_slice")
    slice_ = _time_slice(cpus)
    costs["time_slice"] = (old_slice if same_machine and old_slice and old_slice.get("value") == slice_["value"]
                           else slice_)
    missing = {"l1_hit", "atomic_rmw", "full_fence", "syscall", "semop_kernel_path", "context_switch",
               "wakeup_waker", "wakeup_latency", "ipi", "user_loop_iteration", "bubble_sort_round",
               "memcpy_byte"} - set(costs)
    if missing:
        raise InputError(f"machine import: --costs-from {o.costs_from}: lacks costs_ns "
                         f"{', '.join(sorted(missing))}")
    model["costs_ns"] = costs
    model["clock_ghz"] = {"value": ghz, "source": clock_src}
    if "switch_refill_process_ns" in preset:
        model["switch_refill_process_ns"] = _carry_table(preset["switch_refill_process_ns"], o.costs_from,
                                                         same_machine, ghz)
    model["smt_compute_slowdown"] = _smt_slowdown(preset, o.costs_from, same_machine, T)
    if T > 1:  # the preset's, else the calibrated shared value
        model["smt_spin_slowdown"] = _smt_slowdown(preset, o.costs_from, same_machine, T,
                                                   "smt_spin_slowdown", shared=SMT_SPIN_SLOWDOWN)
    model["provenance"] = _provenance(measured, o, name, preset_path, cpu_map, full, notes, kept)
    return model


def _description(measured: Measured, shape: tuple[int, int, int, int]) -> str:
    S, D, C, T = shape
    machine = measured.header.get("MACHINE", "").split(". ")[0].strip()
    what = f"{S} socket(s) x {D} die(s) x {C} cores x {T} thread(s)"
    if machine:
        return f"imported from {measured.path.name} ({machine[:160]}): {what}"
    return f"imported from {measured.path.name}: {what}"


def _memory(measured: Measured, full: Inferred, inf: Inferred, loc: dict[int, tuple[int, int, int, int]],
            model_of: dict[int, int], ghz: float, ref: str,
            notes: list[str]) -> tuple[dict[str, Any], dict[str, Any] | None] | None:
    """memory_latency_ns (local node) and numa_distance from mctop's mem_latency table."""
    if not measured.mem_latency:
        return None
    # Each measured context's die: the model die of its core (kept or dropped sibling alike).
    die_of_file: dict[int, int] = {}
    shape = inf.shape
    S, D, C, T = shape
    for g in full.cores:
        rep = next((c for c in g if c in loc), None)
        if rep is None:
            continue
        s, d, _, _ = loc[rep]
        for c in g:
            die_of_file[c] = s * D + d
    contexts = sorted({i for i, _ in measured.mem_latency})
    nodes = measured.nodes or 0
    rows = {i: [measured.mem_latency.get((i, j)) for j in range(nodes)] for i in contexts}
    rows = {i: r for i, r in rows.items() if all(v is not None for v in r) and i in die_of_file}
    if not rows:
        notes.append("mem_latency_cycles has no context with every node measured: memory latency from the preset")
        return None
    local = {i: min(r) for i, r in rows.items()}
    local_node = {i: r.index(min(r)) for i, r in rows.items()}
    med = median(list(local.values()))
    lo, hi = min(local.values()), max(local.values())
    mem = {"value": _round(med / ghz),
           "source": f"{ref}: mem_latency_cycles (dependent random pointer chasing), each measured context "
                     f"to its nearest node, {len(rows)} contexts: "
                     + (f"all {lo:g} cycles" if lo == hi else f"{lo:g}-{hi:g} cycles, median {med:g}")
                     + f"; {med:g} cycles / {_ghz_text(ghz)} GHz"}
    # NUMA distance per model die (= node): the die's contexts to each die's local node.
    dies = S * D
    node_of_die: dict[int, int] = {}
    for i, node in local_node.items():
        d = die_of_file[i]
        if node_of_die.setdefault(d, node) != node:
            notes.append("contexts of one die are nearest to different memory nodes: no numa_distance")
            return mem, None
    if len(node_of_die) != dies or len(set(node_of_die.values())) != dies:
        notes.append(f"memory latency measured from {len(node_of_die)} of the {dies} dies (or dies share a node): "
                     "numa_distance left at the model's default")
        return mem, None
    dist = [[10] * dies for _ in range(dies)]
    for a in range(dies):
        ctx = [i for i in rows if die_of_file[i] == a]
        own = median([local[i] for i in ctx])
        for b in range(dies):
            v = median([rows[i][node_of_die[b]] for i in ctx])
            dist[a][b] = 10 if a == b else max(10, min(255, round(10 * v / own)))
    numa = {"matrix": dist,
            "source": f"{ref}: mem_latency_cycles, from each die's measured contexts (median) to each die's "
                      "nearest memory node, over the local latency, x 10 and rounded (ACPI SLIT scale); "
                      f"model die k = socket x dies_per_socket + die"}
    return mem, numa


def _provenance(measured: Measured, o: Options, name: str, preset_path: Path, cpu_map: list[int],
                full: Inferred, notes: list[str], kept: list[int]) -> dict[str, Any]:
    command = [f"semsim machine import {measured.path.name} --format {o.fmt}"]
    for flag, v in (("--ghz", o.ghz), ("--name", o.name), ("--costs-from", o.costs_from),
                    ("--sockets", o.sockets), ("--numbering", o.numbering)):
        if v is not None:
            command.append(f"{flag} {v:g}" if isinstance(v, float) else f"{flag} {v}")
    if o.gap != DEFAULT_GAP:
        command.append(f"--gap {o.gap:g}")
    if o.smt is not None:
        command.append(f"--smt {'yes' if o.smt else 'no'}")
    if o.topology is not None:
        command.append("--topology " + ",".join(map(str, o.topology)))
    if o.drop_smt:
        command.append("--drop-smt")
    if o.description:
        command.append(f"--description {json.dumps(o.description)}")
    if o.note:
        command.append(f"--note {json.dumps(o.note)}")
    prov: dict[str, Any] = {
        "importer": "semsim machine import",
        "command": " ".join(command),
        "input": {"file": measured.path.name, "format": measured.format, "unit": measured.unit,
                  "sha256": measured.sha256, "cpus": measured.cpus,
                  "header": {k: v for k, v in measured.header.items() if k in ("SOURCE", "MACHINE", "UNITS", "UNIT")}},
        "costs_from": {"preset": o.costs_from, "file": preset_path.name},
        "latency_classes": [[_num(lo), _num(hi)] for lo, hi in full.classes],
        "levels": [f"{len(lv.groups)} group(s) of {lv.size} CPUs, pairs up to {_num(lv.threshold):g}"
                   for lv in full.levels],
        "cpu_map": cpu_map,
    }
    if measured.figures:
        prov["file_figures"] = {k: _num(v) for k, v in sorted(measured.figures.items())}
    if notes:
        prov["notes"] = notes
    return prov


def dump(model: dict[str, Any]) -> str:
    """JSON as the presets are written: indent 2, lists of numbers on one line."""

    def enc(obj: Any, indent: int) -> str:
        pad = "  " * indent
        if isinstance(obj, dict):
            if not obj:
                return "{}"
            items = [f"{pad}  {json.dumps(k)}: {enc(v, indent + 1)}" for k, v in obj.items()]
            return "{\n" + ",\n".join(items) + "\n" + pad + "}"
        if isinstance(obj, list):
            if all(not isinstance(x, (dict, list)) for x in obj):
                return "[" + ", ".join(json.dumps(x, ensure_ascii=False) for x in obj) + "]"
            items = [pad + "  " + enc(x, indent + 1) for x in obj]
            return "[\n" + ",\n".join(items) + "\n" + pad + "]"
        return json.dumps(obj, ensure_ascii=False)

    return enc(model, 0) + "\n"


def import_matrix(path: str | os.PathLike, fmt: str, **options: Any) -> dict[str, Any]:
    """Reads a matrix file and returns the machine model (see :class:`Options` for the keywords)."""
    o = Options(fmt=fmt, **options)
    _check_options(o)
    return build_model(read_matrix(path, fmt), o)


def check_loads(text: str, shown_as: str | os.PathLike) -> None:
    """Loads the model ``text`` with the loader ``semsim run`` uses (``semsim.machine_info``
    on a temporary copy), so that an import never writes a file that runs then refuse;
    its error is raised as an InputError naming ``shown_as`` (the output or the matrix)."""
    import tempfile

    from . import api

    shown = os.fspath(shown_as)
    with tempfile.TemporaryDirectory(prefix="semsim-import-") as tmp:
        path = Path(tmp) / "model.json"
        path.write_text(text, encoding="utf-8")
        try:
            api.machine_info(str(path))
        except InputError as exc:
            message = str(exc)
            for prefix in (f"{path}: ", f"{path}."):
                if message.startswith(prefix):
                    message = message[len(prefix):]
            message = message.replace(str(path), "the model").replace(tmp, "")
            raise InputError(f"machine import: the model made from {shown} does not load (nothing written): "
                             f"{message}") from None


def summary(model: dict[str, Any]) -> str:
    t = model["topology"]
    lat = ", ".join(f"{k} {v['value']:g}" for k, v in model["latency_ns"].items())
    return (f"{model['name']}: {model['cpus']} CPUs = {t['sockets']} x {t['dies_per_socket']} x "
            f"{t['cores_per_die']} x {t['threads_per_core']} ({t['numbering']}); latency ns: {lat}; "
            f"memory {model['memory_latency_ns']['value']:g} ns; clock {model['clock_ghz']['value']:g} GHz")
