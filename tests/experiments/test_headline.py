"""The headline reproduction on a small scale."""

from __future__ import annotations

import csv

from lpsched.experiments.headline import run as headline


def test_headline_small(tmp_path):
    table = headline(tmp_path, seeds=[0], n=200, memory=16492, progress=False)
    assert "FCFS / Sorted-F" in table and "4.87" in table
    with (tmp_path / "headline.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 9 and {r["policy"] for r in rows} >= {"fcfs", "sorted-f", "vllm"}
    lat = {r["policy"]: float(r["mean_latency"]) for r in rows}
    assert f"{lat['fcfs'] / lat['sorted-f']:.2f}" in table
