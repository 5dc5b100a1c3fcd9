"""The optimality-gap reproduction on a tiny scale: values, honesty, resume."""

from __future__ import annotations

import csv

from lpsched.research.reproductions.optimality_gaps import GAP_POLICIES
from lpsched.research.reproductions.optimality_gaps import run as optimality_gaps


def test_gap_rows_are_consistent_and_resume(tmp_path):
    table = optimality_gaps(
        tmp_path, seeds=[0, 1], sizes=[5], workloads=["scaled-mix"], progress=False
    )
    with (tmp_path / "optimality-gaps.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 2 * len(GAP_POLICIES)
    for r in rows:
        assert r["status"] == "optimal"  # n = 5 solves at once
        opt, lp = int(r["optimum"]), float(r["lp_bound"])
        assert lp <= opt + 1e-6  # the LP relaxation never exceeds the optimum
        assert int(r["tel"]) >= opt  # no policy beats the optimum
    assert "scaled-mix" in table and "2/2" in table
    # a rerun computes nothing new; a deleted row is recomputed alone
    lines = (tmp_path / "optimality-gaps.csv").read_text().splitlines()
    (tmp_path / "optimality-gaps.csv").write_text("\n".join(lines[:-1]) + "\n")
    optimality_gaps(tmp_path, seeds=[0, 1], sizes=[5], workloads=["scaled-mix"], progress=False)
    with (tmp_path / "optimality-gaps.csv").open() as fh:
        again = list(csv.DictReader(fh))
    assert len(again) == len(rows)
    timeless = [k for k in rows[-1] if not k.endswith("_s")]
    assert [again[-1][k] for k in timeless] == [rows[-1][k] for k in timeless]
    assert again[:-1] == rows[:-1]


def test_a_smaller_rerun_reports_only_its_own_instances(tmp_path):
    """The stale-row case: seeds 0, 1 and then seed 0 alone in the same folder."""
    small = {"sizes": [5], "workloads": ["scaled-mix"], "progress": False}
    first = optimality_gaps(tmp_path, seeds=[0, 1], **small)
    assert "|   5 |           2 |" in first
    messages = []
    again = optimality_gaps(tmp_path, seeds=[0], report=messages.append, **small)
    assert "|   5 |           1 |" in again and "1/1" in again
    assert any("reused 5 of 5" in m for m in messages)
    assert any("5 row(s) in the file belong to tasks outside this run" in m for m in messages)
