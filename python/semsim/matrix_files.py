"""Reading measured core-to-core latency matrices in the layouts of the shared reference data.

mctop (``reference/data/mctop/*.csv``): rows ``table,i,j,value``; the ``c2c_cas_latency_cycles``
table is the CAS hand-off latency of every ordered pair of hardware contexts in cycles,
``mem_latency_cycles`` the dependent-load latency from a context to a memory node (0 = not
measured), ``cache_level*`` single figures. nviennot (``reference/data/c2c_nviennot/*.csv``): rows
``cpu_i,cpu_j,latency_ns`` (the lower triangle, one-way ns), or a grid with one row per CPU.
Both start with ``# KEY: text`` header lines (SOURCE, MACHINE, BENCHMARK, UNIT). Bad input
raises :class:`semsim.InputError` with one line naming the file, the line and what is wrong.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from .api import InputError

FORMATS = ("mctop", "nviennot")
_GHZ_RE = re.compile(r"(\d+(?:\.\d+)?)\s*GHz", re.IGNORECASE)

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
        text = data.decode("utf-8-sig")
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


def first_sentences(text: str, limit: int) -> str:
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
