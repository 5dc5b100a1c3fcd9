"""A rerun into the folder of a larger run keeps the larger run's table and figure, and rows
edited by hand (a bound beside another, an infinite or impossible latency) are refused on
reading in the reproductions, as certified-gaps refuses its own."""

from __future__ import annotations

import csv
import time

from lpsched.research.reproductions import online_load
from lpsched.research.reproductions.optimality_gaps import run as optimality_gaps

SMALL = {"workloads": ["scaled-mix"], "seeds": [0], "progress": False}


def _rows(path):
    with path.open() as fh:
        return list(csv.DictReader(fh))


def _edit(path, match, column, value):
    """Set ``column`` of the first row for which ``match(row)`` holds, keeping the rest."""
    rows = _rows(path)
    i = next(i for i, r in enumerate(rows) if match(r))
    old = rows[i][column]
    rows[i][column] = value
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return old


def test_a_rerun_with_fewer_sizes_keeps_the_table_and_figure_of_every_row(tmp_path):
    whole = optimality_gaps(tmp_path, sizes=[5, 6], **SMALL)
    md, png = tmp_path / "optimality-gaps.md", tmp_path / "optimality-gaps.png"
    figure = png.read_bytes()
    messages = []
    part = optimality_gaps(tmp_path, sizes=[5], report=messages.append, **SMALL)
    assert "|   6 |" not in part  # the run's own table: its own sizes
    assert md.read_text() == whole + "\n"  # every row of the CSV, as before
    assert png.read_bytes() == figure
    assert (tmp_path / "optimality-gaps.part.md").read_text() == part + "\n"
    assert (tmp_path / "optimality-gaps.part.png").exists()
    assert any("(named *.part.md, *.part.png unless the run covers them" in m for m in messages)
    # a run over every row of the study writes the study's own names again
    again = optimality_gaps(tmp_path, sizes=[5, 6], **SMALL)
    assert again == whole and md.read_text() == whole + "\n"


def test_edited_optimality_gap_rows_are_refused(tmp_path):
    optimality_gaps(tmp_path, sizes=[8], plot=False, **SMALL)
    path = tmp_path / "optimality-gaps.csv"
    first = _rows(path)
    lp = first[0]["lp_bound"]
    assert float(lp) > 10 >= 8  # 10 is still above n and below every TEL
    _edit(path, lambda r: r["policy"] == "mcsf", "lp_bound", "10")
    messages = []
    optimality_gaps(tmp_path, sizes=[8], plot=False, report=messages.append, **SMALL)
    assert any("the rows of one task differ in lp_bound" in m for m in messages)
    assert {r["lp_bound"] for r in _rows(path)} == {lp}
    _edit(path, lambda r: True, "memory", "51")  # the instance has M = 50
    messages.clear()
    optimality_gaps(tmp_path, sizes=[8], plot=False, report=messages.append, **SMALL)
    assert any("memory 51 disagrees with its own instance, which gives 50" in m for m in messages)
    assert {r["memory"] for r in _rows(path)} == {"50"}
    _edit(path, lambda r: True, "n", "100000000")  # never drawn again to be checked
    t0 = time.perf_counter()
    optimality_gaps(tmp_path, sizes=[8], plot=False, report=messages.append, **SMALL)
    assert time.perf_counter() - t0 < 30
    assert {r["n"] for r in _rows(path)} == {"8"}


def test_edited_seconds_rows_are_refused_in_online_load(tmp_path):
    opts = dict(n=60, seeds=(0,), loads=(0.5,), trace_dir=None, workers=1, progress=False)
    linear = "linear:base_s=0.05,prefill_token_s=1e-3,kv_token_s=1e-6"
    online_load.run(tmp_path, time_model=linear, **opts)
    path = tmp_path / "online-load-seconds.csv"
    before = {(r["policy"], r["mean_latency_s"], r["mean_ttft_s"]) for r in _rows(path)}
    first = _rows(path)[0]["policy"]
    _edit(path, lambda r: r["policy"] == first, "mean_latency_s", "1e308")
    _edit(path, lambda r: r["policy"] != first, "mean_ttft_s", "inf")
    messages = []
    online_load.run(tmp_path, time_model=linear, report=messages.append, **opts)
    assert any("mean_latency_s 1e+308 is above makespan_s" in m for m in messages)
    assert any("field 'mean_ttft_s' is not a finite number: 'inf'" in m for m in messages)
    after = {(r["policy"], r["mean_latency_s"], r["mean_ttft_s"]) for r in _rows(path)}
    assert after == before
