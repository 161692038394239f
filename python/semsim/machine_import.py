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

import hashlib
import json
import math
import os
import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from .api import InputError

FORMATS = ("mctop", "nviennot")
NUMBERINGS = ("linux", "smt-adjacent")
DEFAULT_GAP = 0.15
DEFAULT_COSTS_FROM = "uniform-64"
# SMT heuristic (used only when the file does not say whether the machine has SMT):
# siblings share L1, so their CAS hand-off is a few ns (5-14 ns in the nviennot
# files, 28 cycles = 13 ns on mctop's Westmere-EX), far below the next level.
SMT_MAX_GROUP = 4
SMT_MAX_NS = 20.0
SMT_MAX_RATIO = 0.6
_CYCLES_RE = re.compile(r"(\d+(?:\.\d+)?) cycles / (\d+(?:\.\d+)?) GHz\s*$")
_GHZ_RE = re.compile(r"(\d+(?:\.\d+)?)\s*GHz", re.IGNORECASE)
_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9._-]*$")


# ----------------------------------------------------------------------------- reading


@dataclass
class Measured:
    """What a matrix file gives, in its own unit."""

    path: Path
    format: str
    unit: str  # "cycles" or "ns"
    matrix: list[list[float]]  # [i][j], file CPU numbering; diagonal 0
    header: dict[str, str] = field(default_factory=dict)  # SOURCE, MACHINE, ... lines
    sha256: str = ""
    clock_ghz: float | None = None  # stated by the file
    clock_text: str = ""
    sockets: int | None = None  # stated by the file
    sockets_text: str = ""
    smt: bool | None = None  # stated by the file
    smt_text: str = ""
    mem_latency: dict[tuple[int, int], float] = field(default_factory=dict)  # (context, node)
    nodes: int | None = None
    figures: dict[str, float] = field(default_factory=dict)  # other single figures (cache levels)

    @property
    def cpus(self) -> int:
        return len(self.matrix)

    def reference(self) -> str:
        """How sources cite the file: its name and where its SOURCE line says it comes from."""
        src = self.header.get("SOURCE", "")
        hit = re.search(r"(github\.com/[\w.-]+/[\w.-]+),? (?:file )?'?(.+?)'? at commit ([0-9a-f]{7})", src)
        if hit:
            return f"{self.path.name} ({hit.group(1)} {hit.group(2)} @ {hit.group(3)})"
        src = src.split(";")[0].strip()
        return f"{self.path.name} ({src})" if src else self.path.name


def _fail(path: Path | str, message: str) -> None:
    raise InputError(f"machine import: {path}: {message}")


def _read_lines(path: Path) -> tuple[list[str], str]:
    if not path.exists():
        raise InputError(f"machine import: {path}: no such file")
    if not path.is_file():
        raise InputError(f"machine import: {path}: not a file")
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        _fail(path, "not a text file (not UTF-8)")
    return text.splitlines(), hashlib.sha256(data).hexdigest()


def _split_header(path: Path, lines: list[str]) -> tuple[dict[str, str], list[tuple[int, str]]]:
    """`# KEY: text` lines into a dict; the other non-blank lines with their line numbers."""
    header: dict[str, str] = {}
    body = []
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            hit = re.match(r"#\s*([A-Z][A-Z /_-]*?)\s*:\s*(.*)$", stripped)
            if hit and hit.group(1) not in header:
                header[hit.group(1)] = hit.group(2).strip()
            continue
        body.append((number, stripped))
    if not body:
        _fail(path, "no data rows (only comments or blank lines)")
    return header, body


def _number(path: Path, number: int, text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        _fail(path, f"line {number}: {what} {text!r} is not a number")
    if not math.isfinite(value):
        _fail(path, f"line {number}: {what} {text!r} is not a finite number")
    if value < 0:
        _fail(path, f"line {number}: {what} {text} is negative (latencies must be >= 0)")
    return value


def _index(path: Path, number: int, text: str, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        _fail(path, f"line {number}: {what} {text!r} is not a CPU index (an integer >= 0)")
    if value < 0:
        _fail(path, f"line {number}: {what} {value} is negative (CPU indices start at 0)")
    return value


def _square(path: Path, entries: dict[tuple[int, int], float], symmetric_fill: bool) -> list[list[float]]:
    """The matrix of (i, j) -> value entries; every off-diagonal pair must be given."""
    n = 1 + max(max(i, j) for i, j in entries)
    if n < 2:
        _fail(path, "the matrix has a single CPU; at least 2 are needed")
    if n > 256:
        _fail(path, f"the matrix has {n} CPUs; the simulator models at most 256")
    m = [[0.0] * n for _ in range(n)]
    for (i, j), v in entries.items():
        m[i][j] = v
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            if (i, j) in entries:
                continue
            if symmetric_fill and (j, i) in entries:
                m[i][j] = entries[(j, i)]
                continue
            _fail(path, f"the matrix is not square: CPU pair ({i}, {j}) is missing "
                        f"(CPU indices run 0..{n - 1})")
            # (unreachable)
    for i in range(n):
        for j in range(n):
            if i != j and m[i][j] <= 0:
                _fail(path, f"CPU pair ({i}, {j}) has latency {m[i][j]:g}; latencies between "
                            "distinct CPUs must be > 0")
    return m


def read_mctop(path: str | os.PathLike) -> Measured:
    """An mctop matrix as stored in the shared data: `table,i,j,value` rows, cycles."""
    p = Path(path)
    lines, digest = _read_lines(p)
    header, body = _split_header(p, lines)
    number, first = body[0]
    if [c.strip() for c in first.split(",")] != ["table", "i", "j", "value"]:
        _fail(p, f"line {number}: expected the mctop header row 'table,i,j,value', got {first[:60]!r}"
                 " (is this an mctop file? --format nviennot reads cpu_i,cpu_j,latency_ns)")
    c2c: dict[tuple[int, int], float] = {}
    mem: dict[tuple[int, int], float] = {}
    figures: dict[str, float] = {}
    for number, line in body[1:]:
        cells = [c.strip() for c in line.split(",")]
        if len(cells) != 4:
            _fail(p, f"line {number}: expected 4 fields table,i,j,value, got {len(cells)}")
        table, i, j, value = cells
        if table.startswith("c2c"):
            key = (_index(p, number, i, "i"), _index(p, number, j, "j"))
            if key in c2c:
                _fail(p, f"line {number}: CPU pair {key} is given twice")
            c2c[key] = _number(p, number, value, "latency")
        elif table == "mem_latency_cycles":
            mem[(_index(p, number, i, "i"), _index(p, number, j, "j"))] = _number(
                p, number, value, "memory latency")
        elif table.startswith("cache_level") and not i and not j:
            figures[table] = _number(p, number, value, table)
        # other tables (memory bandwidth) have no place in the model
    if not c2c:
        _fail(p, "no c2c rows (table c2c_cas_latency_cycles): not an mctop latency file")
    m = Measured(p, "mctop", "cycles", _square(p, c2c, symmetric_fill=False), header, digest)
    m.mem_latency = {k: v for k, v in mem.items() if v > 0}  # 0 = not measured (file header)
    if m.mem_latency:
        m.nodes = 1 + max(j for _, j in mem)
    m.figures = figures
    src = header.get("SOURCE", "")
    hit = re.search(r"#HWCs\s+(\d+)\s+#Nodes\s+(\d+)\s+SMT\s+(\d+)", src)
    if hit:
        hwcs, nodes, smt = (int(g) for g in hit.groups())
        if hwcs != m.cpus:
            _fail(p, f"the header says #HWCs {hwcs} but the c2c matrix has {m.cpus} CPUs")
        m.sockets, m.sockets_text = nodes, f"the file header line's '#Nodes {nodes}'"
        m.smt, m.smt_text = smt != 0, f"the file header line's 'SMT {smt}'"
    _clock_from(m, header.get("MACHINE", ""))
    return m


def read_nviennot(path: str | os.PathLike) -> Measured:
    """A nviennot/core-to-core-latency matrix: `cpu_i,cpu_j,latency_ns` rows (one-way ns), or
    a grid with one row of values per CPU (blanks allowed; a lower triangle is mirrored)."""
    p = Path(path)
    lines, digest = _read_lines(p)
    header, body = _split_header(p, lines)
    number, first = body[0]
    cells = [c.strip() for c in first.split(",")]
    entries: dict[tuple[int, int], float] = {}
    if cells == ["cpu_i", "cpu_j", "latency_ns"]:
        for number, line in body[1:]:
            row = [c.strip() for c in line.split(",")]
            if len(row) != 3:
                _fail(p, f"line {number}: expected 3 fields cpu_i,cpu_j,latency_ns, got {len(row)}")
            key = (_index(p, number, row[0], "cpu_i"), _index(p, number, row[1], "cpu_j"))
            if key in entries:
                _fail(p, f"line {number}: CPU pair {key} is given twice")
            if key[0] != key[1]:
                entries[key] = _number(p, number, row[2], "latency")
        if not entries:
            _fail(p, "no CPU pairs after the header row")
    elif cells == ["table", "i", "j", "value"]:
        _fail(p, f"line {number}: this is an mctop file (table,i,j,value); use --format mctop")
    else:
        rows = [(n, [c.strip() for c in line.split(",")]) for n, line in body]
        width = len(rows[0][1])
        for n, row in rows:
            if len(row) != width:
                _fail(p, f"line {n}: ragged matrix: {len(row)} fields where the first row has {width}")
        if len(rows) != width:
            _fail(p, f"the matrix is not square: {len(rows)} rows of {width} values")
        for i, (n, row) in enumerate(rows):
            for j, text in enumerate(row):
                if text and i != j:
                    entries[(i, j)] = _number(p, n, text, f"entry [{i}][{j}]")
        if not entries:
            _fail(p, "no latencies in the matrix")
    m = Measured(p, "nviennot", "ns", _square(p, entries, symmetric_fill=True), header, digest)
    machine = header.get("MACHINE", "")
    named = re.match(r"'([^']*)'", machine)
    cpu_name = named.group(1) if named else ""
    if cpu_name:
        if cpu_name.lower().startswith("dual"):
            m.sockets = 2
            m.sockets_text = (f"the CPU name the file gives, {cpu_name!r}: nviennot's results name 2-socket "
                              "machines 'Dual ...' (the file header's note)")
        else:
            m.sockets = 1
            m.sockets_text = (f"assumption: one socket, as the CPU name the file gives, {cpu_name!r}, does not "
                              "start with 'Dual' (nviennot's name for 2-socket machines; AWS metal instances are "
                              "2-socket under single-socket names: give --sockets)")
        _clock_from(m, cpu_name, nominal=True)
    return m


def _clock_from(m: Measured, text: str, nominal: bool = False) -> None:
    clocks = {float(x) for x in _GHZ_RE.findall(text)}
    if len(clocks) == 1:
        m.clock_ghz = clocks.pop()
        excerpt = text if len(text) < 200 else _sentence_with(text, "GHz")
        m.clock_text = (f"the nominal clock in the CPU name {excerpt!r} (turbo not known)" if nominal
                        else f"the file's MACHINE header: {excerpt!r}")


def _first_sentences(text: str, limit: int) -> str:
    out = ""
    for sentence in re.split(r"(?<=[.;])\s+", text):
        if out and len(out) + len(sentence) > limit:
            break
        out = f"{out} {sentence}".strip()
    return out.rstrip(".;")


def _sentence_with(text: str, word: str) -> str:
    for sentence in re.split(r"(?<=[.;])\s+", text):
        if word in sentence:
            return sentence.strip()
    return text[:200]


def read_matrix(path: str | os.PathLike, fmt: str) -> Measured:
    if fmt not in FORMATS:
        raise InputError(f"machine import: --format {fmt!r}: allowed: {', '.join(FORMATS)}")
    return read_mctop(path) if fmt == "mctop" else read_nviennot(path)


# ----------------------------------------------------------------------------- clusters


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


# ----------------------------------------------------------------------------- topology


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


def _median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def _smt_guess(m: list[list[float]], levels: Sequence[Level], ns_per_unit: float | None) -> tuple[bool, str]:
    first = levels[0]
    if len(first.groups) == 1:
        return False, "no grouping below the whole machine, so no SMT"
    if first.size > SMT_MAX_GROUP:
        return False, f"the closest groups have {first.size} CPUs (more than {SMT_MAX_GROUP}), so they are not SMT siblings"
    inside = _median([_sym(m, a, b) for g in first.groups for x, a in enumerate(g) for b in g[x + 1:]])
    nxt = levels[1]
    member = {c: g for g in first.groups for c in g}
    outside = _median([_sym(m, a, b) for g in nxt.groups for a in g for b in g if member[a] is not member[b]])
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
            med[(a, b)] = _median([_sym(m, x, y) for x in sockets[a] for y in sockets[b]])
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

    return Inferred(groups(lambda l: l[0]), groups(lambda l: l[:2]), groups(lambda l: l[:3]), T > 1, [],
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


def _uniform(inf: Inferred) -> str:
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
    for s, sg in enumerate(inf.sockets):
        dies = [g for g in inf.dies if home[g[0]] == s]
        for d, dg in enumerate(dies):
            cores = [g for g in inf.cores if g[0] in dg]
            for c, cg in enumerate(cores):
                for t, cpu in enumerate(cg):
                    cpu_map[model_id((s, d, c, t), shape, scheme)] = cpu
    return scheme, cpu_map, False


# ----------------------------------------------------------------------------- model


def _round(x: float) -> float:
    """As the presets write values: 2 decimals from 10 up, else 4 significant digits."""
    if x >= 10:
        return round(x, 2)
    return float(f"{x:.4g}")


def _num(x: float) -> float | int:
    return int(x) if float(x).is_integer() else round(x, 6)


def _ghz_text(ghz: float) -> str:
    return f"{ghz:g}"


def _unit_text(value: float, unit: str) -> str:
    return f"{value:g} {unit}"


def find_preset(name_or_path: str) -> tuple[Path, dict[str, Any]]:
    """A machine file by preset name (./cpu_models first, then the installed data) or path."""
    candidates = []
    if "/" in name_or_path or name_or_path.endswith(".json"):
        candidates.append(Path(name_or_path))
    else:
        from . import _data

        candidates.append(Path("cpu_models") / f"{name_or_path}.json")
        base = _data.data_dir()
        if base is not None:
            candidates.append(base / "cpu_models" / f"{name_or_path}.json")
    for c in candidates:
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
    if o.ghz is not None and not (math.isfinite(o.ghz) and 0.1 <= o.ghz <= 10):
        raise InputError(f"machine import: --ghz {o.ghz:g}: must be a clock in GHz between 0.1 and 10")
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

    # The clock: cycles -> ns for mctop; the conversion of cycle-count costs for both.
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
    ns_per_unit = 1 / ghz if measured.unit == "cycles" else 1.0
    unit = measured.unit

    def conv(v: float) -> str:
        return f"{v:g} cycles / {_ghz_text(ghz)} GHz" if unit == "cycles" else f"{v:g} ns"

    # Topology.
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
        why = _uniform(inf)
        if why:
            notes.append(f"the latency clusters give {why}; modelled as one die of {n} CPUs (the matrix "
                         "keeps every measured pair)")
            all_cpus = tuple(range(n))
            inf = Inferred([all_cpus], [all_cpus], [(c,) for c in range(n)], False, [[0]],
                           inf.how + f"; not uniform ({why}): one die of all CPUs", [], inf.classes, inf.levels)
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
        med = _median(vals)
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
    matrix_src = (f"{ref}: {_first_sentences(measured.header.get('BENCHMARK', 'core-to-core latency'), 400)}; "
                  f"every pair of the {cpus} model CPUs (model CPU i = file CPU provenance.cpu_map[i]), "
                  + ("cycles / " + _ghz_text(ghz) + " GHz" if unit == "cycles" else "ns as measured")
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
        model["numa_distance"] = mem[1] if mem[1] is not None else None
        if model["numa_distance"] is None:
            del model["numa_distance"]
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
    model["provenance"] = _provenance(measured, o, name, preset_path, cpu_map, full, notes, kept)
    return model


def _description(measured: Measured, shape: tuple[int, int, int, int]) -> str:
    S, D, C, T = shape
    machine = measured.header.get("MACHINE", "").split(". ")[0].strip()
    what = f"{S} socket(s) x {D} die(s) x {C} cores x {T} thread(s)"
    return f"imported from {measured.path.name} ({machine[:160]}): {what}" if machine else f"imported from {measured.path.name}: {what}"


def _memory(measured: Measured, full: Inferred, inf: Inferred, loc: dict[int, tuple[int, int, int, int]],
            model_of: dict[int, int], ghz: float, ref: str, notes: list[str]) -> tuple[dict[str, Any], dict[str, Any] | None] | None:
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
    med = _median(list(local.values()))
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
        own = _median([local[i] for i in ctx])
        for b in range(dies):
            v = _median([rows[i][node_of_die[b]] for i in ctx])
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


def summary(model: dict[str, Any]) -> str:
    t = model["topology"]
    lat = ", ".join(f"{k} {v['value']:g}" for k, v in model["latency_ns"].items())
    return (f"{model['name']}: {model['cpus']} CPUs = {t['sockets']} x {t['dies_per_socket']} x "
            f"{t['cores_per_die']} x {t['threads_per_core']} ({t['numbering']}); latency ns: {lat}; "
            f"memory {model['memory_latency_ns']['value']:g} ns; clock {model['clock_ghz']['value']:g} GHz")
