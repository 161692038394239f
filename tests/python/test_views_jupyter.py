"""Results as tables in Jupyter (_repr_html_), and the sweep's bar there (tqdm.auto)."""
from __future__ import annotations

import semsim
from conftest import DEFAULT_SCENARIO
from semsim import sweeps


def test_result_shows_as_a_table_of_its_points():
    res = semsim.simulate(DEFAULT_SCENARIO, threads=[1, 2], duration_ms=0.3, warmup_ms=0.1, repeats=1)
    text = res._repr_html_()
    assert "<table" in text and "ops_per_s" in text and "2 points" in text
    assert f"{res.points[1]['ops_per_s']:,.0f}" in text


def test_sweep_bar_in_a_jupyter_kernel_is_tqdm_auto(monkeypatch):
    import tqdm.auto

    monkeypatch.setattr(sweeps, "_in_jupyter_kernel", lambda: True)
    bar = sweeps._progress_bar(3, True)
    try:
        assert isinstance(bar, tqdm.auto.tqdm)
    finally:
        bar.close()
    assert isinstance(sweeps._progress_bar(3, False), sweeps._NoBar)
