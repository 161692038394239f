"""The Python API over the C++ engine (``semsim._core``).

Every function takes a scenario as a file path, JSON text, a dict, or a
:class:`Result` (whose scenario is reused), plus keyword overrides. An override
``workload__semaphores=64`` is the CLI's ``--set workload.semaphores=64``: ``__``
stands for ``.`` in the dotted field path, and the value is passed as JSON.
Overrides are applied before validation, exactly as on the command line.

Bad input raises :class:`semsim.InputError` (a ``ValueError``) with the same
one-line message the CLI prints; a failure inside the model raises
:class:`semsim.SimulationError` (a ``RuntimeError``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

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

else:
    _CORE_IMPORT_ERROR = None
    InputError = _core.InputError
    SimulationError = _core.SimulationError
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
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        return value.item()
    if hasattr(value, "tolist") and callable(value.tolist):  # numpy arrays
        return value.tolist()
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    raise TypeError(f"{type(value).__name__} is not JSON-serializable")


def _dumps(value: Any, what: str) -> str:
    try:
        return json.dumps(value, default=_json_default, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{what}: {exc}") from None


def override_args(overrides: Mapping[str, Any]) -> list[str]:
    """Turns keyword overrides into ``--set`` assignments (``a__b=v`` -> ``"a.b=<v as JSON>"``)."""
    out: list[str] = []
    for key, value in overrides.items():
        path = key.replace("__", ".")
        out.append(f"{path}={_dumps(value, path)}")
    return out


def _source(scenario: ScenarioLike) -> str:
    if isinstance(scenario, Result):
        scenario = scenario.scenario
    if isinstance(scenario, Mapping):
        return _dumps(dict(scenario), "scenario")
    if isinstance(scenario, (str, os.PathLike)):
        return os.fspath(scenario)
    raise TypeError(
        "scenario: expected a file path, JSON text, a dict or a semsim.Result, "
        f"not {type(scenario).__name__}"
    )


def _load_text(scenario: ScenarioLike, sets: Iterable[str]) -> str:
    return _require_core().load_scenario(_source(scenario), list(sets))


def load_scenario(path_or_dict: ScenarioLike, **overrides: Any) -> dict[str, Any]:
    """Reads, overrides and validates a scenario; returns it normalized (defaults filled in)."""
    return json.loads(_load_text(path_or_dict, override_args(overrides)))


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


_LEADING_COLUMNS = ("threads", "kernel", "machine", "ops_per_s", "ops_per_s_min", "ops_per_s_max")


class Result:
    """A simulated or measured result document.

    ``doc`` is the JSON document as a dict: ``side`` ("simulated" or "measured"),
    ``scenario`` (the normalized scenario echoed back), ``provenance`` or ``host``,
    and ``points`` (one dict per point with ``threads``, ``kernel``, ``machine``,
    ``ops_per_s`` and the other metrics).
    """

    def __init__(self, doc: Mapping[str, Any], text: str | None = None) -> None:
        self.doc: dict[str, Any] = dict(doc)
        self._text = text

    @classmethod
    def from_json(cls, text_or_path: str | os.PathLike) -> Result:
        """Reads a result written by ``semsim run``/``native`` or :meth:`to_json`."""
        text = os.fspath(text_or_path)
        if not text.lstrip().startswith("{"):
            text = Path(text).read_text(encoding="utf-8")
        return cls(json.loads(text), text)

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
            Path(path).write_text(text, encoding="utf-8")
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

    def __len__(self) -> int:
        return len(self.points)

    def __repr__(self) -> str:
        name = self.scenario.get("name", "?")
        return f"<semsim.Result {self.side} {name!r}: {len(self.points)} points>"


def _simulate_sets(scenario: ScenarioLike, sets: Iterable[str]) -> Result:
    text = _require_core().simulate(_load_text(scenario, sets))
    return Result(json.loads(text), text)


def _measure_sets(scenario: ScenarioLike, sets: Iterable[str]) -> Result:
    text = _require_core().measure(_load_text(scenario, sets))
    return Result(json.loads(text), text)


def simulate(scenario: ScenarioLike, **overrides: Any) -> Result:
    """Simulates every point of the scenario; deterministic for a given scenario and seed."""
    return _simulate_sets(scenario, override_args(overrides))


def measure(scenario: ScenarioLike, **overrides: Any) -> Result:
    """Runs the scenario's workload on real SysV semaphores on this host.

    The result records the scenario's ``machine`` but every point is measured here
    (``machine: "host"``), with the host's kernel release and CPU count.
    """
    return _measure_sets(scenario, override_args(overrides))


def cleanup_native() -> int:
    """Removes SysV semaphore arrays left behind by killed native runs; returns how many."""
    return int(_require_core().cleanup_native())


def catalog() -> dict[str, Any]:
    """The machines, kernel generations and workloads this build knows, with descriptions."""
    return json.loads(_require_core().catalog())


def core_version() -> str:
    """The version of the C++ engine."""
    return str(_require_core().version())


def default_scenario() -> dict[str, Any]:
    """The embedded default scenario (what ``semsim demo`` runs), normalized."""
    return load_scenario(_data.default_scenario_path())
