"""executor="dask" from any script: no `__main__` guard, standard input; a cluster that cannot start."""
from __future__ import annotations

import subprocess
import sys

import pytest

import semsim
from conftest import DEFAULT_SCENARIO

SWEEP = dict(threads=[1, 2], duration_ms=0.3, warmup_ms=0.1, repeats=1, max_workers=2, progress=False)

SCRIPT = f"""
import semsim
res = semsim.sweep({str(DEFAULT_SCENARIO)!r}, executor="dask", **{SWEEP!r})
print("ops", [p["ops_per_s"] for p in res.points])
"""


@pytest.fixture(scope="module")
def expected():
    res = semsim.sweep(DEFAULT_SCENARIO, executor="process", **SWEEP)
    return f"ops {[p['ops_per_s'] for p in res.points]}"


def _check(proc, expected):
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Nanny failed" not in proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == expected


def test_dask_from_a_script_without_a_main_guard(tmp_path, expected):
    script = tmp_path / "plain.py"
    script.write_text(SCRIPT)
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    _check(proc, expected)


def test_dask_from_standard_input(tmp_path, expected):
    proc = subprocess.run([sys.executable, "-"], input=SCRIPT, cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    _check(proc, expected)


def test_a_cluster_that_cannot_start_says_why_in_one_line(monkeypatch):
    import distributed

    def refuse(*args, **kwargs):
        raise OSError("no free port\nin range")

    monkeypatch.setattr(distributed, "LocalCluster", refuse)
    with pytest.raises(semsim.SimulationError) as err:
        semsim.sweep(DEFAULT_SCENARIO, executor="dask", **SWEEP)
    message = str(err.value)
    assert "\n" not in message
    assert "the local Dask cluster could not start: OSError: no free port in range" in message
