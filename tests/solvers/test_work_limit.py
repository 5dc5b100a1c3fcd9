"""A deterministic work limit: checked like the other options, handed to HiGHS
(``mip_max_nodes``) and CP-SAT (``max_deterministic_time``), a stop it makes reported as
``work-limit``, and the same result at every run (a time limit's is not: it depends on the
machine's load)."""

from __future__ import annotations

import math

import pytest
from click.testing import CliRunner

from lpsched.certify import certify, solve_exact
from lpsched.certify.shortcuts import exact_horizon
from lpsched.cli import main
from lpsched.formulations.time_indexed import time_indexed_matrix
from lpsched.generators.small import EXACT_WORKLOADS
from lpsched.io import write_instance
from lpsched.solvers.backends.cpsat import configure_solver
from lpsched.solvers.backends.highs import build_highs
from lpsched.solvers.options import SolveOptions, check_work_limit
from lpsched.solvers.result import Result, SolveStatus


def _hard():
    """An instance whose proof needs more than one branch-and-bound node (ours: measured)."""
    return EXACT_WORKLOADS["uniform-small"](10, 1, memory=30)


@pytest.mark.parametrize("bad", [0, -1, math.nan, math.inf, "5", True, 10**400])
def test_a_bad_work_limit_is_refused_by_name(bad):
    with pytest.raises(ValueError, match="work_limit"):
        SolveOptions(work_limit=bad)
    with pytest.raises(ValueError, match="work_limit"):
        check_work_limit(bad)


def test_highs_takes_whole_nodes_and_pyomo_none():
    inst = _hard()
    assert check_work_limit(2.5, "cpsat") == 2.5 and check_work_limit(7, "highs") == 7.0
    with pytest.raises(ValueError, match="whole number of nodes"):
        solve_exact(inst, "highs", work_limit=2.5)
    with pytest.raises(ValueError, match="work_limit needs backend='matrix'"):
        solve_exact(inst, "highs", backend="pyomo", work_limit=5)


def test_the_work_limit_reaches_highs_and_cpsat():
    from ortools.sat.python import cp_model

    mat = time_indexed_matrix(_hard(), exact_horizon(_hard()))
    assert build_highs(mat, work_limit=7).getOptionValue("mip_max_nodes")[1] == 7
    solver = cp_model.CpSolver()
    configure_solver(solver, remaining=None, threads=1, work_limit=2.5)
    assert solver.parameters.max_deterministic_time == 2.5


@pytest.mark.parametrize("solver, work", [("highs", 1), ("cpsat", 0.001)])
def test_a_work_limited_solve_says_so_and_gives_the_same_result_twice(solver, work):
    runs = [
        solve_exact(_hard(), solver, time_limit=120, threads=1, work_limit=work) for _ in range(2)
    ]
    for res in runs:
        assert res.status is SolveStatus.WORK_LIMIT and res.stopped_by == "work limit"
        assert res.schedule is not None and res.schedule.check().tel == res.objective
    assert [(r.objective, r.bound, r.schedule.start.tolist()) for r in runs] == 2 * [
        (runs[0].objective, runs[0].bound, runs[0].schedule.start.tolist())
    ]


def test_what_stopped_a_solve_is_named():
    res = solve_exact(_hard(), "highs", time_limit=120, threads=1, work_limit=10**6)
    assert res.status is SolveStatus.OPTIMAL and res.stopped_by == "optimal"
    by = {s: Result(s, None, 0.0).stopped_by for s in SolveStatus}
    assert by[SolveStatus.TIME_LIMIT] == "time limit" and by[SolveStatus.GAP] == "done"
    assert by[SolveStatus.INTERRUPTED] == "interrupted"
    # certify's automatic plan runs its methods on shares of the wall-time limit
    gap = certify(EXACT_WORKLOADS["paper-scaled"](60, 4, memory=825), 2)
    assert gap.status is SolveStatus.GAP and gap.stopped_by == "time limit"


def test_exact_takes_work_limit_on_the_command_line(tmp_path):
    path = tmp_path / "hard.json"
    write_instance(_hard(), path)
    r = CliRunner().invoke(main, ["exact", str(path), "--work-limit", "1", "--json"])
    assert r.exit_code == 0, r.output
    assert '"status": "work-limit"' in r.stdout
    r = CliRunner().invoke(main, ["exact", str(path), "--work-limit", "1.5"])
    assert r.exit_code == 2 and "whole number of nodes" in r.output
