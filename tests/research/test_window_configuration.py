"""The configuration relaxation over windows of W rounds (lpsched.research.window_configuration):
LP <= bound <= brute-force optimum, one window gives the optimum, nested windows are monotone,
the column generation matches the LP over every configuration enumerated, the one-round DP
pricer matches a brute force."""

from __future__ import annotations

import itertools

import highspy
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference.brute_force import REFERENCE, brute_force_tel, ref_instance, tiny_instances

from lpsched.certify import lp_bound
from lpsched.formulations.horizon import tight_horizon
from lpsched.formulations.time_indexed import time_indexed_matrix
from lpsched.instance import Instance
from lpsched.policies.local_search import best_heuristic
from lpsched.research.window_configuration import window_configuration_bound
from lpsched.research.window_pricing import group_knapsack

EPS = 1e-6


def _bound(inst: Instance, W: int, **kw):
    return window_configuration_bound(inst, W, schedule=best_heuristic(inst), threads=1, **kw)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_instances(max_n=4), st.sampled_from([1, 2]))
def test_between_lp_and_optimum(inst, W):
    opt = brute_force_tel(inst)
    lp = lp_bound(inst).bound  # same horizon and windows: the best list policy's
    res = _bound(inst, W)
    assert res.info["converged"]
    assert res.method == f"window-configuration-W{W}"
    assert lp - EPS <= res.bound <= opt + EPS
    assert res.bound <= res.info["lp_value"] + EPS


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_instances(max_n=4))
def test_one_window_is_the_optimum(inst):
    opt = brute_force_tel(inst)
    res = _bound(inst, 10**6)  # W >= T: one window, whose configurations are schedules
    assert res.info["windows"] == 1 and res.info["converged"]
    assert res.bound == pytest.approx(opt, abs=EPS)


def _enumerated_value(inst: Instance, W: int) -> float:
    """The relaxation's LP with every configuration of every window, built from the module
    docstring's definition alone (dense rows, HiGHS)."""
    hz = tight_horizon(inst, best_heuristic(inst))
    mat = time_indexed_matrix(inst, hz)
    s, o, M = inst.prefill, inst.decode, inst.memory
    pairs = list(zip(mat.col_unit.tolist(), mat.col_start.tolist(), strict=True))
    cols: list[tuple[float, dict[int, float]]] = []  # (cost, {row: coefficient})
    windows = [(a, min(a + W - 1, mat.T)) for a in range(1, mat.T + 1, W)]
    link: dict[tuple[int, int], int] = {}
    n = inst.n
    for w, (a, b) in enumerate(windows):
        for j, (i, k) in enumerate(pairs):
            if k + 1 <= b and k + o[i] >= a:
                link[w, j] = n + len(link)
    conv0 = n + len(link)
    for j, (i, k) in enumerate(pairs):
        rows = {i: 1.0} | {r: 1.0 for (w, jj), r in link.items() if jj == j}
        cols.append((float(k + o[i]), rows))
    for w, (a, b) in enumerate(windows):
        by_req: dict[int, list[int]] = {}
        for ww, j in link:
            if ww == w:
                by_req.setdefault(pairs[j][0], []).append(j)
        for pick in itertools.product(*[[None, *js] for js in by_req.values()]):
            q = [j for j in pick if j is not None]
            run = [(pairs[j][0], pairs[j][1]) for j in q]  # (request, start)
            use = [sum(s[r] + t - k for r, k in run if k < t <= k + o[r]) for t in range(a, b + 1)]
            if max(use, default=0) <= M:
                cols.append((0.0, {link[w, j]: -1.0 for j in q} | {conv0 + w: 1.0}))
    nrow = conv0 + len(windows)
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = len(cols), nrow
    lp.col_cost_ = np.array([c for c, _ in cols])
    lp.col_lower_ = np.zeros(len(cols))
    lp.col_upper_ = np.full(len(cols), highspy.kHighsInf)
    rhs = np.concatenate((np.ones(n), np.zeros(len(link)), np.ones(len(windows))))
    lp.row_lower_, lp.row_upper_ = rhs, rhs
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = len(cols), nrow
    lp.a_matrix_.start_ = np.cumsum([0] + [len(r) for _, r in cols]).astype(np.int32)
    lp.a_matrix_.index_ = np.array([r for _, rs in cols for r in rs], dtype=np.int32)
    lp.a_matrix_.value_ = np.array([v for _, rs in cols for v in rs.values()])
    h.passModel(lp)
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    return float(h.getInfo().objective_function_value)


@pytest.mark.parametrize(
    "W, kw",
    [
        (1, {}),  # the arc-flow LP (interior point)
        (1, {"lp_solver": "simplex"}),
        (1, {"arc_flow": False}),  # column generation
        (2, {}),
        (3, {}),
    ],
)
def test_column_generation_equals_every_configuration(W, kw):
    # ref15 (n = 3) and a 4-request case: small enough to enumerate every configuration
    for inst in (
        ref_instance(REFERENCE[15]),
        Instance.from_arrays([3, 1, 4, 0], [2, 3, 2, 4], 8, name="four"),
    ):
        res = _bound(inst, W, **kw)
        assert res.info["converged"]
        value = _enumerated_value(inst, W)
        assert res.bound == pytest.approx(value, abs=1e-6)
        if W == 1 and kw.get("arc_flow", True):  # exact at once: no pricing round needed
            assert res.info["arc_flow_value"] == pytest.approx(value, abs=1e-6)
            assert res.info["iterations"] == 0
        else:
            assert res.info["arc_flow_value"] is None


@pytest.mark.parametrize("W", [1, 2])
def test_upper_bounds_the_relaxation(W):
    # stopped at once (1 ms): the unboxed restricted master is still above the relaxation
    for inst in (
        ref_instance(REFERENCE[15]),
        Instance.from_arrays([3, 1, 4, 0], [2, 3, 2, 4], 8, name="four"),
    ):
        value = _enumerated_value(inst, W)
        res = _bound(inst, W, arc_flow=False, time_limit=1e-3, upper=True)
        assert res.bound - EPS <= value <= res.info["upper"] + EPS
        assert res.info["upper"] <= best_heuristic(inst).tel + EPS  # the seed's columns


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_instances(max_n=5))
def test_arc_flow_equals_column_generation(inst):
    # two independent ways to the W = 1 relaxation: one flow LP, and columns priced by the DP
    flow = _bound(inst, 1)
    columns = _bound(inst, 1, arc_flow=False)
    assert flow.info["converged"] and columns.info["converged"]
    assert flow.info["arc_flow_value"] == pytest.approx(columns.info["lp_value"], abs=1e-6)
    assert flow.bound == pytest.approx(columns.bound, abs=1e-6)


@pytest.mark.slow
def test_monotone_in_nested_windows():
    inst = ref_instance(REFERENCE[0])  # n = 6, LP 36.82, optimum 38
    values = [_bound(inst, W) for W in (1, 2, 4, 8)]
    assert all(r.info["converged"] for r in values)
    lp = lp_bound(inst).bound
    chain = [lp] + [r.info["lp_value"] for r in values] + [38.0]
    assert all(a <= b + EPS for a, b in itertools.pairwise(chain))
    # the lifted multipliers of W start W' = 2W at least at W's bound
    for small, W in zip(values, (2, 4, 8), strict=False):
        lifted = _bound(inst, W, start=small)
        assert lifted.info["bound_at_lp_duals"] >= small.bound - EPS


def test_start_must_nest():
    inst = ref_instance(REFERENCE[0])
    two = _bound(inst, 2)
    with pytest.raises(ValueError, match="does not nest"):
        _bound(inst, 3, start=two)
    with pytest.raises(ValueError, match="W must be a positive integer"):
        _bound(inst, 0)
    with pytest.raises(ValueError, match="lp_solver must be one of"):
        _bound(inst, 1, lp_solver="barrier")


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 3), st.integers(1, 6), st.integers(-20, -1)),
        min_size=1,
        max_size=7,
    ),
    st.integers(1, 10),
)
def test_group_knapsack_is_exact(items, capacity):
    group = np.array([g for g, _, _ in items])
    weight = np.array([w for _, w, _ in items])
    value = np.array([v / 4 for _, _, v in items])
    cols = np.arange(100, 100 + len(items))
    best, chosen = group_knapsack(group, weight, value, cols, capacity)
    brute = 0.0
    for r in range(1, len(items) + 1):
        for sub in itertools.combinations(range(len(items)), r):
            if len({group[j] for j in sub}) == r and weight[list(sub)].sum() <= capacity:
                brute = min(brute, float(value[list(sub)].sum()))
    assert best == pytest.approx(brute)
    picked = chosen - 100
    assert len(set(group[picked].tolist())) == picked.size
    assert weight[picked].sum() <= capacity and value[picked].sum() == pytest.approx(best)


def test_refuses_a_horizon_above_the_limit():
    """Issue 22, item 7: checked before the time-indexed matrix is built."""
    from lpsched import run_policy
    from lpsched.solvers.options import MAX_HORIZON
    from lpsched.solvers.result import LPTooLargeError

    inst = Instance.from_arrays([5, 7, 5], [3, 2, 3], 12, arrival=[0, 0, 2 * MAX_HORIZON])
    with pytest.raises(LPTooLargeError, match="MAX_HORIZON"):
        window_configuration_bound(inst, 1, schedule=run_policy(inst, "fcfs"), time_limit=5)


def test_time_limit_stops_the_arc_flow_build(monkeypatch):
    """Issue 22, item 7: the arc-flow LP's build (seconds at a few thousand rounds) looks at
    the deadline. A clock that jumps past it once the first LP is solved must end the call
    in the build, with the bound of the first LP's duals and no arc-flow value."""
    import time
    import types

    import lpsched.research.window_configuration as wc

    # the fake clock starts at the real one: the solver wait (run_interruptible) compares the
    # deadline with the real clock, and a deadline of 10 "fake" seconds stopped the first LP
    # whenever it took over 0.1 s (a loaded machine)
    now = [time.perf_counter()]
    monkeypatch.setattr(wc, "time", types.SimpleNamespace(perf_counter=lambda: now[0]))
    real = wc._lp_duals

    def duals_then_late(*args, **kwargs):
        out = real(*args, **kwargs)
        now[0] += 1e9
        return out

    monkeypatch.setattr(wc, "_lp_duals", duals_then_late)
    inst = Instance.from_arrays([3, 2, 4, 1, 2], [2, 3, 1, 2, 2], 8)
    res = window_configuration_bound(inst, 1, schedule=best_heuristic(inst), time_limit=10)
    assert res.info["arc_flow_value"] is None
    assert "arc-flow" in res.info["stopped"]
    assert res.bound <= brute_force_tel(inst) + 1e-6
