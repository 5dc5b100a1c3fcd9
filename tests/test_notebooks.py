"""Every notebook runs top to bottom with small parameters, and is stored without outputs."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
CELL_TIMEOUT = 150  # seconds per cell


def test_there_are_notebooks():
    names = [p.stem for p in NOTEBOOKS]
    for stem in (
        "01_quickstart",
        "02_optimality_gaps",
        "03_ratio_vs_48",
        "04_np_hardness",
        "05_heuristic_families",
        "06_workload_sensitivity",
    ):
        assert stem in names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_stored_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, path.name


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path, tmp_path, monkeypatch):
    from nbclient import NotebookClient

    # the kernel is a child process and inherits these
    monkeypatch.setenv("LPSCHED_NOTEBOOK_SMALL", "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("LPSCHED_RESULTS", str(tmp_path / "results"))
    (tmp_path / "run").mkdir()
    monkeypatch.chdir(tmp_path / "run")
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=CELL_TIMEOUT,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path / "run")}},
    )
    client.execute()
    errors = [
        o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"
    ]
    assert not errors
    # its results go to $LPSCHED_RESULTS (issue 22: they went inside the checkout)
    assert [p.name.rsplit("-", 1)[0] for p in (tmp_path / "results").iterdir()] == [path.stem]
    assert not any((tmp_path / "run").iterdir())
