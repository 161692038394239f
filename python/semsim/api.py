"""The Python API over the C++ engine (``semsim._core``).

Every function takes a scenario as a file path, JSON text, a dict, or a
:class:`Result` (whose scenario is reused), plus keyword overrides. An override
``workload__semaphores=64`` is the CLI's ``--set workload.semaphores=64``: ``__``
stands for ``.`` in the dotted field path, and the value is passed as JSON.
``sets=["workload.semaphores=64"]`` takes the CLI's ``--set`` text as it is
(VALUE is JSON, else a string); ``sets`` apply first, then the keyword overrides,
all before validation, exactly as on the command line.

Bad input raises :class:`semsim.InputError` (a ``ValueError``) with the same
one-line message the CLI prints -- wrong argument types, numbers out of range and
malformed JSON included; a failure inside the model raises
:class:`semsim.SimulationError` (a ``RuntimeError``), and a native run or calibration
that the host stopped (a task killed from outside, kernel limits used up by other
programs) raises :class:`semsim.HostError`, a ``SimulationError``.
"""

from __future__ import annotations

import json
import numbers
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Union

from . import _data

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

try:
    from . import _core
except ImportError as _exc:  # the extension is not built (a bare source checkout)
    _core = None
    _CORE_IMPORT_ERROR: ImportError | None = _exc

    class InputError(ValueError):
        """Bad user input: a scenario field, a CLI flag, a missing file."""

    class SimulationError(RuntimeError):
        """The model reached a state it must never reach."""

    class HostError(SimulationError):
        """The host stopped a native run or a calibration (not the input, not the model)."""

else:
    _CORE_IMPORT_ERROR = None
    InputError = _core.InputError
    SimulationError = _core.SimulationError
    HostError = getattr(_core, "HostError", SimulationError)
    _data_dir = _data.data_dir()
    if _data_dir is not None:
        _core.set_data_dir(str(_data_dir))


ScenarioLike = Union[str, os.PathLike, Mapping[str, Any], "Result"]


def _require_core() -> Any:
    if _core is None:
        raise ImportError(
            "the C++ extension semsim._core is not available "
            f"({_CORE_IMPORT_ERROR}); build and install semsim with `pip install .`"
        )
    return _core


def _json_default(value: Any) -> Any:
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if getattr(value, "ndim", 0) and hasattr(value, "tolist") and callable(value.tolist):
        return value.tolist()  # numpy arrays (before .item(), which only takes size-1 ones)
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        return value.item()
    if hasattr(value, "tolist") and callable(value.tolist):
        return value.tolist()
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    raise TypeError(f"{type(value).__name__} is not JSON-serializable")


def _dumps(value: Any, what: str) -> str:
    try:
        return json.dumps(value, default=_json_default, allow_nan=False)
    except (TypeError, ValueError, OverflowError) as exc:
        raise InputError(f"{what}: {exc}") from None
    except RecursionError:
        raise InputError(f"{what}: nested too deeply (scenarios need under 10 levels)") from None


def override_args(overrides: Mapping[str, Any]) -> list[str]:
    """Turns keyword overrides into ``--set`` assignments (``a__b=v`` -> ``"a.b=<v as JSON>"``)."""
    out: list[str] = []
    for key, value in overrides.items():
        if not isinstance(key, str) or not key:
            raise InputError(f"override {key!r}: expected a field name such as duration_ms or workload__semaphores")
        path = key.replace("__", ".")
        out.append(f"{path}={_dumps(value, path)}")
    return out


def _source(scenario: ScenarioLike) -> str:
    if isinstance(scenario, Result):
        scenario = scenario.scenario
    if isinstance(scenario, Mapping):
        return _dumps(dict(scenario), "scenario")
    if isinstance(scenario, (str, os.PathLike)):
        text = os.fspath(scenario)
        if isinstance(text, bytes):
            text = os.fsdecode(text)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise InputError("scenario: the path or JSON text is not valid UTF-8") from None
        if "\0" in text and not text.lstrip().startswith("{"):
            raise InputError(f"scenario: {text!r}: a file path cannot hold a NUL character")
        return text
    raise InputError(
        "scenario: expected a file path, JSON text, a dict or a semsim.Result, "
        f"not {type(scenario).__name__}"
    )


def _sets(sets: Iterable[str]) -> list[str]:
    if isinstance(sets, (str, bytes)) or not isinstance(sets, Iterable):
        raise InputError(f"sets: expected a list of KEY=VALUE strings (as --set takes), not {type(sets).__name__}")
    out = []
    for item in sets:
        if not isinstance(item, str):
            raise InputError(f"--set {item!r}: expected KEY=VALUE text")
        try:
            item.encode("utf-8")
        except UnicodeEncodeError:
            key = item.split("=", 1)[0].encode("utf-8", "replace").decode("utf-8")
            raise InputError(f"--set {key}: the value is not valid UTF-8") from None
        out.append(item)
    return out


def _all_sets(sets: Iterable[str], overrides: Mapping[str, Any]) -> list[str]:
    """The ``sets`` (``--set`` text), then the keyword overrides, as ``--set`` assignments."""
    return [*_sets(sets), *override_args(overrides)]


def _load_text(scenario: ScenarioLike, sets: Iterable[str]) -> str:
    return _require_core().load_scenario(_source(scenario), _sets(sets))


def _validate(scenario: ScenarioLike, sets: Iterable[str]) -> tuple[dict[str, Any], str]:
    """Every check ``run`` and ``native`` make; returns the normalized scenario and a note
    ("" or why this host's limits would stop ``native``)."""
    core = _require_core()
    source, overrides = _source(scenario), _sets(sets)
    note = core.validate_scenario(source, overrides) if hasattr(core, "validate_scenario") else ""
    return json.loads(core.load_scenario(source, overrides)), str(note)


def validate(path_or_dict: ScenarioLike, *, sets: Sequence[str] = (), **overrides: Any) -> dict[str, Any]:
    """Every check ``semsim run`` and ``semsim native`` make before they start (the
    scenario, the machine file and its matrices, the native runner's limits), without
    running; returns the normalized scenario or raises :class:`InputError`.
    """
    return _validate(path_or_dict, _all_sets(sets, overrides))[0]


def native_refusal(path_or_dict: ScenarioLike, *, sets: Sequence[str] = (), **overrides: Any) -> str:
    """Why this host's limits (not the scenario) would stop :func:`measure`, or "".

    Runs every check :func:`validate` runs (and raises :class:`InputError` as it does);
    a scenario that only this host cannot measure is still valid: ``semsim validate``
    says ``ok`` and adds this note.
    """
    return _validate(path_or_dict, _all_sets(sets, overrides))[1]


def load_scenario(path_or_dict: ScenarioLike, *, sets: Sequence[str] = (), **overrides: Any) -> dict[str, Any]:
    """Reads, overrides and validates a scenario; returns it normalized (defaults filled in).

    >>> semsim.load_scenario("scenarios/default.json", sets=["threads=[1,2]", "kernel=global_lock"])
    """
    return json.loads(_load_text(path_or_dict, _all_sets(sets, overrides)))


def load_native_scenario(path_or_dict: ScenarioLike, *, sets: Sequence[str] = (), **overrides: Any) -> dict[str, Any]:
    """The scenario as :func:`measure` takes it, normalized: the native runner's checks and
    this host's limits (raising :class:`InputError` for what it would refuse), but no
    machine lookup: a measurement is of this host, whatever model the scenario names."""
    return json.loads(_load_native_text(path_or_dict, _all_sets(sets, overrides)))


def _flatten(obj: Mapping[str, Any], prefix: str, out: dict[str, Any]) -> None:
    for key, value in obj.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            _flatten(value, name + ".", out)
        else:
            out[name] = value


def flatten(obj: Mapping[str, Any]) -> dict[str, Any]:
    """Nested dicts to one level with dotted keys (``{"a": {"b": 1}}`` -> ``{"a.b": 1}``)."""
    out: dict[str, Any] = {}
    _flatten(obj, "", out)
    return out


#: The CPU-time categories of a point's ``cpu_breakdown``, in display order.
CPU_CATEGORIES = ("user", "syscall", "kernel", "spin", "context_switch", "idle")


def kernel_label(kernel: Any) -> str:
    """A generation id as is; a policy override object as ``base+{...}``."""
    if isinstance(kernel, str):
        return kernel
    try:
        if isinstance(kernel, Mapping) and "base" in kernel:
            extra = {k: v for k, v in kernel.items() if k != "base"}
            if not extra:
                return str(kernel["base"])
            return f"{kernel['base']}+{json.dumps(extra, separators=(',', ':'), sort_keys=True)}"
        return json.dumps(kernel, separators=(",", ":"), sort_keys=True)
    except (TypeError, ValueError):
        raise InputError(f"kernel: expected a generation id or a policy object such as "
                         f'{{"base": "complex_mode", "fence": "none"}}, got {type(kernel).__name__}') from None


_LEADING_COLUMNS = ("threads", "kernel", "machine", "ops_per_s", "ops_per_s_ci95_lo", "ops_per_s_ci95_hi",
                    "ops_per_s_min", "ops_per_s_max")


def precision_note(point: Mapping[str, Any]) -> str | None:
    """Why a simulated point did not reach the precision its scenario asked
    (``run_length.not_reached``), or None: reached, no precision asked (``precision``
    0), one run of a workload that runs to completion (one seed has no interval), or a
    result without the field."""
    rl = point.get("run_length")
    if not isinstance(rl, Mapping) or not rl.get("precision") or rl.get("reached"):
        return None
    # A run to completion has no window: only its replications have an interval.
    if not rl.get("applicable") and int(rl.get("pooled_runs", 1)) < 2:
        return None
    note = rl.get("not_reached")
    return str(note) if note else None


def ops_interval(point: Mapping[str, Any]) -> tuple[float, float] | None:
    """A simulated point's 95 % confidence interval of ``ops_per_s`` (its ``run_length``, pooled
    over the point's seeds: ``ops_per_s`` is their mean), or None.

    A workload that runs to completion has the interval of its seeds' rates
    (``run_length.interval`` is ``replications``, ``counter`` ``ops_per_s``). None for
    measured points, a run to completion with one seed, and workloads whose run length
    follows their own figure (``run_length.counter`` is then ``rounds``).
    """
    rl = point.get("run_length")
    if (not isinstance(rl, Mapping) or rl.get("counter") not in ("semops", "ops_per_s")
            or not rl.get("ci95_per_s")):
        return None
    lo, hi = rl["ci95_per_s"]
    return float(lo), float(hi)


#: What :meth:`Result.hot_lines` ranks by.
HOT_LINE_KEYS = ("misses", "misses_per_op", "accesses", "queued_ns")


class Result:
    """A simulated or measured result document.

    ``doc`` is the JSON document as a dict: ``side`` ("simulated" or "measured"),
    ``scenario`` (the normalized scenario echoed back), ``provenance`` or ``host``,
    and ``points`` (one dict per point with ``threads``, ``kernel``, ``machine``,
    ``ops_per_s`` and the other metrics).
    """

    def __init__(self, doc: Mapping[str, Any], text: str | None = None) -> None:
        if not isinstance(doc, Mapping):
            raise InputError(f"Result: doc: expected a result document (a dict with 'points'), "
                             f"not {type(doc).__name__}")
        if text is not None and not isinstance(text, str):
            raise InputError(f"Result: text: expected the document's JSON text or None, not {type(text).__name__}")
        self.doc: dict[str, Any] = dict(doc)
        self._text = text

    @classmethod
    def from_json(cls, text_or_path: str | os.PathLike) -> Result:
        """Reads a result written by ``semsim run``/``native`` or :meth:`to_json`: JSON
        text (starting with ``{``) or the path of a file holding it."""
        return cls.read(text_or_path, "Result.from_json")

    @classmethod
    def read(cls, text_or_path: Any, what: str) -> Result:
        """:meth:`from_json` with its errors prefixed by ``what`` (the caller's argument)."""
        if not isinstance(text_or_path, (str, os.PathLike)) or isinstance(os.fspath(text_or_path), bytes):
            raise InputError(f"{what}: expected a result file path or JSON text, not {type(text_or_path).__name__}")
        text = os.fspath(text_or_path)
        source = "the JSON text"
        if not text.lstrip().startswith(("{", "[")):
            path = Path(text)
            shown = text if len(text) < 200 else text[:200] + "..."
            try:
                if path.is_dir():
                    raise InputError(f"{what}: {shown}: is a directory; expected a result file or JSON text")
                if not path.is_file():
                    raise InputError(f"{what}: {shown!r}: no such file (and not JSON text, which starts with '{{')")
                text = path.read_text(encoding="utf-8")
            except InputError:
                raise
            except (OSError, UnicodeDecodeError) as exc:
                raise InputError(f"{what}: {shown}: cannot read it: {getattr(exc, 'strerror', None) or exc}") from None
            except ValueError:  # a NUL in the path
                raise InputError(f"{what}: {shown!r}: not a file path (it holds a NUL)") from None
            source = str(path)
        try:
            doc = json.loads(text)
        except ValueError as exc:
            raise InputError(f"{what}: {source}: not JSON ({exc})") from None
        except RecursionError:
            raise InputError(f"{what}: {source}: nested too deeply") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("points"), list):
            raise InputError(f"{what}: {source}: not a result document (a JSON object with a 'points' list, "
                             "as semsim run writes)")
        return cls(doc, text)

    @property
    def side(self) -> str:
        return str(self.doc.get("side", ""))

    @property
    def scenario(self) -> dict[str, Any]:
        return self.doc.get("scenario", {})

    @property
    def points(self) -> list[dict[str, Any]]:
        return self.doc.get("points", [])

    def to_json(self, path: str | os.PathLike | None = None) -> str:
        """The document as JSON text: the engine's own bytes when unmodified (deterministic).

        With ``path``, also writes it there.
        """
        text = self._text if self._text is not None else json.dumps(self.doc, indent=2) + "\n"
        if path is not None:
            write_file(check_output_file(path, "Result.to_json: path"), text, "Result.to_json: path")
        return text

    def to_frame(self) -> pd.DataFrame:
        """One row per point: the point's metrics, then every scenario parameter, dotted.

        Nested objects are flattened with dotted names (``workload.semaphores``,
        ``kernel.base``); a point's own value wins over the scenario's (``threads``
        is the point's count, not the scenario's list). A point that carries its own
        ``scenario`` (as sweep results may) is described by that one.
        """
        import pandas as pd

        rows = []
        for point in self.points:
            point_scenario = point.get("scenario")
            row = flatten({k: v for k, v in point.items() if k != "scenario"})
            interval = ops_interval(point)
            if interval is not None:
                row["ops_per_s_ci95_lo"], row["ops_per_s_ci95_hi"] = interval
            scenario = point_scenario if isinstance(point_scenario, Mapping) else self.scenario
            for key, value in flatten(scenario).items():
                if key == "threads" or key.startswith("threads."):
                    continue
                row.setdefault(key, value)
            row.setdefault("side", self.side)
            rows.append(row)
        frame = pd.DataFrame(rows)
        lead = [c for c in _LEADING_COLUMNS if c in frame.columns]
        return frame[lead + [c for c in frame.columns if c not in lead]]

    def _point_keys(self, point: Mapping[str, Any]) -> dict[str, Any]:
        scenario = point.get("scenario") if isinstance(point.get("scenario"), Mapping) else self.scenario
        workload = scenario.get("workload", {}) if isinstance(scenario, Mapping) else {}
        keys = {"threads": point.get("threads"), "kernel": kernel_label(point.get("kernel")),
                "machine": point.get("machine")}
        if isinstance(workload, Mapping) and "semaphores" in workload:
            keys["semaphores"] = workload["semaphores"]
        return keys

    def cpu_breakdown(self) -> pd.DataFrame:
        """The CPU-time breakdown, long form: one row per point and category.

        Columns: ``threads``, ``kernel`` (the generation, as a label), ``machine``,
        ``semaphores`` (when the workload has them), ``category`` (``user``,
        ``syscall``, ``kernel``, ``spin``, ``context_switch``, ``idle``, in that
        order, then any other the engine reports) and ``share`` (of all CPU time in
        the window; a point's shares sum to 1). Points without a breakdown are left out.
        """
        import pandas as pd

        rows = []
        for point in self.points:
            breakdown = point.get("cpu_breakdown")
            if not isinstance(breakdown, Mapping):
                continue
            keys = self._point_keys(point)
            ordered = [c for c in CPU_CATEGORIES if c in breakdown] + sorted(
                c for c in breakdown if c not in CPU_CATEGORIES)
            for category in ordered:
                rows.append({**keys, "category": category, "share": breakdown[category]})
        columns = ["threads", "kernel", "machine", "semaphores", "category", "share"]
        frame = pd.DataFrame(rows, columns=columns)
        if frame["semaphores"].isna().all():
            frame = frame.drop(columns="semaphores")
        return frame

    def hot_lines(self, top: int | None = None, by: str = "misses") -> pd.DataFrame:
        """The hottest cache lines, long form: one row per point and line.

        Lines are ranked within each point by ``by`` (``misses``, ``misses_per_op``,
        ``accesses`` or ``queued_ns``; ties by accesses, then name); ``top`` keeps the
        first few of each point. Columns: the point's ``threads``, ``kernel``,
        ``machine`` (and ``semaphores``), then ``rank`` (1 = hottest), ``line`` and the
        line's counters (``accesses``, ``misses``, ``misses_per_op``, ``queued_ns``,
        ``transfers.<distance>``).
        """
        import pandas as pd

        if top is not None:
            check_int(top, "hot_lines: top", 0, 2**31 - 1, " (lines per point; None: all)")
        if by not in HOT_LINE_KEYS:
            raise InputError(f"hot_lines: by {by!r}: allowed: {', '.join(HOT_LINE_KEYS)}")
        rows = []
        for point in self.points:
            lines = point.get("hot_lines")
            if not isinstance(lines, list):
                continue
            keys = self._point_keys(point)
            ranked = sorted(
                (line for line in lines if isinstance(line, Mapping)),
                key=lambda line: (-float(line.get(by) or 0), -float(line.get("accesses") or 0), str(line.get("line"))),
            )
            if top is not None:
                ranked = ranked[:top]
            for rank, line in enumerate(ranked, start=1):
                counters = {k: v for k, v in flatten(line).items() if not (isinstance(v, Mapping) and not v)}
                rows.append({**keys, "rank": rank, **counters})
        frame = pd.DataFrame(rows)
        transfers = [c for c in frame.columns if str(c).startswith("transfers.")]
        if transfers:
            frame[transfers] = frame[transfers].fillna(0)
        if "semaphores" in frame.columns and frame["semaphores"].isna().all():
            frame = frame.drop(columns="semaphores")
        return frame

    def __len__(self) -> int:
        return len(self.points)

    def __repr__(self) -> str:
        name = self.scenario.get("name", "?")
        return f"<semsim.Result {self.side} {name!r}: {len(self.points)} points>"

    def _repr_html_(self) -> str:
        from ._html import result_html  # a table of the points in Jupyter

        return result_html(self)


class RunProgress(NamedTuple):
    """Where a simulation is, as :func:`simulate` tells its ``progress`` callable.

    A run is one seed of one point (thread count); with ``jobs`` 1 the runs go point by
    point, seed by seed; with more, several go at once (the longest first) and their
    reports interleave. ``simulated_ns`` is the simulated time the run has done, ``target_ns`` its
    ceiling (``warmup_ms + duration_ms``; 0 for a workload that runs to completion).
    With ``adaptive`` the run stops once its interval is narrow enough (``precision`` x
    sqrt(``seeds``): the point's interval pools its seeds'), which may be well before the
    ceiling. A point whose first seed made no random draw has its first run made again,
    alone at ``precision`` (its other seeds are copies): that run then reports twice, the
    second attempt from 0 again.
    """

    point: int  # 1-based
    points: int
    seed: int  # 1-based: the run's place among the point's repeats
    seeds: int
    threads: int
    simulated_ns: int
    target_ns: int
    adaptive: bool
    finished: bool

    def __str__(self) -> str:
        where = f"point {self.point}/{self.points} ({self.threads} thread{'s' if self.threads != 1 else ''})"
        if not self.points:  # a calibration's runs
            where = f"simulated run {self.point}"
        elif self.seeds > 1:
            where += f", seed {self.seed}/{self.seeds}"
        done = self.simulated_ns / 1e6
        if self.target_ns:
            text = f"{done:.2f}/{self.target_ns / 1e6:.2f} ms simulated" + (" (adaptive)" if self.adaptive else "")
        else:
            text = f"{done:.2f} ms simulated (to completion)"
        return f"{where}: {text}"


ProgressCallback = Callable[[RunProgress], Any]

#: The engine calls a progress callable at most this often (seconds of wall time): it
#: takes the GIL for each call.
PROGRESS_INTERVAL_S = 0.25


def _progress_adapter(scenario_text: str, progress: ProgressCallback) -> Callable[..., None]:
    """The engine's progress(run, done_ns, target_ns, adaptive, finished) as RunProgress."""
    scenario = json.loads(scenario_text)
    threads = scenario.get("threads")
    threads = list(threads) if isinstance(threads, list) else [threads]
    repeats = max(1, int(scenario.get("repeats", 1)))

    def call(run: int, done_ns: int, target_ns: int, adaptive: bool, finished: bool) -> None:
        index = min(len(threads) - 1, (run - 1) // repeats)
        progress(RunProgress(index + 1, len(threads), (run - 1) % repeats + 1, repeats, int(threads[index]),
                             int(done_ns), int(target_ns), bool(adaptive), bool(finished)))

    return call


#: The most runs (or worker processes) :func:`simulate`, ``semsim run -j`` and the sweeps take at once.
MAX_JOBS = 1024
#: The most threads (simulated tasks) a scenario's point may have (``kMaxThreads`` in
#: sim/config/scenario.cpp; tests/python/test_hardening_inputs.py checks that they agree).
MAX_THREADS = 4096
#: The most semaphores per array (``kMaxSemaphores`` in sim/workloads/spec.hpp).
MAX_SEMAPHORES = 32000
#: The most seeds per point (a scenario's ``repeats``).
MAX_REPEATS = 1000


def check_int(value: Any, what: str, low: int, high: int, meaning: str = "") -> int:
    """``value`` as an integer from ``low`` to ``high`` (not a bool, not a float), else
    :class:`InputError` naming ``what`` and the range."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not low <= value <= high:
        if isinstance(value, numbers.Integral) and not isinstance(value, bool) and abs(int(value)) >= 10**15:
            shown = f"{int(value):.3g}"
        else:
            shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:60] + "..."
        top = f"{high:,}" if high >= 100_000 else str(high)
        raise InputError(f"{what}: expected an integer from {low} to {top}{meaning}, got {shown}")
    return int(value)


def check_output_file(path: Any, what: str) -> Path:
    """A file path that a command may write (checked before the work that fills it):
    not empty, not a directory, in a directory that exists (or can be made) and is
    writable. Returns it as a Path, else raises :class:`InputError` naming ``what``."""
    return _check_output(path, what, directory=False)


def check_output_dir(path: Any, what: str) -> Path:
    """As :func:`check_output_file`, for a directory to write files into (made if missing)."""
    return _check_output(path, what, directory=True)


def _check_output(path: Any, what: str, directory: bool) -> Path:
    if not isinstance(path, (str, os.PathLike)) or isinstance(os.fspath(path), bytes):
        raise InputError(f"{what}: expected a {'directory' if directory else 'file'} path, "
                         f"not {type(path).__name__}")
    text = os.fspath(path)
    if not text.strip():
        raise InputError(f"{what}: the path is empty; expected a {'directory' if directory else 'file'} path")
    if "\0" in text:
        raise InputError(f"{what} {text!r}: a path cannot hold a NUL character")
    out = Path(text)
    try:
        if directory:
            if out.exists() and not out.is_dir():
                raise InputError(f"{what} {text}: exists and is not a directory; expected a directory to write into")
        elif out.is_dir():
            raise InputError(f"{what} {text}: is a directory; expected a file path")
        if out.exists():
            if not os.access(out, os.W_OK):
                raise InputError(f"{what} {text}: not writable (permission denied)")
            return out
        parent = out.parent
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent
        if not parent.is_dir():
            raise InputError(f"{what} {text}: {parent} is not a directory")
        if not os.access(parent, os.W_OK | os.X_OK):
            raise InputError(f"{what} {text}: cannot create it in {parent} (permission denied)")
    except OSError as exc:  # a name too long, a loop of links ...
        raise InputError(f"{what} {text}: {exc.strerror or exc}") from None
    return out


def write_file(path: str | os.PathLike, data: str | bytes, what: str) -> None:
    """Writes ``data`` to ``path`` (its missing parent directories made first); a failure
    (a full disk, a directory in the way) raises :class:`InputError` naming the path."""
    out = Path(os.fspath(path))
    try:
        if out.parent != Path(""):
            out.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, bytes):
            out.write_bytes(data)
        else:
            out.write_text(data, encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{what} {os.fspath(path)}: cannot write: {exc.strerror or exc}") from None


def default_jobs() -> int:
    """How many runs :func:`simulate` makes at once by default: the CPUs this process may use."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def check_jobs(jobs: Any, what: str = "jobs") -> int:
    """``jobs`` as an integer from 1 to :data:`MAX_JOBS` (None: :func:`default_jobs`), else
    :class:`InputError`."""
    if jobs is None:
        return default_jobs()
    return check_int(jobs, what, 1, MAX_JOBS, " (runs at once)")


def _simulate_sets(scenario: ScenarioLike, sets: Iterable[str], progress: ProgressCallback | None = None,
                   jobs: int | None = 1) -> Result:
    core = _require_core()
    njobs = check_jobs(jobs)
    text = _load_text(scenario, sets)
    if progress is None:
        out = core.simulate(text, None, float(PROGRESS_INTERVAL_S), njobs)
    else:
        if not callable(progress):
            raise InputError("progress: expected a callable taking a semsim.RunProgress, "
                             f"not {type(progress).__name__}")
        out = core.simulate(text, _progress_adapter(text, progress), float(PROGRESS_INTERVAL_S), njobs)
    return Result(json.loads(out), out)


def _load_native_text(scenario: ScenarioLike, sets: Iterable[str]) -> str:
    """The scenario as the native runner takes it: its checks and this host's limits, no
    machine lookup (a measurement is of this host, whatever model the scenario names)."""
    core = _require_core()
    if hasattr(core, "load_scenario_native"):
        return core.load_scenario_native(_source(scenario), _sets(sets))
    return _load_text(scenario, sets)


def _measure_sets(scenario: ScenarioLike, sets: Iterable[str]) -> Result:
    text = _require_core().measure(_load_native_text(scenario, sets))
    return Result(json.loads(text), text)


def simulate(scenario: ScenarioLike, *, sets: Sequence[str] = (), progress: ProgressCallback | None = None,
             jobs: int | None = None, **overrides: Any) -> Result:
    """Simulates every point of the scenario; deterministic for a given scenario and seed.

    The runs (one per thread count and seed) go ``jobs`` at a time, each in a forked
    process (default: one per CPU, :func:`default_jobs`; 1: all in this process, one after
    the other). The result is the same bytes whatever ``jobs`` is.

    ``progress``, if given, is called with a :class:`RunProgress` a few times a second of
    wall time while the engine runs (from the engine's thread, holding the GIL); it
    cannot change the result. An exception it raises is raised once the run is over.

    >>> semsim.simulate("scenarios/default.json", sets=["threads=[1,2]"], progress=print)
    """
    return _simulate_sets(scenario, _all_sets(sets, overrides), progress, jobs)


def measure(scenario: ScenarioLike, *, sets: Sequence[str] = (), **overrides: Any) -> Result:
    """Runs the scenario's workload on real SysV semaphores on this host.

    The result records the scenario's ``machine`` but every point is measured here
    (``machine: "host"``), with the host's kernel release and CPU count.
    """
    return _measure_sets(scenario, _all_sets(sets, overrides))


def cleanup_native() -> int:
    """Removes SysV semaphore arrays left behind by killed native runs; returns how many."""
    return int(_require_core().cleanup_native())


def catalog() -> dict[str, Any]:
    """The machines, kernel generations and workloads this build knows, with descriptions;
    each generation with its ``policy``: every kernel policy as a scenario's
    ``{"base": id, <policy>: value}`` would set it."""
    return json.loads(_require_core().catalog())


def set_reference_order(on: bool) -> None:
    """Later simulations in this process take every turn through the calendar (no
    shortcut in the time core): slower, the same bytes (``semsim run --reference-order``)."""
    _require_core().set_reference_order(bool(on))


def core_version() -> str:
    """The version of the C++ engine."""
    return str(_require_core().version())


def default_scenario() -> dict[str, Any]:
    """The embedded default scenario (what ``semsim demo`` runs), normalized."""
    return load_scenario(_data.default_scenario_path())


class CalibrationUnavailable(InputError, NotImplementedError):  # type: ignore[misc, valid-type]
    """This build of the engine has no calibration probes (``semsim._core.calibrate``)."""


def host_model_path() -> str:
    """Where this host's calibrated model lives, which machine ``"host"`` means and
    :func:`calibrate` writes by default: ``$XDG_DATA_HOME/semsim/host.json`` (default
    ``~/.local/share/semsim/host.json``)."""
    if _core is not None and hasattr(_core, "host_model_path"):
        return str(_core.host_model_path())
    base = os.environ.get("XDG_DATA_HOME", "")
    if not base.startswith("/"):
        base = os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(base, "semsim", "host.json")


def machine_info(machine: str) -> dict[str, str]:
    """The model a machine name or path resolves to: ``name``, ``file`` and ``hash``."""
    if not isinstance(machine, (str, os.PathLike)):
        raise InputError(f"machine: expected a preset name or a file path, not {type(machine).__name__}")
    return json.loads(_require_core().machine_info(os.fspath(machine)))


def calibration_available() -> bool:
    """Whether this build can calibrate (the engine has the probes)."""
    return _core is not None and hasattr(_core, "calibrate")


def calibrate(out_path: str | os.PathLike | None = None, quick: bool = False,
              progress: ProgressCallback | None = None) -> dict[str, Any]:
    """Runs the calibration probes on this host and writes a machine model.

    The model goes to ``out_path`` (default :func:`host_model_path`, which scenarios
    then name as machine ``"host"``). ``quick`` runs shorter probes (less precise).
    Returns the model written, as a dict.

    ``progress`` is called as :func:`simulate`'s is, for the simulated runs the
    calibration makes (closing the kernel path): ``point`` counts those runs and
    ``points`` is 0 (not a scenario's points).

    Raises :class:`CalibrationUnavailable` (an :class:`InputError` and a
    ``NotImplementedError``) when this build has no calibration.
    """
    core = _require_core()
    if not hasattr(core, "calibrate"):
        raise CalibrationUnavailable(
            "calibrate: this build of semsim has no calibration probes yet "
            "(semsim._core.calibrate is missing)"
        )
    if out_path is not None and not isinstance(out_path, (str, os.PathLike)):
        raise InputError(f"calibrate: out_path must be a file path, not {type(out_path).__name__}")
    path = Path(os.fspath(out_path) if out_path is not None else host_model_path())
    if path.parent != Path(""):
        path.parent.mkdir(parents=True, exist_ok=True)
    if progress is None:
        returned = core.calibrate(os.fspath(path), bool(quick))
    else:
        def call(run: int, done_ns: int, target_ns: int, adaptive: bool, finished: bool) -> None:
            progress(RunProgress(int(run), 0, 1, 1, 1, int(done_ns), int(target_ns), bool(adaptive), bool(finished)))

        returned = core.calibrate(os.fspath(path), bool(quick), call, float(PROGRESS_INTERVAL_S))
    if path.is_file():
        return json.loads(path.read_text(encoding="utf-8"))
    if isinstance(returned, str) and returned.lstrip().startswith("{"):
        return json.loads(returned)
    if isinstance(returned, Mapping):
        return dict(returned)
    raise SimulationError(f"calibrate: the probes ran but wrote no model to {path}")
