"""optimality-gaps stops each MIP on a work limit by default, so that its table does not change
with the machine's load; each row says which limit stopped its solve, and the limits are part
of the rows' parameters (a rerun under another limit computes its rows anew)."""

from __future__ import annotations

import csv

from click.testing import CliRunner

from lpsched.cli import main
from lpsched.research.reproductions import optimality_gaps as og

#: One instance whose proof needs 13 branch-and-bound nodes of HiGHS (ours: measured).
SMALL = {"seeds": [1], "sizes": [10], "workloads": ["uniform-small"], "progress": False}


def _rows(path):
    with (path / "optimality-gaps.csv").open() as fh:
        return list(csv.DictReader(fh))


def test_the_default_is_a_work_limit_with_a_time_limit_behind_it():
    assert og.DEFAULT_WORK_LIMIT == 10_000 and og.DEFAULT_TIME_LIMIT == 1800.0
    defaults = og.run.__wrapped__.__kwdefaults__
    assert defaults["work_limit"] == og.DEFAULT_WORK_LIMIT
    assert defaults["time_limit"] == og.DEFAULT_TIME_LIMIT


def test_rows_say_which_limit_stopped_each_solve_and_the_limit_is_a_parameter(tmp_path):
    table = og.run(tmp_path, work_limit=1, **SMALL)
    rows = _rows(tmp_path)
    assert {(r["status"], r["stopped_by"]) for r in rows} == {("work-limit", "work limit")}
    assert rows[0]["params"] == '{"time_limit":1800.0,"work_limit":1.0}'
    assert "0/1 (1 work limit)" in table
    again = og.run(tmp_path, **SMALL)  # the default work limit: computed anew, proven
    assert "1/1" in again and "work limit)" not in again
    fresh = [r for r in _rows(tmp_path) if '"work_limit":10000.0' in r["params"]]
    assert len(fresh) == len(og.GAP_POLICIES)
    assert {(r["status"], r["stopped_by"]) for r in fresh} == {("optimal", "optimal")}
    wall = og.run(tmp_path / "wall", work_limit=None, **SMALL)
    assert "1/1" in wall
    assert _rows(tmp_path / "wall")[0]["params"] == '{"time_limit":1800.0,"work_limit":null}'


def test_a_row_whose_stopped_by_contradicts_its_status_is_refused(tmp_path):
    og.run(tmp_path, work_limit=1, **SMALL)
    path = tmp_path / "optimality-gaps.csv"
    text = path.read_text()
    path.write_text(text.replace("work-limit,work limit", "work-limit,optimal", 1))
    og.run(tmp_path, work_limit=1, **SMALL)
    rejected = (tmp_path / "optimality-gaps.rejected.csv").read_text()
    assert "work-limit,optimal" in rejected
    assert {r["stopped_by"] for r in _rows(tmp_path)} == {"work limit"}


def test_reproduce_takes_work_limit_where_a_study_has_one(tmp_path):
    r = CliRunner().invoke(
        main, ["reproduce", "ratios", "--work-limit", "5", "--out", str(tmp_path)]
    )
    assert r.exit_code == 2 and "has no work limit" in r.output and "optimality-gaps" in r.output
    args = ["reproduce", "optimality-gaps", "--workload", "uniform-small", "--sizes", "10"]
    r = CliRunner().invoke(
        main, [*args, "--seeds", "1", "--work-limit", "1", "--out", str(tmp_path)]
    )
    assert r.exit_code == 0, r.output
    assert {row["stopped_by"] for row in _rows(tmp_path)} == {"work limit"}


def test_certify_based_rows_say_what_ended_certify(tmp_path):
    """certified-gaps and jaillet-synthetic have no work limit (certify's methods run on shares
    of a wall-time limit): each row says whether certify proved its instance or the time limit
    ended it, so a reader sees which rows depend on the machine's load."""
    from lpsched.research.reproductions import certified_gaps as cg
    from lpsched.research.reproductions import jaillet_synthetic as js

    cg.run(tmp_path, sizes=[5], seeds=[0], workloads=["scaled-mix"], time_limits=5, progress=False)
    with (tmp_path / "certified-gaps.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert {r["stopped_by"] for r in rows} == {"optimal"}  # n = 5: proven at once
    js.run(tmp_path, trials=1, sizes=[4], time_limit=1.0, progress=False)
    with (tmp_path / "jaillet-synthetic.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert rows and {r["stopped_by"] for r in rows} <= {"optimal", "time limit"}
