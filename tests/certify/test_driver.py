"""The one driver, lpsched.solve: what it refuses, and the status it reports (cases found by an
attack on the solve wing)."""

from __future__ import annotations

import pytest

from lpsched.bounds import combinatorial_bound
from lpsched.certify import best_bound, shortcuts, solve
from lpsched.instance import Instance
from lpsched.schedule import InfeasibleScheduleError, Schedule
from lpsched.solvers.options import SolveOptions
from lpsched.solvers.result import Result, SolveStatus

ONE = Instance.from_arrays([3], [4], 10)  # optimum 4: the combinatorial bound proves it
SMALL = Instance.from_arrays([9, 1, 3, 3, 1, 0], [1, 7, 8, 5, 4, 8], 22)


@pytest.mark.parametrize("plan", [("local-search",), ("lns",)])
def test_a_plan_whose_bound_meets_the_tel_is_optimal(plan):
    res = solve(ONE, plan, SolveOptions(time_limit=20))
    assert (res.objective, res.bound, res.gap) == (4, 4.0, 0.0)
    assert res.status is SolveStatus.OPTIMAL


@pytest.mark.parametrize("plan", [None, 5, b"mip", {"mip"}, ["mip", 3]])
def test_a_plan_of_the_wrong_type_is_refused(plan):
    with pytest.raises(TypeError, match="a plan is 'auto' or a tuple of method names"):
        solve(ONE, plan)


def test_wrong_arguments_are_refused_by_name():
    with pytest.raises(ValueError, match="names each method once"):
        solve(ONE, ("mip", "mip"))
    with pytest.raises(TypeError, match="params must be a SolveOptions"):
        solve(ONE, "auto", {"time_limit": 5})
    with pytest.raises(TypeError, match="instance must be an Instance"):
        solve("instance.json", "auto")
    with pytest.raises(TypeError, match="start must be a Schedule"):
        solve(ONE, ("mip",), start=[0])
    with pytest.raises(TypeError, match="observer must be an Observer"):
        solve(ONE, ("mip",), observer=5)


def test_a_start_before_its_arrival_names_the_arrival():
    late = Instance.from_arrays([1, 1, 1], [2, 2, 2], 10, arrival=[100, 101, 103])
    with pytest.raises(InfeasibleScheduleError, match="before its arrival 100"):
        solve(late, ("mip",), start=Schedule(late, [0, 0, 0]))


def test_best_bound_interrupted_keeps_the_combinatorial_bound(monkeypatch):
    def stopped(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(shortcuts, "lp_bound", stopped)
    res = best_bound(SMALL, time_limit=30)
    assert res.status is SolveStatus.INTERRUPTED
    assert (res.bound, res.bound_method) == (combinatorial_bound(SMALL), "combinatorial")


def test_an_early_interrupted_summary_prints_no_none():
    res = Result.of_bound("combinatorial", 5.0, 0.1)
    res.status = SolveStatus.INTERRUPTED
    for command in ("exact", "certify"):
        assert "None" not in res.summary(command)
    big = Result.of_bound("lp", 2_000_000.0, 0.1)
    assert "bound       2000000 " in big.summary("exact")  # every digit, no exponent
