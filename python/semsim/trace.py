"""Perfetto traces of one simulated point: ``semsim run SCENARIO --trace FILE.perfetto-trace``.

The simulator records, inside a window of simulated time, what each task ran on
which CPU (merged into slices by kernel function), every lock hold and every
wait for a lock (with the task that handed the lock over), every wake-up of a
sleeping task and every change of a run queue's length
(``sim/report/trace_recorder.hpp``). This module writes them as a Perfetto
protobuf trace with the ``perfetto`` package's trace builder:

- a track per simulated CPU (``CPU n``) with the tasks' slices, named by function
  (``[user] benchmark loop``, ``do_semtimedop``, ``_raw_spin_lock`` ..., category
  user / syscall / kernel / spin / context_switch / interrupt), ``idle`` slices
  in the gaps, the task in each slice's ``task`` argument;
- a track per lock (``sma->sem_perm.lock``, ``sem->lock[3]``, the rwlock) with its
  ``held`` slices, and under it a track per task with that task's ``contended``
  slices (the wait for the lock) and, for an rwlock, its read holds;
- flows from the waker's slice to the wakee's first slice after the wake-up, and
  from a releaser's ``held`` slice to the next owner's;
- a counter track per CPU with its run-queue length.

The trace processor and UI read it; the tests read it back with the protobuf
classes alone (:func:`read_trace`). Size is bounded: a window (default the first
millisecond of the measurement window) and at most ``limit`` recorded events; a
window over the limit fails with a one-line message instead of filling memory.
"""

from __future__ import annotations

import bisect
import json
import math
import os
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .api import (
    InputError,
    ScenarioLike,
    _load_text,
    _require_core,
    check_int,
    check_output_file,
    override_args,
    write_file,
)

#: The most events a trace may record unless told otherwise (each is one or two trace packets).
DEFAULT_LIMIT = 1_000_000
#: The most events a trace may record (``limit``): about 100 bytes of memory each while recorded.
MAX_LIMIT = 100_000_000
#: The default window: this much of the measurement window, from its start.
DEFAULT_WINDOW_MS = 1.0
#: The latest simulated time a window may reach: a run's warm-up and window are at most one hour.
MAX_WINDOW_MS = 3.6e6

_SEQ = 1  # the one packet sequence the trace is written on


def parse_window(text: str) -> tuple[float, float]:
    """``"A..B"`` (simulated milliseconds) to ``(A, B)``; InputError naming the flag otherwise."""
    parts = str(text).split("..")
    try:
        if len(parts) != 2:
            raise ValueError
        a, b = float(parts[0]), float(parts[1])
    except ValueError:
        raise InputError(f"--trace-window {text!r}: expected A..B in simulated milliseconds (e.g. 10..11)") from None
    return check_window((a, b), f"--trace-window {text!r}", "A..B")


def check_window(window: Any, what: str = "window_ms", shape: str = "(A, B)") -> tuple[float, float]:
    """``(A, B)``: two finite numbers of simulated ms with 0 <= A < B <= one hour; else InputError."""
    allowed = f"expected {shape} in simulated milliseconds with 0 <= A < B <= {MAX_WINDOW_MS:.0f} (one hour)"
    if isinstance(window, (str, bytes)) or not isinstance(window, Sequence) or len(window) != 2:
        hint = " (for 'A..B' text, use semsim.trace.parse_window)" if isinstance(window, str) else ""
        raise InputError(f"{what}: {allowed}, got {window!r}{hint}")
    a, b = window
    if any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in (a, b)):
        raise InputError(f"{what}: {allowed}, got {tuple(window)!r}")
    a, b = float(a), float(b)
    if not (math.isfinite(a) and math.isfinite(b) and 0 <= a < b <= MAX_WINDOW_MS):
        raise InputError(f"{what}: {allowed}, got {a:g}..{b:g}")
    return a, b


def check_limit(limit: Any, what: str = "limit") -> int:
    """The most events to record: None (:data:`DEFAULT_LIMIT`) or an integer from 1 to :data:`MAX_LIMIT`."""
    if limit is None:
        return DEFAULT_LIMIT
    return check_int(limit, what, 1, MAX_LIMIT, f" (trace events; default {DEFAULT_LIMIT:,})")


def _ns(ps: int) -> int:
    return int(ps) // 1000


def record(scenario: ScenarioLike, *, window_ms: tuple[float, float] | None = None, limit: int | None = None,
           sets: Sequence[str] = (), **overrides: Any) -> dict[str, Any]:
    """Runs the traced point; returns ``{"point", "trace", "window_ms"}`` (the raw events).

    ``window_ms``: ``(A, B)`` simulated milliseconds (default: the first millisecond of the
    measurement window); ``limit``: the most events, 1 to :data:`MAX_LIMIT` (default
    :data:`DEFAULT_LIMIT`). Bad values raise :class:`InputError` before anything runs.
    """
    if window_ms is not None:
        window_ms = check_window(window_ms)
    limit = check_limit(limit)
    text = _load_text(scenario, [*sets, *override_args(overrides)])
    doc = json.loads(text)
    if window_ms is None:
        start = float(doc.get("warmup_ms", 0.0))
        window_ms = (start, start + min(DEFAULT_WINDOW_MS, float(doc.get("duration_ms", DEFAULT_WINDOW_MS))))
    out = json.loads(_require_core().trace(text, float(window_ms[0]), float(window_ms[1]), limit))
    if out.get("overflowed"):
        raise InputError(
            f"trace: the window {window_ms[0]:g}..{window_ms[1]:g} ms holds more than {limit:,} events (the "
            "limit): narrow --trace-window or raise --trace-limit")
    out["window_ms"] = list(window_ms)
    return out


class TraceInfo:
    """What a written trace holds: its path, window, track/slice/flow counts and the traced point."""

    def __init__(self, path: Path | None, window_ms: Sequence[float], counts: dict[str, Any],
                 point: dict[str, Any], size: int) -> None:
        self.path, self.window_ms, self.counts, self.point, self.size = path, list(window_ms), counts, point, size

    def summary(self) -> str:
        c = self.counts
        return (f"{self.path} ({self.size:,} bytes): {self.window_ms[0]:g}..{self.window_ms[1]:g} ms, "
                f"{c['cpu_tracks']} CPU tracks, {c['lock_tracks']} lock tracks, {c['cpu_slices']:,} CPU slices, "
                f"{c['held_slices']:,} held and {c['contended_slices']:,} contended slices, "
                f"{c['wake_flows']:,} wake-up and {c['handoff_flows']:,} hand-off flows, "
                f"{c['counter_values']:,} run-queue counter values"
                + (f", {c['clipped_slices']:,} CPU slices clipped where they overlapped the one before"
                   if c.get("clipped_slices") else ""))

    def __repr__(self) -> str:
        return f"<semsim.TraceInfo {self.summary()}>"

    def _repr_html_(self) -> str:
        from ._html import trace_html

        return trace_html(self)


class _Builder:
    """Trace packets, sorted by time at the end (per track in the order they were made)."""

    def __init__(self) -> None:
        from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import TrackEvent
        from perfetto.trace_builder.proto_builder import TraceProtoBuilder

        self.TrackEvent = TrackEvent
        self.builder = TraceProtoBuilder()
        self.events: list[tuple[int, int, int, dict[str, Any]]] = []
        self.per_track: Counter[int] = Counter()
        self.next_uuid = 1

    def track(self, name: str, parent: int | None = None, counter: bool = False) -> int:
        uuid = self.next_uuid
        self.next_uuid += 1
        pkt = self.builder.add_packet()
        pkt.trusted_packet_sequence_id = _SEQ
        pkt.track_descriptor.uuid = uuid
        pkt.track_descriptor.name = name
        if parent is not None:
            pkt.track_descriptor.parent_uuid = parent
        if counter:
            pkt.track_descriptor.counter.SetInParent()
        return uuid

    def _event(self, track: int, ts: int, **fields: Any) -> None:
        self.events.append((ts, self.per_track[track], track, fields))
        self.per_track[track] += 1

    def slice(self, track: int, name: str, start: int, end: int, category: str, task: int | None = None,
              flows_out: Iterable[int] = (), flows_in: Iterable[int] = ()) -> None:
        self._event(track, start, type="begin", name=name, category=category, task=task,
                    flows_out=list(flows_out), flows_in=list(flows_in))
        self._event(track, end, type="end")

    def counter(self, track: int, ts: int, value: int) -> None:
        self._event(track, ts, type="counter", value=value)

    def serialize(self) -> bytes:
        te = self.TrackEvent
        for ts, _, track, f in sorted(self.events, key=lambda e: (e[0], e[2], e[1])):
            pkt = self.builder.add_packet()
            pkt.timestamp = ts
            pkt.trusted_packet_sequence_id = _SEQ
            ev = pkt.track_event
            ev.track_uuid = track
            if f["type"] == "begin":
                ev.type = te.TYPE_SLICE_BEGIN
                ev.name = f["name"]
                ev.categories.append(f["category"])
                if f["task"] is not None:
                    ann = ev.debug_annotations.add()
                    ann.name = "task"
                    ann.int_value = f["task"]
                ev.flow_ids.extend(f["flows_out"])
                ev.terminating_flow_ids.extend(f["flows_in"])
            elif f["type"] == "end":
                ev.type = te.TYPE_SLICE_END
            else:
                ev.type = te.TYPE_COUNTER
                ev.counter_value = f["value"]
        return self.builder.serialize()


def _columns(table: Mapping[str, list[Any]]) -> list[dict[str, Any]]:
    keys = list(table)
    return [dict(zip(keys, row)) for row in zip(*(table[k] for k in keys))]


def build(events: Mapping[str, Any]) -> tuple[bytes, dict[str, Any]]:
    """The protobuf bytes of a recorded trace, and the counts of what went in."""
    if not isinstance(events, Mapping) or not isinstance(events.get("trace"), Mapping):
        raise InputError("trace.build: events: expected what semsim.trace.record() returns (a dict with a "
                         f"'trace' object), not {type(events).__name__}")
    tr = events["trace"]
    lo, hi = _ns(tr["window_ps"][0]), _ns(tr["window_ps"][1])
    funcs = tr["funcs"]
    b = _Builder()
    counts: dict[str, Any] = defaultdict(int)

    # CPU slices: per CPU in time order; a slice that would start inside the one
    # before it (a model overlap, or the ns rounding) starts where that one ends.
    cpu_slices = _columns(tr["cpu_slices"])
    for s in cpu_slices:
        s["s"], s["e"] = _ns(s["start"]), _ns(s["end"])
    by_cpu: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for s in cpu_slices:
        by_cpu[s["cpu"]].append(s)
    by_task: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for cpu in by_cpu:
        by_cpu[cpu].sort(key=lambda s: (s["s"], s["e"], s["task"]))
        prev = lo
        for s in by_cpu[cpu]:
            if s["s"] < prev:
                counts["clipped_slices"] += 1
                s["s"] = prev
                s["e"] = max(s["e"], prev)
            prev = s["e"]
            by_task[s["task"]].append(s)
    for slices in by_task.values():
        slices.sort(key=lambda s: (s["s"], s["e"]))
    starts = {t: [s["s"] for s in sl] for t, sl in by_task.items()}
    for s in cpu_slices:
        s["out"], s["in"] = [], []

    # Lock slices, indexed by (lock, task, read) for the hand-off flows.
    lock_slices = _columns(tr["lock_slices"])
    held: dict[tuple[int, int, int], list[dict[str, Any]]] = defaultdict(list)
    for s in lock_slices:
        s["s"], s["e"], s["out"], s["in"] = _ns(s["start"]), _ns(s["end"]), [], []
        if s["kind"] == 0:
            held[(s["lock"], s["task"], s["read"])].append(s)
    for sl in held.values():
        sl.sort(key=lambda s: (s["s"], s["e"]))
    held_ends = {k: [s["e"] for s in sl] for k, sl in held.items()}
    held_starts = {k: [s["s"] for s in sl] for k, sl in held.items()}

    flow = 0
    # Wake-ups: from the waker's slice around the wake-up to the wakee's first slice after it.
    for w in _columns(tr["wakes"]):
        at = _ns(w["at"])
        src = dst = None
        sl = by_task.get(w["waker"], [])
        i = bisect.bisect_right(starts.get(w["waker"], []), at) - 1
        if 0 <= i < len(sl) and sl[i]["e"] >= at:
            src = sl[i]
        dl = by_task.get(w["wakee"], [])
        j = bisect.bisect_left(starts.get(w["wakee"], []), at)
        if j < len(dl):
            dst = dl[j]
        counts["wakes"] += 1
        if src is None or dst is None:
            continue
        flow += 1
        src["out"].append(flow)
        dst["in"].append(flow)
        counts["wake_flows"] += 1
    # Hand-offs: from the releaser's hold that ended last before the grant to the next owner's hold.
    for s in lock_slices:
        if s["kind"] != 1 or s["from_task"] < 0:
            continue
        counts["handoffs"] += 1
        rk, wk = (s["lock"], s["from_task"], 0), (s["lock"], s["task"], s["read"])
        i = bisect.bisect_right(held_ends.get(rk, []), s["e"]) - 1
        j = bisect.bisect_left(held_starts.get(wk, []), s["e"])
        if i < 0 or j >= len(held.get(wk, [])):
            continue
        flow += 1
        held[rk][i]["out"].append(flow)
        held[wk][j]["in"].append(flow)
        counts["handoff_flows"] += 1

    # Tracks and slices.
    for cpu in range(int(tr["cpus"])):
        track = b.track(f"CPU {cpu}")
        counts["cpu_tracks"] += 1
        prev = lo
        for s in by_cpu.get(cpu, []):
            if s["s"] > prev:
                b.slice(track, "idle", prev, s["s"], "idle")
                counts["idle_slices"] += 1
            f = funcs[s["func"]]
            category = "interrupt" if f["name"].startswith("[irq]") else f["category"]
            b.slice(track, f["name"], s["s"], s["e"], category, s["task"], s["out"], s["in"])
            counts["cpu_slices"] += 1
            prev = max(prev, s["e"])
        if prev < hi:
            b.slice(track, "idle", prev, hi, "idle")
            counts["idle_slices"] += 1
    names = tr["locks"]
    by_lock: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for s in lock_slices:
        by_lock[s["lock"]].append(s)
    for lock in sorted(by_lock):
        parent = b.track(f"lock {names[lock]}")
        counts["lock_tracks"] += 1
        children: dict[tuple[int, int], int] = {}
        for s in sorted(by_lock[lock], key=lambda s: (s["s"], s["e"], s["task"], s["kind"])):
            if s["kind"] == 0 and not s["read"]:
                track, name = parent, "held"
            else:
                key = (s["kind"], s["task"])
                if key not in children:
                    label = "waiting" if s["kind"] == 1 else "read holds"
                    children[key] = b.track(f"{label}: task {s['task']}", parent=parent)
                    counts["lock_child_tracks"] += 1
                track = children[key]
                name = "contended" if s["kind"] == 1 else "held"
            b.slice(track, name, s["s"], s["e"], "lock", s["task"], s["out"], s["in"])
            counts["held_slices" if s["kind"] == 0 else "contended_slices"] += 1
    rq = _columns(tr["runqueue"])
    rq_tracks: dict[int, int] = {}
    for c in sorted(rq, key=lambda c: (c["cpu"], c["at"])):
        if c["cpu"] not in rq_tracks:
            rq_tracks[c["cpu"]] = b.track(f"runqueue CPU {c['cpu']}", counter=True)
            counts["counter_tracks"] += 1
        b.counter(rq_tracks[c["cpu"]], _ns(c["at"]), c["length"])
        counts["counter_values"] += 1
    for key in ("cpu_tracks", "lock_tracks", "lock_child_tracks", "counter_tracks", "cpu_slices", "idle_slices",
                "held_slices", "contended_slices", "wakes", "wake_flows", "handoffs", "handoff_flows",
                "counter_values", "clipped_slices"):
        counts.setdefault(key, 0)
    return b.serialize(), dict(counts)


def write_trace(scenario: ScenarioLike, path: str | os.PathLike, *, window_ms: tuple[float, float] | None = None,
                limit: int | None = None, sets: Sequence[str] = (), **overrides: Any) -> TraceInfo:
    """Simulates the scenario's one point with a recorder and writes the Perfetto trace to ``path``
    (checked first: a path that cannot be written fails before the run)."""
    out = check_output_file(path, "trace: path")
    events = record(scenario, window_ms=window_ms, limit=limit, sets=sets, **overrides)
    data, counts = build(events)
    write_file(out, data, "trace: path")
    return TraceInfo(out, events["window_ms"], counts, events["point"], len(data))


def read_trace(path_or_bytes: str | os.PathLike | bytes) -> dict[str, Any]:
    """A written trace parsed back with the protobuf classes alone (no trace processor).

    Returns ``tracks`` ({uuid: name}), ``parents`` ({uuid: parent uuid}), ``counters``
    (uuids of counter tracks), ``slices`` (one dict per slice: track, name, category, ts,
    dur, task, flow_ids, terminating_flow_ids), ``counter_values`` ([(track, ts, value)])
    and ``flows`` (ids that both start and end somewhere).
    """
    from google.protobuf.message import DecodeError
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace, TrackEvent

    what = "read_trace"
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        data, source = bytes(path_or_bytes), "the bytes given"
    elif isinstance(path_or_bytes, (str, os.PathLike)):
        path = Path(os.fspath(path_or_bytes))
        source = str(path)
        try:
            if path.is_dir():
                raise InputError(f"{what}: {path}: is a directory; expected a .perfetto-trace file")
            if not path.is_file():
                raise InputError(f"{what}: {path}: no such file")
            data = path.read_bytes()
        except InputError:
            raise
        except OSError as exc:
            raise InputError(f"{what}: {path}: cannot read it: {exc.strerror or exc}") from None
        except ValueError:  # a NUL in the path
            raise InputError(f"{what}: {str(path)!r}: not a file path (it holds a NUL)") from None
    else:
        raise InputError(f"{what}: expected a trace file path or its bytes, not {type(path_or_bytes).__name__}")
    trace = Trace()
    try:
        trace.ParseFromString(data)
    except (DecodeError, RuntimeError, ValueError) as exc:
        raise InputError(f"{what}: {source}: not a Perfetto trace ({' '.join(str(exc).split()) or 'malformed'})"
                         ) from None
    tracks: dict[int, str] = {}
    parents: dict[int, int] = {}
    counters: set[int] = set()
    open_: dict[int, list[dict[str, Any]]] = defaultdict(list)
    slices: list[dict[str, Any]] = []
    values: list[tuple[int, int, float]] = []
    for pkt in trace.packet:
        if pkt.HasField("track_descriptor"):
            d = pkt.track_descriptor
            tracks[d.uuid] = d.name
            if d.HasField("parent_uuid"):
                parents[d.uuid] = d.parent_uuid
            if d.HasField("counter"):
                counters.add(d.uuid)
        if not pkt.HasField("track_event"):
            continue
        ev = pkt.track_event
        if ev.type == TrackEvent.TYPE_SLICE_BEGIN:
            task = next((a.int_value for a in ev.debug_annotations if a.name == "task"), None)
            open_[ev.track_uuid].append({"track": ev.track_uuid, "name": ev.name, "category": list(ev.categories),
                                         "ts": pkt.timestamp, "task": task, "flow_ids": list(ev.flow_ids),
                                         "terminating_flow_ids": list(ev.terminating_flow_ids)})
        elif ev.type == TrackEvent.TYPE_SLICE_END:
            if not open_[ev.track_uuid]:
                raise InputError(f"{what}: {source}: not a trace semsim wrote (a slice ends that never began)")
            s = open_[ev.track_uuid].pop()
            s["dur"] = pkt.timestamp - s["ts"]
            slices.append(s)
        elif ev.type == TrackEvent.TYPE_COUNTER:
            values.append((ev.track_uuid, pkt.timestamp, ev.counter_value))
    unclosed = sum(len(v) for v in open_.values())
    starts = {f for s in slices for f in s["flow_ids"]}
    ends = {f for s in slices for f in s["terminating_flow_ids"]}
    return {"tracks": tracks, "parents": parents, "counters": counters, "slices": slices,
            "counter_values": values, "flows": starts & ends, "unclosed": unclosed}
