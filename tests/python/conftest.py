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
