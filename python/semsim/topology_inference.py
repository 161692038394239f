"""Topology from a latency matrix: latency classes, the groupings they give, sockets and hops.

See the docstring of :mod:`semsim.machine_import` for the method. Everything here works in the
matrix's own unit and on file CPU ids.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .api import InputError

NUMBERINGS = ("linux", "smt-adjacent")
DEFAULT_GAP = 0.15
# SMT heuristic (used only when the file does not say whether the machine has SMT):
# siblings share L1, so their CAS hand-off is a few ns (5-14 ns in the nviennot
# files, 28 cycles = 13 ns on mctop's Westmere-EX), far below the next level.
SMT_MAX_GROUP = 4
SMT_MAX_NS = 20.0
SMT_MAX_RATIO = 0.6

def latency_classes(values: Sequence[float], gap: float = DEFAULT_GAP) -> list[tuple[float, float]]:
    """Sorted distinct latencies split where one exceeds the previous by more than `gap`:
    [(lowest, highest), ...] per class, nearest first."""
    distinct = sorted(set(values))
    classes = []
    lo = prev = distinct[0]
    for v in distinct[1:]:
        if v > prev * (1 + gap):
            classes.append((lo, prev))
            lo = v
        prev = v
    classes.append((lo, prev))
    return classes


def _sym(m: list[list[float]], a: int, b: int) -> float:
    return (m[a][b] + m[b][a]) / 2


def components(m: list[list[float]], cpus: Sequence[int], threshold: float) -> list[tuple[int, ...]]:
    """Connected components of `cpus` under "latency <= threshold", each sorted, ordered by
    their lowest CPU."""
    parent = {c: c for c in cpus}

    def find(c: int) -> int:
        while parent[c] != c:
            parent[c] = parent[parent[c]]
            c = parent[c]
        return c

    for x, a in enumerate(cpus):
        for b in cpus[x + 1:]:
            if _sym(m, a, b) <= threshold:
                ra, rb = find(a), find(b)
                if ra != rb:
                    parent[max(ra, rb)] = min(ra, rb)
    groups: dict[int, list[int]] = {}
    for c in cpus:
        groups.setdefault(find(c), []).append(c)
    return sorted((tuple(sorted(g)) for g in groups.values()), key=lambda g: g[0])


def _is_clique(m: list[list[float]], groups: Sequence[Sequence[int]], threshold: float) -> bool:
    return all(_sym(m, a, b) <= threshold for g in groups for x, a in enumerate(g) for b in g[x + 1:])


@dataclass
class Level:
    groups: list[tuple[int, ...]]
    threshold: float  # the largest latency inside a group

    @property
    def size(self) -> int:
        return len(self.groups[0])


def hierarchy(m: list[list[float]], cpus: Sequence[int], gap: float) -> tuple[list[Level], list[tuple[float, float]]]:
    """The nested, uniform, clique groupings the latency classes give, finest first; the
    last is always all CPUs in one group."""
    values = [_sym(m, a, b) for x, a in enumerate(cpus) for b in cpus[x + 1:]]
    classes = latency_classes(values, gap)
    levels: list[Level] = []
    for _, hi in classes:
        groups = components(m, cpus, hi)
        if len(groups) == len(cpus) or len({len(g) for g in groups}) != 1:
            continue
        if not _is_clique(m, groups, hi):
            continue
        if levels and len(levels[-1].groups) == len(groups):
            continue  # the same grouping as the previous class
        levels.append(Level(groups, hi))
    if not levels or len(levels[-1].groups) != 1:
        levels.append(Level([tuple(cpus)], max(values)))
    return levels, classes


def _pair_classes_uniform(m: list[list[float]], groups: Sequence[Sequence[int]],
                          classes: Sequence[tuple[float, float]]) -> bool:
    """True if any two groups see each other at a single latency class."""
    def cls(v: float) -> int:
        return next(k for k, (_, hi) in enumerate(classes) if v <= hi)

    for x, ga in enumerate(groups):
        for gb in groups[x + 1:]:
            if len({cls(_sym(m, a, b)) for a in ga for b in gb}) != 1:
                return False
    return True


@dataclass
class Inferred:
    sockets: list[tuple[int, ...]]  # each a tuple of file CPUs
    dies: list[tuple[int, ...]]
    cores: list[tuple[int, ...]]
    smt: bool
    socket_hops: list[list[int]]  # by socket index (order of `sockets`)
    how: str  # for the topology source
    notes: list[str] = field(default_factory=list)
    classes: list[tuple[float, float]] = field(default_factory=list)
    levels: list[Level] = field(default_factory=list)

    @property
    def shape(self) -> tuple[int, int, int, int]:
        s = len(self.sockets)
        d = len(self.dies) // s
        c = len(self.cores) // len(self.dies)
        t = len(self.cores[0])
        return s, d, c, t


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def _smt_guess(m: list[list[float]], levels: Sequence[Level], ns_per_unit: float | None) -> tuple[bool, str]:
    first = levels[0]
    if len(first.groups) == 1:
        return False, "no grouping below the whole machine, so no SMT"
    if first.size > SMT_MAX_GROUP:
        return False, (f"the closest groups have {first.size} CPUs (more than {SMT_MAX_GROUP}), "
                       "so they are not SMT siblings")
    inside = median([_sym(m, a, b) for g in first.groups for x, a in enumerate(g) for b in g[x + 1:]])
    nxt = levels[1]
    member = {c: g for g in first.groups for c in g}
    outside = median([_sym(m, a, b) for g in nxt.groups for a in g for b in g if member[a] is not member[b]])
    ratio = inside / outside
    ns = inside * ns_per_unit if ns_per_unit else None
    if ratio > SMT_MAX_RATIO:
        return False, f"the closest pairs ({inside:g}) are {ratio:.2f}x the next level ({outside:g}), not SMT-like"
    if ns is not None and ns > SMT_MAX_NS:
        return False, f"the closest pairs take {ns:.1f} ns, more than SMT siblings ({SMT_MAX_NS:g} ns)"
    return True, (f"assumption: groups of {first.size} CPUs at {inside:g} against {outside:g} to the next "
                  f"level (at most {SMT_MAX_RATIO}x and {SMT_MAX_NS:g} ns) taken as SMT siblings")


def infer_topology(m: list[list[float]], *, gap: float = DEFAULT_GAP, smt: bool | None = None,
                   smt_text: str = "", sockets: int | None = None, sockets_text: str = "",
                   ns_per_unit: float | None = None, stated_by_flag: bool = False) -> Inferred:
    """The topology the latency clusters give (see the module docstring)."""
    n = len(m)
    cpus = list(range(n))
    levels, classes = hierarchy(m, cpus, gap)
    how = [f"inferred from the latency clusters ({len(classes)} classes at gaps over {gap:.0%}: "
           + ", ".join(f"{lo:g}" if lo == hi else f"{lo:g}-{hi:g}" for lo, hi in classes) + ")"]
    if smt is None:
        smt, why = _smt_guess(m, levels, ns_per_unit)
        how.append(why)
    else:
        how.append(f"SMT {'yes' if smt else 'no'} by {smt_text}")
        if smt and (len(levels[0].groups) == 1 or levels[0].size > 8):
            raise InputError(f"machine import: SMT was stated ({smt_text}) but the closest latency "
                             f"class groups {levels[0].size} CPUs: give --topology")
    cores = levels[0].groups if smt else [(c,) for c in cpus]
    above = levels[1:] if smt else levels
    if sockets is None:
        candidates = [lv for lv in above[:-1] if _pair_classes_uniform(m, lv.groups, classes)]
        socket_level = candidates[-1] if candidates else above[-1]
        how.append(f"{len(socket_level.groups)} socket(s): the coarsest grouping whose groups see each "
                   "other at one latency class per pair (assumption: such groups are sockets)")
    else:
        matching = [lv for lv in above if len(lv.groups) == sockets]
        if matching:
            socket_level = matching[0]
            how.append(f"{sockets} socket(s) by {sockets_text}")
        else:
            found = ", ".join(str(len(lv.groups)) for lv in above)
            why = (f"{sockets} socket(s) ({sockets_text}) but the latency clusters group the CPUs into "
                   f"{found} equal groups")
            if stated_by_flag:
                raise InputError(f"machine import: {why}: give another --sockets or --topology")
            socket_level = above[-1]
            how.append(f"{why}: modelled as one socket")
    below = [lv for lv in above if lv.threshold <= socket_level.threshold and len(lv.groups) > len(socket_level.groups)]
    die_level = below[0] if below else socket_level
    if below and len(below) > 1:
        how.append(f"dies = the first grouping above the cores ({len(die_level.groups)} of {die_level.size} "
                   "CPUs); the coarser groupings within a socket share the same_socket class")
    inf = Inferred(list(socket_level.groups), list(die_level.groups), list(cores), smt, [], "; ".join(how),
                   classes=classes, levels=levels)
    inf.socket_hops = socket_hops(m, inf.sockets, gap, inf.notes)
    return inf


def socket_hops(m: list[list[float]], sockets: Sequence[Sequence[int]], gap: float,
                notes: list[str]) -> list[list[int]]:
    """1 or 2 hops per socket pair by the class of the pair's median latency."""
    s = len(sockets)
    hops = [[0] * s for _ in range(s)]
    if s == 1:
        return hops
    med = {}
    for a in range(s):
        for b in range(a + 1, s):
            med[(a, b)] = median([_sym(m, x, y) for x in sockets[a] for y in sockets[b]])
    classes = latency_classes(list(med.values()), gap)
    for (a, b), v in med.items():
        k = next(i for i, (_, hi) in enumerate(classes) if v <= hi)
        hops[a][b] = hops[b][a] = 1 if k == 0 else 2
    if len(classes) > 2:
        notes.append(f"socket pairs fall in {len(classes)} latency classes; all but the nearest are "
                     "modelled as two hops (the matrix keeps every pair's latency)")
    for a in range(s):
        for b in range(s):
            if hops[a][b] == 2 and not any(hops[a][k] == 1 and hops[k][b] == 1 for k in range(s)):
                notes.append("a two-hop socket pair without a common one-hop neighbour: every socket "
                             "pair modelled as one hop (the matrix keeps every pair's latency)")
                return [[0 if a == b else 1 for b in range(s)] for a in range(s)]
    return hops


def given_topology(n: int, shape: tuple[int, int, int, int], numbering: str) -> Inferred:
    """The groups of file CPUs when the topology is given: file CPU ids follow `numbering`."""
    S, D, C, T = shape
    if S * D * C * T != n:
        raise InputError(f"machine import: --topology {S},{D},{C},{T} has {S * D * C * T} CPUs but "
                         f"the matrix has {n}")
    loc = {cpu: location(cpu, shape, numbering) for cpu in range(n)}

    def groups(key: Any) -> list[tuple[int, ...]]:
        out: dict[Any, list[int]] = {}
        for cpu in range(n):
            out.setdefault(key(loc[cpu]), []).append(cpu)
        return sorted((tuple(g) for g in out.values()), key=lambda g: g[0])

    return Inferred(groups(lambda lv: lv[0]), groups(lambda lv: lv[:2]), groups(lambda lv: lv[:3]), T > 1, [],
                    f"given on the command line (--topology {S},{D},{C},{T}, file CPU ids numbered "
                    f"'{numbering}')")


def location(cpu: int, shape: tuple[int, int, int, int], numbering: str) -> tuple[int, int, int, int]:
    """(socket, die, core, thread) of a CPU id under a numbering of cpu_models/README.md."""
    S, D, C, T = shape
    if numbering == "smt-adjacent":
        return cpu // (T * C * D), (cpu // (T * C)) % D, (cpu // T) % C, cpu % T
    N = S * D * C
    k = cpu % N
    return k % S, (k // S) // C, (k // S) % C, cpu // N


def model_id(loc: tuple[int, int, int, int], shape: tuple[int, int, int, int], numbering: str) -> int:
    S, D, C, T = shape
    s, d, c, t = loc
    if numbering == "smt-adjacent":
        return ((s * D + d) * C + c) * T + t
    return t * (S * D * C) + (d * C + c) * S + s


def uniform_problem(inf: Inferred) -> str:
    """'' if the groups nest uniformly, else why not."""
    s = len(inf.sockets)
    if len(inf.dies) % s or len({len(g) for g in inf.dies}) != 1:
        return "dies of unequal size"
    if len(inf.cores) % len(inf.dies) or len({len(g) for g in inf.cores}) != 1:
        return "cores of unequal size"
    for outer, inner in ((inf.sockets, inf.dies), (inf.dies, inf.cores)):
        home = {c: k for k, g in enumerate(outer) for c in g}
        per = {}
        for g in inner:
            if len({home[c] for c in g}) != 1:
                return "groups that do not nest"
            per[home[g[0]]] = per.get(home[g[0]], 0) + 1
        if len(set(per.values())) != 1:
            return "unequal numbers of dies per socket or cores per die"
    return ""


def drop_smt(inf: Inferred) -> tuple[Inferred, list[int]]:
    """Keep the lowest-numbered hardware thread of every core."""
    kept = sorted(g[0] for g in inf.cores)
    keep = set(kept)

    def only(groups: list[tuple[int, ...]]) -> list[tuple[int, ...]]:
        return [tuple(c for c in g if c in keep) for g in groups]

    return Inferred(only(inf.sockets), only(inf.dies), [(g[0],) for g in inf.cores], False, inf.socket_hops,
                    inf.how + "; SMT dropped (--drop-smt): one model CPU per core, its lowest-numbered "
                    "hardware thread", list(inf.notes), inf.classes, inf.levels), kept


def assign_ids(inf: Inferred, numbering: str | None) -> tuple[str, list[int], bool]:
    """The model numbering and cpu_map (model CPU i = file CPU cpu_map[i]); keeps the file's
    numbering (in ascending order of its CPUs) when it is one of the schemes."""
    shape = inf.shape
    files = sorted(c for g in inf.cores for c in g)
    key = {}
    for s, sg in enumerate(inf.sockets):
        for c in sg:
            key[c] = [s]
    for groups, _ in ((inf.dies, "die"), (inf.cores, "core")):
        for g in groups:
            for c in g:
                key[c].append(g[0])
    for g in inf.cores:
        for t, c in enumerate(g):
            key[c].append(t)
    # The file's numbering fits a scheme if the monotone map puts the same CPUs together.
    for scheme in ([numbering] if numbering else list(NUMBERINGS)):
        loc = [location(i, shape, scheme) for i in range(len(files))]
        ok = all(
            (loc[x][0] == loc[y][0]) == (key[a][0] == key[b][0])
            and (loc[x][:2] == loc[y][:2]) == (key[a][:2] == key[b][:2])
            and (loc[x][:3] == loc[y][:3]) == (key[a][:3] == key[b][:3])
            for x, a in enumerate(files) for y, b in enumerate(files) if x < y)
        if ok:
            return scheme, files, True
    scheme = numbering or "smt-adjacent"
    S, D, C, T = shape
    cpu_map = [0] * len(files)
    home = {c: k for k, g in enumerate(inf.sockets) for c in g}
    for s in range(len(inf.sockets)):
        dies = [g for g in inf.dies if home[g[0]] == s]
        for d, dg in enumerate(dies):
            cores = [g for g in inf.cores if g[0] in dg]
            for c, cg in enumerate(cores):
                for t, cpu in enumerate(cg):
                    cpu_map[model_id((s, d, c, t), shape, scheme)] = cpu
    return scheme, cpu_map, False
