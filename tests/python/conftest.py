"""Shared fixtures: the repository's paths and a runner for the `semsim` command.

The tests exercise the installed package (`pip install .`, see setup.sh), never
the source tree's python/ directly: the CLI runs as `python -m semsim` in a
temporary directory.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "scenarios"
DEFAULT_SCENARIO = SCENARIOS / "default.json"

# Small settings: a couple of simulated milliseconds, a few tens of real ones.
SIM_TINY = ["--set", "threads=[1,2]", "--set", "duration_ms=2", "--set", "warmup_ms=0.5"]
NATIVE_TINY = ["--set", "threads=[1,2]", "--set", "duration_ms=20", "--set", "warmup_ms=2",
               "--set", "repeats=1"]


@pytest.fixture(autouse=True)
def _own_host_model_place(tmp_path_factory, monkeypatch):
    """Every test gets its own (empty) per-user data directory: machine "host" and
    `semsim calibrate` use $XDG_DATA_HOME/semsim/host.json, never the user's real one."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("xdg-data")))


@pytest.fixture
def calibrated_host(tmp_path_factory, monkeypatch):
    """A calibrated host model in the per-user place (host-default's figures, renamed):
    for tests of scenarios on machine "host". Returns its path."""
    import json

    data = tmp_path_factory.mktemp("xdg-host")
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    model = json.loads((REPO / "cpu_models" / "host-default.json").read_text())
    model["name"] = "host"
    path = data / "semsim" / "host.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(model))
    return path


@pytest.fixture
def run_cli(tmp_path):
    """Runs `python -m semsim ARGS...` in a temporary directory; returns the CompletedProcess."""

    env = {k: v for k, v in os.environ.items() if k != "SEMSIM_DEBUG"}

    def run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "semsim", *map(str, args)],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=timeout,
            stdin=subprocess.DEVNULL,
        )

    return run
