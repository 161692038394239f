"""The notebooks in notebooks/ run from top to bottom without an error.

Each notebook reads its settings from a cell tagged ``parameters``: small ones by
default (what this test runs: a fraction of a simulated millisecond per point, a few
points), the full ones with SEMSIM_NOTEBOOK_FULL=1 in the environment (which this
test passes through to the kernel). SEMSIM_NOTEBOOK_OUT=DIR keeps the executed
notebooks, outputs included, in DIR.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import REPO

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS = REPO / "notebooks"
EXPECTED = ("01_seed001_thread_sweep.ipynb", "02_predicted_vs_measured.ipynb", "03_where_the_time_goes.ipynb",
            "04_whatif_fence_diff_trace.ipynb")


def notebooks() -> list[Path]:
    return sorted(NOTEBOOKS.glob("*.ipynb"))


def test_the_three_notebooks_exist():
    names = [p.name for p in notebooks()]
    for name in EXPECTED:
        assert name in names


@pytest.mark.parametrize("path", notebooks(), ids=lambda p: p.stem)
def test_notebook_is_clean_and_has_parameters(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    tagged = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1, "one cell tagged 'parameters'"
    assert "SEMSIM_NOTEBOOK_FULL" in tagged[0].source
    # Stored without outputs: the test suite is what runs them.
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None, "clear the outputs before committing"


@pytest.mark.parametrize("path", notebooks(), ids=lambda p: p.stem)
def test_notebook_runs(path, tmp_path, monkeypatch):
    nb = nbformat.read(path, as_version=4)
    # The kernel inherits this environment: no full settings unless asked for, no
    # debugging tracebacks, a non-interactive matplotlib backend.
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    monkeypatch.delenv("SEMSIM_DEBUG", raising=False)
    client = nbclient.NotebookClient(
        nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}},
    )
    try:
        client.execute()
    finally:
        out_dir = os.environ.get("SEMSIM_NOTEBOOK_OUT")
        if out_dir:
            Path(out_dir).mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, Path(out_dir) / path.name)
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.get("output_type") == "error"]
    assert not errors
    # Something was shown: a table and a figure at least.
    kinds = {key for c in nb.cells if c.cell_type == "code" for o in c.outputs for key in o.get("data", {})}
    assert "text/html" in kinds, "no table rendered"
    assert "image/png" in kinds, "no figure rendered"
