"""The sweep engine: rows written at once, resume, parameter checks, rows of the current tasks."""

from __future__ import annotations

import csv

import pytest

from lpsched.experiments.engine import (
    ResultsCSV,
    Sweep,
    SweepParameterError,
    Task,
    run_sweep,
)


def _sweep(compute, tasks, **params):
    return Sweep("r", ["x", "p", "y"], ["x", "p"], tasks, compute, params=params)


def test_sweep_writes_each_row_and_resumes(tmp_path):
    calls = []

    def compute(params, missing):
        for key in missing:
            calls.append((params["x"], key["p"]))
            if (params["x"], key["p"]) == (3, "b") and len(calls) == 8:
                raise KeyboardInterrupt  # the first run is interrupted at x = 3, p = b
            yield {**key, "y": params["x"] ** 2 + (key["p"] == "b")}

    tasks = [Task({"x": i}, ({"p": "a"}, {"p": "b"})) for i in range(6)]
    with pytest.raises(KeyboardInterrupt):
        run_sweep(_sweep(compute, tasks), tmp_path, progress=False)
    with (tmp_path / "r.csv").open() as fh:
        done = [(r["x"], r["p"]) for r in csv.DictReader(fh)]
    assert done == [
        ("0", "a"),
        ("0", "b"),
        ("1", "a"),
        ("1", "b"),
        ("2", "a"),
        ("2", "b"),
        ("3", "a"),
    ]
    rows = run_sweep(_sweep(compute, tasks), tmp_path, progress=False)
    # finished rows are not computed again: the interrupted task computes only its missing row
    assert calls[8:] == [(3, "b"), (4, "a"), (4, "b"), (5, "a"), (5, "b")]
    assert [int(r["y"]) for r in rows] == [y for i in range(6) for y in (i * i, i * i + 1)]
    with pytest.raises(ValueError, match="header"):
        ResultsCSV(tmp_path / "r.csv", ["x", "z"], ["x"])


def test_returns_only_the_rows_of_the_current_tasks(tmp_path):
    def compute(params, missing):
        for key in missing:
            yield {**key, "y": params["x"]}

    run_sweep(
        _sweep(compute, [Task({"x": i}, ({"p": "a"},)) for i in range(4)]), tmp_path, progress=False
    )
    rows = run_sweep(_sweep(compute, [Task({"x": 1}, ({"p": "a"},))]), tmp_path, progress=False)
    assert [r["x"] for r in rows] == ["1"]  # the other three rows stay in the file, unused


def test_refuses_rows_computed_under_other_parameters(tmp_path):
    def compute(params, missing):
        for key in missing:
            yield {**key, "y": 0}

    tasks = [Task({"x": 0}, ({"p": "a"},))]
    run_sweep(_sweep(compute, tasks, n=10), tmp_path, progress=False)
    with pytest.raises(SweepParameterError, match=r"n: 10 in the file, 20 now"):
        run_sweep(_sweep(compute, tasks, n=20), tmp_path, progress=False)
    assert run_sweep(_sweep(compute, tasks, n=10), tmp_path, progress=False)[0]["y"] == "0"


def test_empty_values_are_kept_and_missing_columns_refused(tmp_path):
    def compute(params, missing):
        for key in missing:
            yield {**key, "y": ""}

    tasks = [Task({"x": 0}, ({"p": "a"},))]
    run_sweep(_sweep(compute, tasks), tmp_path, progress=False)
    assert run_sweep(_sweep(compute, tasks), tmp_path, progress=False)[0]["y"] == ""
    with (tmp_path / "r.csv").open("a") as fh:
        fh.write("1,a\n")  # a truncated line
    with pytest.raises(ValueError, match="line 3: missing field 'y'"):
        run_sweep(_sweep(compute, tasks), tmp_path, progress=False)


def test_a_computed_row_must_have_every_column(tmp_path):
    def compute(params, missing):
        yield {"x": 0, "p": "a"}

    with pytest.raises(ValueError, match="lacks column"):
        run_sweep(_sweep(compute, [Task({"x": 0}, ({"p": "a"},))]), tmp_path, progress=False)
