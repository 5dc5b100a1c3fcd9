"""Exact TEL and LP bounds (lpsched.exact, lpsched.formulations): reference values, an
independent brute force, HiGHS against CP-SAT, the Pyomo model against the matrix build, and
honest statuses."""

from __future__ import annotations

import itertools
import math

import highspy
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lpsched.formulations import (
    HorizonError,
    build_model,
    horizon_t1,
    horizon_t2,
    min_horizon,
    start_windows,
    time_indexed_matrix,
)
from lpsched.instance import Instance
from lpsched.schedule import Schedule
from lpsched.solvers.result import BoundResult, ExactResult, SolveStatus
from lpsched.solvers.solve import exact_horizon, export_model, lp_bound, solve_exact, solve_lp

# Reference cases (copied from the project's reference/cases.json, computed from SPEC.md by an
# implementation independent of lpsched): name, M, s_i, o_i, a_i, optimal TEL, LP value at T1, T1.
REFERENCE = [
    ("ref00", 22, "9 1 3 3 1 0", "1 7 8 5 4 8", "0 0 0 0 0 0", 38, 36.821429, 33),
    ("ref01", 15, "3 5 6 5 1 7 0 0 5", "3 4 2 1 3 2 1 5 4", "0 0 0 0 0 0 0 0 0", 46, 40.053217, 25),
    ("ref02", 28, "12 2 5 9 2 2", "1 1 5 1 3 6", "0 0 0 0 0 0", 18, 17.769231, 17),
    ("ref03", 37, "15 0 17 16 0", "2 2 3 4 8", "0 0 0 0 0", 25, 21.404504, 19),
    ("ref04", 23, "8 3 5 4 11 11 1", "2 1 7 6 4 4 5", "0 0 0 0 0 0 0", 49, 42.851992, 29),
    ("ref05", 32, "4 2 16 10 1 5", "1 7 2 4 1 2", "0 0 0 0 0 0", 20, 18.193772, 17),
    ("ref06", 28, "0 4 2 3 11 1 5", "8 3 1 8 3 1 3", "0 0 0 0 0 0 0", 31, 29.142857, 27),
    ("ref07", 24, "5 1 5 2 3", "1 5 5 2 7", "0 0 0 0 0", 20, 20.0, 20),
    ("ref08", 23, "1 2 1 2 3 5 4 8", "8 6 4 5 6 7 5 1", "0 0 0 0 0 0 0 0", 60, 57.447687, 42),
    ("ref09", 24, "11 4 3 4 10 11 0", "3 7 7 7 4 4 4", "0 0 0 0 0 0 0", 64, 59.099243, 36),
    ("ref10", 12, "3 1 5 0", "2 8 7 7", "0 0 0 0", 38, 34.323186, 24),
    ("ref11", 29, "12 4 5 5 5 9", "3 8 2 1 8 4", "0 0 0 0 0 0", 34, 30.645278, 26),
    ("ref12", 14, "4 5 7 5 0 3 5 3", "2 5 3 7 3 5 2 5", "0 0 0 0 0 0 0 0", 70, 59.089202, 32),
    ("ref13", 35, "0 12 2 5 0", "6 4 2 7 4", "0 0 0 0 0", 23, 23.0, 23),
    ("ref14", 19, "5 4 3 3 0", "4 8 8 8 5", "0 0 0 0 0", 46, 45.25979, 33),
    ("ref15", 22, "2 9 3", "2 3 5", "0 0 0", 10, 10.0, 10),
    ("ref16", 20, "4 9 1 9 10 7 9 2", "1 3 3 3 4 3 3 3", "0 0 0 0 0 0 0 0", 49, 43.346154, 23),
    (
        "ref17",
        19,
        "3 9 5 1 6 4 2 8 0 5",
        "3 4 4 8 2 3 4 2 1 6",
        "0 0 0 0 0 0 0 0 0 0",
        70,
        63.833108,
        37,
    ),
    ("ref18", 13, "2 3 5 2 5 5 5", "6 8 1 6 1 5 8", "2 0 2 3 1 4 0", 81, 67.412526, 39),
    ("ref19", 35, "1 12 3 0", "7 2 8 2", "3 0 0 4", 19, 19.0, 23),
    ("ref20", 15, "7 3 5", "3 2 2", "3 1 3", 8, 7.222222, 10),
    (
        "ref21",
        27,
        "13 5 3 10 1 3 11 12 4",
        "1 4 4 1 7 4 4 2 7",
        "5 5 5 5 0 2 2 0 4",
        47,
        43.243656,
        39,
    ),
    ("ref22", 18, "2 7 3 5 1 1 0 9", "6 3 1 5 8 6 4 1", "1 1 3 4 5 1 5 3", 44, 40.960538, 39),
    (
        "ref23",
        29,
        "4 4 3 14 0 3 2 5 14 5",
        "5 5 8 4 6 2 3 1 1 1",
        "3 4 4 3 2 1 2 5 1 4",
        43,
        40.993026,
        41,
    ),
]


def ref_instance(case) -> Instance:
    name, memory, s, o, a = case[:5]

    def ints(text: str) -> list[int]:
        return [int(v) for v in text.split()]

    return Instance.from_arrays(ints(s), ints(o), memory, ints(a), name=name)


IDS = [c[0] for c in REFERENCE]


# --------------------------------------------------------------------------- brute force


def brute_force_tel(inst: Instance) -> int:
    """Optimal TEL by depth-first search over start times (written from SPEC section 2 only).

    Starts range over ``a_i .. T1 - o_i``; a partial assignment is cut when some round holds more
    than ``M`` tokens or its latency plus the remaining ``sum o`` reaches the best TEL so far.
    The optimum found is confirmed with ``Schedule.feasible``.
    """
    s, o, a = inst.prefill.tolist(), inst.decode.tolist(), inst.arrival.tolist()
    n, M = inst.n, inst.memory
    T = max(a) + sum(o)
    mem = [0] * (T + 2)
    best = [math.inf, None]
    start = [0] * n
    rest = [sum(o[i:]) for i in range(n)] + [0]

    def dfs(i: int, tel: int) -> None:
        if tel + rest[i] >= best[0]:
            return
        if i == n:
            best[0], best[1] = tel, list(start)
            return
        for p in range(a[i], T - o[i] + 1):
            lat = p + o[i] - a[i]
            if tel + lat + rest[i + 1] >= best[0]:
                break
            if all(mem[p + j] + s[i] + j <= M for j in range(1, o[i] + 1)):
                for j in range(1, o[i] + 1):
                    mem[p + j] += s[i] + j
                start[i] = p
                dfs(i + 1, tel + lat)
                for j in range(1, o[i] + 1):
                    mem[p + j] -= s[i] + j

    dfs(0, 0)
    sched = Schedule(inst, np.asarray(best[1]))
    assert sched.feasible and sched.tel == best[0]
    return int(best[0])


@st.composite
def tiny_instances(draw, max_n: int = 6) -> Instance:
    memory = draw(st.integers(2, 14))
    n = draw(st.integers(1, max_n))
    o = [draw(st.integers(1, min(4, memory))) for _ in range(n)]
    s = [draw(st.integers(0, memory - oi)) for oi in o]
    if draw(st.booleans()):
        s = [s[0]] * n if draw(st.booleans()) else s  # identical prefill, often identical requests
        o = [o[0]] * n if draw(st.booleans()) else o
        s = [min(si, memory - oi) for si, oi in zip(s, o, strict=True)]
    a = draw(st.lists(st.integers(0, 5), min_size=n, max_size=n)) if draw(st.booleans()) else None
    return Instance.from_arrays(s, o, memory, a, name="tiny")


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
    res = solve_exact(inst, solver="highs")
    assert res.status is SolveStatus.OPTIMAL
    assert res.objective == opt and res.bound == opt and res.gap == 0.0
    assert res.schedule.check().tel == opt
    assert res.horizon <= horizon_t1(inst)


@pytest.mark.parametrize("case", REFERENCE, ids=IDS)
def test_reference_optimum_cpsat(case):
    inst, opt = ref_instance(case), case[5]
    res = solve_exact(inst, solver="cpsat")
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


def _mix(n: int, seed: int) -> Instance:
    """The scaled 80/20 mix of benchmarks/bench_exact.py (M = 50)."""
    rng = np.random.default_rng(seed)
    long = rng.random(n) < 0.2
    s = np.where(long, rng.integers(15, 31, n), rng.integers(1, 7, n))
    return Instance.from_arrays(s, rng.integers(1, 13, n), 50, name=f"mix{n}-s{seed}")


def test_local_search_improves_the_list_policies():
    from lpsched.policies.local_search import best_heuristic, improve_schedule

    inst = _mix(15, 2)
    h = best_heuristic(inst)
    better = improve_schedule(inst, h)
    assert better.check().tel < h.tel  # 240 -> 227 (the optimum)
    assert improve_schedule(inst, h).tel == better.tel  # deterministic
    assert improve_schedule(inst, h, iterations=0) is h
    res = solve_exact(inst, time_limit=30)
    assert res.info["heuristic_tel"] == better.tel
    assert res.status is SolveStatus.OPTIMAL and res.objective == 227


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


# --------------------------------------------------------------------------- horizon


def test_horizon_values_and_refusals():
    inst = Instance.from_arrays([3, 2, 0], [2, 1, 4], 6, [0, 3, 1])
    assert horizon_t1(inst) == 3 + 7
    assert min_horizon(inst) == 5  # a + o = 2, 4, 5
    assert horizon_t2(inst, 12) == 12 - 7 + 5
    hz = exact_horizon(inst)
    assert hz.T == min(hz.T1, hz.T2) and hz.upper_bound == hz.schedule.tel
    assert hz.slack == hz.upper_bound - 7
    lo, hi = start_windows(inst, hz.T, hz.slack)
    assert lo.tolist() == [0, 3, 1] and (hi <= lo + hz.slack).all()
    with pytest.raises(HorizonError, match="too short to hold any schedule"):
        solve_exact(inst, horizon=4)
    with pytest.raises(ValueError):  # HorizonError is a ValueError
        lp_bound(inst, horizon=4)
    with pytest.raises(HorizonError):
        build_model(inst, 4)


def test_horizon_below_min_t1_t2_refused_and_larger_accepted():
    inst = ref_instance(REFERENCE[12])  # ref12: optimum 70, T1 = 32
    hz = exact_horizon(inst)
    if hz.T > min_horizon(inst):
        with pytest.raises(HorizonError, match="not proven"):
            solve_exact(inst, horizon=hz.T - 1)
    res = solve_exact(inst, horizon=hz.T1 + 7, windows=False)
    assert (res.status, res.objective, res.horizon) == (SolveStatus.OPTIMAL, 70, hz.T1 + 7)


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
    assert res.runtime_s < 10


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
    assert isinstance(res, ExactResult)
    d = res.to_dict()
    assert list(d) == ["status", "objective", "bound", "gap", "runtime_s", "horizon", "solver"]
    assert d["status"] == "optimal" and d["objective"] == 38 and d["solver"] == "highs"
    assert res.build_s + res.solve_s <= res.runtime_s + 1e-9
    assert "optimal" in res.summary() and "38" in res.summary()
    b = lp_bound(inst)
    assert isinstance(b, BoundResult)
    assert list(b.to_dict()) == ["method", "bound", "runtime_s", "horizon"]
    assert "lp lower bound" in b.summary()
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
