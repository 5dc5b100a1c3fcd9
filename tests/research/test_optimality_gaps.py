"""The optimality-gap reproduction on a tiny scale: values, honesty, resume."""

from __future__ import annotations

import csv

import pytest

from lpsched.generators.small import EXACT_WORKLOADS
from lpsched.policies.registry import PolicySelectionError, import_plugins
from lpsched.research.reproductions.optimality_gaps import GAP_POLICIES, gap_table
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


def test_policies_give_the_columns_and_options_the_parameters(own_policy, tmp_path):
    """Issue 22, item 12: the list is the table's columns, in order; a policy option is part
    of the rows' parameters only when given (the shipped parameters stay the recorded ones)."""
    import_plugins([own_policy.module])
    small = {"seeds": [0], "sizes": [5], "workloads": ["scaled-mix"], "progress": False}
    table = optimality_gaps(tmp_path, policies=[own_policy.name, "mcsf"], **small)
    header = [c.strip() for c in table.splitlines()[0].strip("|").split("|")]
    assert header[5:-1] == [own_policy.name, "mcsf"]
    rows = list(csv.DictReader((tmp_path / "optimality-gaps.csv").open()))
    assert rows[0]["params"] == '{"time_limit":1800.0,"work_limit":10000.0}'
    inst = EXACT_WORKLOADS["scaled-mix"](5, 0, 50)
    assert int(rows[0]["tel"]) == own_policy.tel(inst)
    optimality_gaps(
        tmp_path / "a", policies=[own_policy.name], policy_options={"alpha": 2.0}, **small
    )
    (row,) = csv.DictReader((tmp_path / "a" / "optimality-gaps.csv").open())
    assert row["params"] == (
        '{"policy_options":{"alpha":2.0},"time_limit":1800.0,"work_limit":10000.0}'
    )
    assert int(row["tel"]) == own_policy.tel(inst, 2.0)
    with pytest.raises(PolicySelectionError, match="option 'alpha' is declared by none"):
        optimality_gaps(tmp_path / "b", policies=["fcfs"], policy_options={"alpha": 1}, **small)
    with pytest.raises(KeyError, match="unknown policy 'nosuch'"):
        optimality_gaps(tmp_path / "b", policies=["nosuch"], **small)
    assert not (tmp_path / "b").exists()


def test_gap_table_marks_a_policy_without_rows():
    row = {
        "workload": "w",
        "n": "5",
        "seed": "0",
        "status": "optimal",
        "optimum": "10",
        "lp_bound": "9.5",
        "mip_s": "0.1",
        "policy": "fcfs",
        "tel": "12",
    }
    table = gap_table([row], ["fcfs", "other"])
    cells = [c.strip() for c in table.splitlines()[2].split("|")[6:8]]
    assert cells == ["1.263 / 1.263 (1.200 / 1.200)", "-"]
