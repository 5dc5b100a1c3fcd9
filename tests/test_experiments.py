"""Resumable sweeps and the headline reproduction on a small scale."""

from __future__ import annotations

import csv

import pytest

from lpsched.experiments import ResultsCSV, headline, run_sweep


def test_sweep_writes_each_row_and_resumes(tmp_path):
    path = tmp_path / "r.csv"
    calls = []

    def compute(task):
        calls.append(task["x"])
        if task["x"] == 3 and len(calls) == 4:
            raise KeyboardInterrupt  # the first run is interrupted at x = 3
        yield {"x": task["x"], "y": task["x"] ** 2}

    tasks = [{"x": i} for i in range(6)]
    with pytest.raises(KeyboardInterrupt):
        run_sweep(tasks, compute, ResultsCSV(path, ["x", "y"], ["x"]), progress=False)
    with path.open() as fh:
        assert [r["x"] for r in csv.DictReader(fh)] == ["0", "1", "2"]
    rows = run_sweep(tasks, compute, ResultsCSV(path, ["x", "y"], ["x"]), progress=False)
    assert calls == [0, 1, 2, 3, 3, 4, 5]  # finished rows are not computed again
    assert [int(r["y"]) for r in rows] == [0, 1, 4, 9, 16, 25]
    with pytest.raises(ValueError, match="header"):
        ResultsCSV(path, ["x", "z"], ["x"])


def test_headline_small(tmp_path):
    table = headline(tmp_path, seeds=[0], n=200, memory=16492, progress=False)
    assert "FCFS / Sorted-F" in table and "4.87" in table
    with (tmp_path / "headline.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 7 and {r["policy"] for r in rows} >= {"fcfs", "sorted-f"}
    lat = {r["policy"]: float(r["mean_latency"]) for r in rows}
    assert f"{lat['fcfs'] / lat['sorted-f']:.2f}" in table
