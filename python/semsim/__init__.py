"""semsim: a deterministic simulator of Linux SysV semaphore locking, with a native runner.

>>> import semsim
>>> res = semsim.simulate("scenarios/default.json", threads=[1, 2], duration_ms=2)
>>> res.to_frame()[["threads", "kernel", "ops_per_s"]]
>>> sw = semsim.sweep("scenarios/default.json", threads=[1, 2, 4], kernel=["global_lock", "hysteresis"],
...                   duration_ms=1)        # each point in a fresh process, all CPUs
>>> semsim.plots.plot_scaling(sw)

Importing semsim has no side effect beyond pointing the C++ engine at its data
files (``cpu_models/``, ``scenarios/``).
"""

from __future__ import annotations

from . import lockstat, plots, trace
from ._data import data_dir, default_scenario_path
from .api import (
    CPU_CATEGORIES,
    CalibrationUnavailable,
    HostError,
    InputError,
    Result,
    RunProgress,
    ScenarioLike,
    SimulationError,
    calibrate,
    calibration_available,
    catalog,
    cleanup_native,
    core_version,
    default_scenario,
    host_model_path,
    kernel_label,
    load_native_scenario,
    load_scenario,
    machine_info,
    measure,
    native_refusal,
    simulate,
    validate,
)
from .compare import Comparison, ComparisonSet, compare
from .diff import Diff, diff
from .sweeps import SEMAPHORES_PER_THREAD, sweep
from .uncertainty import machine_uncertainty, simulate_uncertainty

try:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as _dist_version

    __version__ = _dist_version("semsim")
except PackageNotFoundError:  # running from a source checkout
    __version__ = "0+unknown"

__all__ = [
    "CPU_CATEGORIES",
    "CalibrationUnavailable",
    "Comparison",
    "ComparisonSet",
    "Diff",
    "HostError",
    "InputError",
    "Result",
    "RunProgress",
    "ScenarioLike",
    "SEMAPHORES_PER_THREAD",
    "SimulationError",
    "calibrate",
    "calibration_available",
    "catalog",
    "cleanup_native",
    "compare",
    "core_version",
    "data_dir",
    "default_scenario",
    "default_scenario_path",
    "diff",
    "host_model_path",
    "kernel_label",
    "load_native_scenario",
    "load_scenario",
    "lockstat",
    "machine_info",
    "machine_uncertainty",
    "measure",
    "native_refusal",
    "plots",
    "simulate",
    "simulate_uncertainty",
    "sweep",
    "trace",
    "validate",
]
