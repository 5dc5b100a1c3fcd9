"""The headline reproduction on a small scale."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from lpsched.generators.workloads import generate
from lpsched.policies.registry import PolicySelectionError, import_plugins
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


def test_ratio_rows_follow_the_policies():
    """Issue 22, item 12: the shipped list gives the shipped rows; a policy beyond it gets
    NAME / Sorted-F (with backfill: against Sorted-F+backfill); rows whose policies are left
    out go."""
    assert hl.headline_ratios(hl.HEADLINE_POLICIES) == list(hl.HEADLINE_RATIOS)
    assert hl.headline_ratios(["sorted-f", "mine", "fcfs", "mine+backfill"]) == [
        ("FCFS / Sorted-F", "fcfs", "sorted-f"),
        ("mine / Sorted-F", "mine", "sorted-f"),
        ("mine+backfill / Sorted-F", "mine+backfill", "sorted-f"),
    ]
    assert hl.headline_ratios(["sorted-f", "sorted-f+backfill", "mine+backfill"]) == [
        ("sorted-f+backfill / Sorted-F", "sorted-f+backfill", "sorted-f"),
        ("mine+backfill / Sorted-F+backfill", "mine+backfill", "sorted-f+backfill"),
    ]


def test_an_added_policy_is_a_row_and_its_options_reach_only_it(own_policy, tmp_path):
    import_plugins([own_policy.module])
    pols = ["fcfs", "sorted-f", own_policy.name]
    table = headline(
        tmp_path,
        seeds=[0],
        n=60,
        progress=False,
        policies=pols,
        policy_options={"alpha": 2.0},
    )
    rows = _rows(tmp_path / "headline-shape.csv")  # sensitivity: its three policies, no option
    assert {r["policy"] for r in rows} == {"fcfs", "mcsf", "sorted-f"}
    assert '"policy_options"' not in rows[0]["params"]
    rows = _rows(tmp_path / "headline.csv")
    assert {r["policy"] for r in rows} == set(pols)
    assert '"policy_options":{"alpha":2.0}' in rows[0]["params"]
    lat = {r["policy"]: float(r["mean_latency"]) for r in rows if r["source"] == "paper-mix"}
    inst = generate("paper-mix", 60, hl.PAPER_MEMORY, seed=0)
    assert lat[own_policy.name] == pytest.approx(own_policy.tel(inst, 2.0) / 60, rel=1e-5)
    line = next(ln for ln in table.splitlines() if ln.startswith(f"| {own_policy.name} / "))
    assert f"{lat[own_policy.name] / lat['sorted-f']:.2f}" in line
    with pytest.raises(PolicySelectionError, match="keep sorted-f"):
        headline(tmp_path / "x", policies=["fcfs", own_policy.name], progress=False)
