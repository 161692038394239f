"""Where semsim's data files (cpu_models/, scenarios/) live.

Installed, they are package data under ``semsim/data/``; in a source checkout
they sit at the repository root, two levels above this file. ``SEMSIM_DATA_DIR``
overrides both.
"""

from __future__ import annotations

import os
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


def data_dir() -> Path | None:
    """The directory holding ``cpu_models/`` and ``scenarios/``, or None if none is found."""
    env = os.environ.get("SEMSIM_DATA_DIR")
    if env:
        return Path(env)
    for candidate in (_PACKAGE_DIR / "data", _PACKAGE_DIR.parent.parent):
        if (candidate / "cpu_models").is_dir() or (candidate / "scenarios").is_dir():
            return candidate
    return None


def default_scenario_path() -> Path:
    """The embedded default scenario (``scenarios/default.json``) that ``semsim demo`` runs."""
    base = data_dir()
    if base is None:
        raise FileNotFoundError(
            "default scenario: no semsim data directory found (looked for semsim/data/ and the "
            "source tree's scenarios/; set SEMSIM_DATA_DIR)"
        )
    return base / "scenarios" / "default.json"
