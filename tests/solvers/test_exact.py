"""Exact TEL and LP bounds (lpsched.solvers, lpsched.formulations): reference values, an
independent brute force, HiGHS against CP-SAT, the Pyomo model against the matrix build, and
honest statuses."""

from __future__ import annotations

import itertools
import math

import highspy
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from reference.brute_force import IDS, REFERENCE, brute_force_tel, ref_instance, tiny_instances  # noqa: E402

from lpsched.certify import exact_horizon, export_model, lp_bound, solve_exact, solve_lp
from lpsched.formulations import (
    build_model,
    horizon_t1,
    time_indexed_matrix,
)
from lpsched.instance import Instance
from lpsched.solvers.result import Result, SolveStatus


def test_brute_force_on_hand_example():
    # M = 5: (s, o) = (3, 2) holds 4, 5 tokens; (2, 1) holds 3. They cannot overlap
    # (4 + 3 > 5), so the short one goes first: TEL = 1 + 3 = 4.
    inst = Instance.from_arrays([3, 2], [2, 1], 5)
    assert brute_force_tel(inst) == 4
    assert solve_exact(inst).objective == 4


# --------------------------------------------------------------------------- reference values


@pytest.mark.parametrize("case", REFERENCE, ids=IDS)
def test_reference_optimum_highs(case):
    inst, opt = ref_instance(case), case[5]
    # no time limit: proven at any speed (ref17 takes 2-3 s, and missed the default 60 s on a
    # machine slowed about tenfold)
    res = solve_exact(inst, solver="highs", time_limit=None)
    assert res.status is SolveStatus.OPTIMAL
    assert res.objective == opt and res.bound == opt and res.gap == 0.0
    assert res.schedule.check().tel == opt
    assert res.horizon <= horizon_t1(inst)


@pytest.mark.parametrize("case", REFERENCE, ids=IDS)
def test_reference_optimum_cpsat(case):
    inst, opt = ref_instance(case), case[5]
    res = solve_exact(inst, solver="cpsat", time_limit=None)  # proven at any speed
    assert (res.status, res.objective, res.bound) == (SolveStatus.OPTIMAL, opt, opt)
    assert res.schedule.check().tel == opt


@pytest.mark.parametrize("case", REFERENCE, ids=IDS)
def test_reference_lp_bound(case):
    inst, opt, lp_t1, t1 = ref_instance(case), case[5], case[6], case[7]
    assert horizon_t1(inst) == t1
    at_t1 = lp_bound(inst, horizon=t1)
    assert at_t1.method == "lp" and at_t1.horizon == t1
    assert at_t1.bound == pytest.approx(lp_t1, abs=1e-5)
    tight = lp_bound(inst)
    assert tight.horizon <= t1
    assert lp_t1 - 1e-6 <= tight.bound <= opt + 1e-6


@pytest.mark.parametrize(
    "case", [REFERENCE[i] for i in (0, 4, 12, 18, 21)], ids=[IDS[i] for i in (0, 4, 12, 18, 21)]
)
def test_pyomo_reference_model_agrees(case):
    """The Pyomo model (the reference) and the matrix build give the same LP and optimum."""
    inst, opt, lp_t1, t1 = ref_instance(case), case[5], case[6], case[7]
    assert lp_bound(inst, t1, backend="pyomo").bound == pytest.approx(lp_t1, abs=1e-5)
    assert lp_bound(inst, backend="pyomo").bound == pytest.approx(lp_bound(inst).bound, abs=1e-6)
    res = solve_exact(inst, backend="pyomo")
    assert (res.status, res.objective) == (SolveStatus.OPTIMAL, opt)
    res.schedule.check()


def test_pyomo_model_components():
    inst = ref_instance(REFERENCE[10])  # ref10: M = 12, o = 2 8 7 7
    m = build_model(inst, 24)
    for name in ("I", "R", "IK", "s", "o", "a", "M", "T", "x", "assign", "memory", "tel"):
        assert hasattr(m, name)
    assert len(m.IK) == sum(24 - o + 1 for o in (2, 8, 7, 7))
    assert m.x[0, 0].is_binary()
    assert not build_model(inst, 24, relax=True).x[0, 0].is_binary()


# --------------------------------------------------------------------------- brute force


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_instances())
def test_highs_cpsat_and_brute_force_agree(inst):
    opt = brute_force_tel(inst)
    for solver in ("highs", "cpsat"):
        res = solve_exact(inst, solver=solver)
        assert res.status is SolveStatus.OPTIMAL, (solver, res.info)
        assert res.objective == opt, solver
        assert res.schedule.check().tel == opt
    cut = solve_exact(inst, cover_cuts=10, local_search=0)
    assert (cut.status, cut.objective) == (SolveStatus.OPTIMAL, opt), cut.info
    assert lp_bound(inst).bound <= opt + 1e-6


# --------------------------------------------------------------------------- local search, cuts


@pytest.mark.slow
@pytest.mark.parametrize("aggregate", [True, False])
def test_cover_cuts_are_valid(aggregate):
    """Every GUB-cover cut separated on the LP holds for feasible schedules (the optimum and
    many list schedules), and the cut loop keeps the reference optima."""
    from lpsched.executor import execute
    from lpsched.formulations.cuts import MemoryRows, separate_cover_cuts

    rng = np.random.default_rng(0)
    for case in REFERENCE[:12]:
        inst = ref_instance(case)
        sol = solve_lp(inst, aggregate=aggregate)
        cuts = separate_cover_cuts(MemoryRows(sol.matrix), sol.x)
        opt = solve_exact(inst, aggregate=aggregate).schedule
        scheds = [opt] + [execute(inst, rng.permutation(inst.n), backfill=True) for _ in range(20)]
        for sched in scheds:
            if not sol.matrix.fits(sched.start):
                continue
            x = sol.matrix.values_from_starts(sched.start)
            for cols, rhs in cuts:
                assert x[cols].sum() <= rhs + 1e-9
        res = solve_exact(inst, cover_cuts=20, aggregate=aggregate)
        assert (res.status, res.objective) == (SolveStatus.OPTIMAL, case[5])


def test_aggregation_keeps_lp_and_optimum():
    # three identical requests and two others
    inst = Instance.from_arrays([4, 4, 4, 1, 7], [3, 3, 3, 5, 2], 14)
    hz = exact_horizon(inst)
    agg = time_indexed_matrix(inst, hz, aggregate=True)
    plain = time_indexed_matrix(inst, hz, aggregate=False)
    assert agg.n_units == 3 and plain.n_units == 5 and agg.ncol < plain.ncol
    assert solve_lp(inst, aggregate=True).value == pytest.approx(
        solve_lp(inst, aggregate=False).value, abs=1e-7
    )
    opts = {solve_exact(inst, aggregate=a).objective for a in (True, False)}
    assert opts == {brute_force_tel(inst)}


# --------------------------------------------------------------------------- honesty


def _hard_instance() -> Instance:
    """The scaled 80/20 mix, n = 20, seed 1 (HiGHS does not prove it within 60 s)."""
    rng = np.random.default_rng(1)
    n = 20
    long = rng.random(n) < 0.2
    s = np.where(long, rng.integers(15, 31, n), rng.integers(1, 7, n))
    return Instance.from_arrays(s, rng.integers(1, 13, n), 50, name="mix20-s1")


@pytest.mark.parametrize("solver", ["highs", "cpsat"])
def test_time_limit_is_reported_honestly(solver):
    inst = _hard_instance()
    res = solve_exact(inst, solver=solver, time_limit=1.0)
    assert res.status is SolveStatus.TIME_LIMIT
    assert res.objective is not None and res.bound < res.objective
    assert 0 < res.gap < 1 and res.gap == pytest.approx((res.objective - res.bound) / res.objective)
    assert res.bound >= inst.decode.sum() and res.bound == math.ceil(res.bound)
    assert res.schedule.check().tel == res.objective <= res.info["heuristic_tel"]
    assert res.runtime_s < 1.0 + 30  # a hang guard


def test_no_warm_start_and_gap_stop():
    inst = ref_instance(REFERENCE[12])  # ref12: n = 8, optimum 70
    res = solve_exact(inst, warm_start=False)
    assert (res.status, res.objective) == (SolveStatus.OPTIMAL, 70)
    loose = solve_exact(inst, mip_gap=0.5)
    assert loose.status in (SolveStatus.OPTIMAL, SolveStatus.FEASIBLE)
    if loose.status is SolveStatus.FEASIBLE:
        assert loose.bound < loose.objective
    assert loose.bound <= 70 <= loose.objective


def test_result_dicts_and_summaries():
    inst = ref_instance(REFERENCE[0])
    res = solve_exact(inst)
    assert isinstance(res, Result)
    d = res.to_dict("exact")
    assert list(d) == ["status", "objective", "bound", "gap", "runtime_s", "horizon", "solver"]
    assert d["status"] == "optimal" and d["objective"] == 38 and d["solver"] == "highs"
    assert res.build_s + res.solve_s <= res.runtime_s + 1e-9
    assert "optimal" in res.summary("exact") and "38" in res.summary("exact")
    b = lp_bound(inst)
    assert isinstance(b, Result)
    assert list(b.to_dict("bound")) == ["method", "bound", "runtime_s", "horizon"]
    assert "lp lower bound" in b.summary("bound")
    with pytest.raises(ValueError, match="unknown solver"):
        solve_exact(inst, solver="gurobi")


# --------------------------------------------------------------------------- export


@pytest.mark.parametrize("fmt", ["lp", "mps"])
@pytest.mark.parametrize("backend", ["pyomo", "highs"])
def test_export_model_roundtrip(tmp_path, fmt, backend):
    inst = ref_instance(REFERENCE[4])  # ref04: optimum 49
    path = export_model(inst, tmp_path / f"m.{fmt}", format=fmt, backend=backend)
    text = path.read_text()
    if backend == "pyomo" and fmt == "lp":
        assert "memory(" in text and "assign(" in text and "x(" in text
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.readModel(str(path))
    h.run()
    assert h.getInfo().objective_function_value == pytest.approx(49)
    lp = export_model(inst, tmp_path / f"r.{fmt}", format=fmt, relax=True, backend=backend)
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.readModel(str(lp))
    h.run()
    assert h.getInfo().objective_function_value == pytest.approx(lp_bound(inst).bound, abs=1e-6)
    with pytest.raises(ValueError, match="format"):
        export_model(inst, tmp_path / "m.txt", format="txt")


def test_shipped_instance_optimum():
    from pathlib import Path

    from lpsched.io import read_instance

    root = Path(__file__).resolve().parents[2] / "instances" / "exact"
    for name, opt, lp in [("mix10-s1", 74, 69.541863), ("mix12-s4-online", 106, 98.432671)]:
        inst = read_instance(root / f"{name}.json")
        res = solve_exact(inst)
        assert (res.status, res.objective) == (SolveStatus.OPTIMAL, opt)
        assert lp_bound(inst).bound == pytest.approx(lp, abs=1e-5)


def test_all_subsets_of_a_case_agree_with_brute_force():
    """Every 3-request subset of ref01 (M = 15): HiGHS equals the brute force."""
    inst = ref_instance(REFERENCE[1])
    for idx in itertools.combinations(range(inst.n), 3):
        sub = inst.subset(list(idx))
        assert solve_exact(sub).objective == brute_force_tel(sub)
