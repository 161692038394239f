"""semsim: a deterministic simulator of Linux SysV semaphore locking, with a native runner.

>>> import semsim
>>> res = semsim.simulate("scenarios/default.json", threads=[1, 2], duration_ms=2)
>>> res.to_frame()[["threads", "kernel", "ops_per_s"]]

Importing semsim has no side effect beyond pointing the C++ engine at its data
files (``cpu_models/``, ``scenarios/``).
"""

from __future__ import annotations

from ._data import data_dir, default_scenario_path
from .api import (
    InputError,
    Result,
    ScenarioLike,
    SimulationError,
    catalog,
    cleanup_native,
    core_version,
    default_scenario,
    load_scenario,
    measure,
    simulate,
)
from .compare import Comparison, compare

try:
    from importlib.metadata import PackageNotFoundError, version as _dist_version

    __version__ = _dist_version("semsim")
except PackageNotFoundError:  # running from a source checkout
    __version__ = "0+unknown"

__all__ = [
    "Comparison",
    "InputError",
    "Result",
    "ScenarioLike",
    "SimulationError",
    "catalog",
    "cleanup_native",
    "compare",
    "core_version",
    "data_dir",
    "default_scenario",
    "default_scenario_path",
    "load_scenario",
    "measure",
    "simulate",
]
