"""The headline reproduction on a small scale."""

from __future__ import annotations

import csv

import numpy as np

from lpsched.research.reproductions import headline as hl
from lpsched.research.reproductions.headline import run as headline


def _rows(path):
    with path.open() as fh:
        return list(csv.DictReader(fh))


def test_headline_small(tmp_path):
    table = headline(tmp_path, seeds=[0], n=200, memory=16492, progress=False, sensitivity=False)
    assert "FCFS / Sorted-F" in table and "4.87" in table and "2.09" in table
    rows = _rows(tmp_path / "headline.csv")
    assert len(rows) == 9 * len(hl.HEADLINE_SOURCES)
    assert {r["source"] for r in rows} == set(hl.HEADLINE_SOURCES)
    assert {r["policy"] for r in rows} >= {"fcfs", "sorted-f", "vllm"}
    for source in hl.HEADLINE_SOURCES:
        lat = {r["policy"]: float(r["mean_latency"]) for r in rows if r["source"] == source}
        assert f"{lat['fcfs'] / lat['sorted-f']:.2f}" in table
    assert not (tmp_path / "headline-shape.csv").exists()


def test_sensitivity_tables_are_the_rows(tmp_path):
    table = headline(tmp_path, seeds=[0, 1], n=60, memory=16492, progress=False)
    shape = _rows(tmp_path / "headline-shape.csv")
    memory = _rows(tmp_path / "headline-memory.csv")
    assert len(shape) == 3 * 2 * len(hl.SHAPE_PREFILL_SIGMAS) * len(hl.SHAPE_DECODE_SIGMAS)
    assert {int(r["memory"]) for r in memory} == set(hl.SENSITIVITY_MEMORIES)
    # the default shape's cell: mean over the seeds of each seed's ratio
    src = hl.shape_spec(hl.SHAPE_PREFILL_SIGMAS[2], hl.SHAPE_DECODE_SIGMAS[2])
    assert src == "lmsys-turn:0.8,summarization:0.2"  # the default shape: paper-mix's law
    lat = {(r["seed"], r["policy"]): float(r["mean_latency"]) for r in shape if r["source"] == src}
    fcfs = np.mean([lat[(s, "fcfs")] / lat[(s, "sorted-f")] for s in ("0", "1")])
    mcsf = np.mean([lat[(s, "mcsf")] / lat[(s, "sorted-f")] for s in ("0", "1")])
    line = next(ln for ln in table.splitlines() if ln.startswith("|           1.616"))
    assert line.split("|")[4].strip() == f"{fcfs:.2f} / {mcsf:.2f}"  # decode sigma 1.131
