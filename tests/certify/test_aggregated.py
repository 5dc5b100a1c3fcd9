"""The LP over aggregated rounds (lpsched.certify.methods.aggregated): the window coefficients
against a direct sum, the refinement rule by hand, the converged value against the independent
reference LP values and the full LP at every first window width, every bound below the
brute-force optimum and the proven optima of the shipped instances, and the LP-order schedule
feasible."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference.brute_force import REFERENCE, brute_force_tel, ref_instance, tiny_instances
from reference.shipped import EXACT as EXACT_DIR
from reference.shipped import MIX10, MIX10_OPT

from lpsched.certify import certify, lp_bound
from lpsched.certify.methods import METHODS
from lpsched.certify.methods.aggregated import aggregated_lp_bound, lp_order_schedule
from lpsched.generators.small import paper_scaled, scaled_mix
from lpsched.instance import Instance
from lpsched.io import read_instance
from lpsched.policies.local_search import best_heuristic
from lpsched.schedule import Schedule
from lpsched.solvers.aggregated import _memory_of, split_violated, window_coefficients
from lpsched.solvers.options import SolveOptions
from lpsched.solvers.pricing import memory_use
from lpsched.solvers.progress import Observer

EXACT = sorted(EXACT_DIR.glob("*.json"))
REL = 1e-6


def _direct(k, s, o, begin, end):
    """Dense (columns x windows) sums of s + t - k over the rounds of each window, from SPEC
    section 2."""
    out = np.zeros((len(k), len(begin)))
    for c in range(len(k)):
        for j in range(len(begin)):
            out[c, j] = sum(
                s[c] + t - k[c] for t in range(begin[j] + 1, end[j] + 1) if k[c] < t <= k[c] + o[c]
            )
    return out


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    cols=st.lists(
        st.tuples(st.integers(0, 25), st.integers(0, 9), st.integers(1, 12)), min_size=1, max_size=8
    ),
    cuts=st.lists(st.integers(1, 45), min_size=1, max_size=12, unique=True),
    gaps=st.booleans(),
)
def test_window_coefficients_equal_the_direct_sums(cols, cuts, gaps):
    k, s, o = (np.array(v, dtype=np.int64) for v in zip(*cols, strict=True))
    edges = np.unique(np.array([0, 50, *cuts]))
    begin, end = edges[:-1], edges[1:]
    if gaps:  # disjoint windows that do not cover every round (a refinement's group)
        begin, end = begin[::2], end[::2]
    indptr, window, value = window_coefficients(k, s, o, begin, end)
    dense = np.zeros((k.size, begin.size))
    for c in range(k.size):
        sl = slice(indptr[c], indptr[c + 1])
        assert (np.diff(window[sl]) > 0).all()  # each window once, in order
        dense[c, window[sl]] = value[sl]
        assert (value[sl] > 0).all()  # no entry for a window the column misses
    np.testing.assert_allclose(dense, _direct(k, s, o, begin, end))


def test_split_violated_cuts_only_overflowing_windows_wider_than_a_round():
    edges = np.array([0, 4, 5, 10])
    memory = np.zeros(11)
    memory[2] = 11.0  # window 1..4 overflows -> cut at 2
    memory[5] = 12.0  # window 5..5 overflows but is one round wide
    memory[7] = 10.0  # at M exactly: no overflow
    assert split_violated(edges, memory, 10.0).tolist() == [0, 2, 4, 5, 10]
    assert split_violated(edges, np.zeros(11), 10.0).tolist() == edges.tolist()


@pytest.mark.parametrize("seed", range(3))
def test_memory_of_fractional_columns_is_the_schedule_memory(seed):
    inst = scaled_mix(30, seed)
    sched = best_heuristic(inst)
    rounds = sched.makespan
    k, s, o = (v.astype(np.int64) for v in (sched.start, inst.prefill, inst.decode))
    # every column twice with weight 1/2: the memory of the schedule
    got = _memory_of(np.tile(k, 2), np.tile(s, 2), np.tile(o, 2), np.full(2 * inst.n, 0.5), rounds)
    want = memory_use(k, s, o, np.ones(inst.n, dtype=np.int64), rounds)
    np.testing.assert_allclose(got, want, atol=1e-9)


def _check_against_lp(instance: Instance, **kw) -> None:
    seen: list[float] = []
    res = aggregated_lp_bound(
        instance, time_limit=None, threads=1, observer=Observer(on_bound=seen.append), **kw
    )
    lp = lp_bound(instance).bound
    assert res.info["converged"]
    assert res.info["lp_value"] == pytest.approx(lp, rel=REL)
    assert res.bound == pytest.approx(lp, rel=1e-5)
    assert seen and all(b <= lp * (1 + REL) + 1e-9 for b in seen)
    assert all(x < y for x, y in zip(seen, seen[1:], strict=False))
    values = [level["value"] for level in res.info["levels"]]
    assert all(x <= y * (1 + REL) for x, y in zip(values, values[1:], strict=False))  # monotone


@pytest.mark.parametrize("width", [1, 3, 1000])
@pytest.mark.parametrize("n,seed", [(30, 0), (30, 1), (80, 0)])
def test_converged_value_is_the_full_lp_for_every_first_width(n, seed, width):
    _check_against_lp(scaled_mix(n, seed), width=width)


@pytest.mark.parametrize("path", EXACT, ids=[p.stem for p in EXACT])
def test_converged_value_is_the_full_lp_on_shipped_instances(path):
    _check_against_lp(read_instance(path), width=4)


@pytest.mark.parametrize("case", REFERENCE, ids=[c[0] for c in REFERENCE])
def test_lp_value_at_t1_equals_the_independent_reference(case):
    inst = ref_instance(case)
    t1_after_first_arrival = case[7] - int(inst.arrival.min())
    res = aggregated_lp_bound(
        inst, time_limit=None, horizon=t1_after_first_arrival, windows=False, width=2
    )
    assert res.info["lp_value"] == pytest.approx(case[6], abs=1e-5)
    assert res.bound <= case[5]  # the proven optimum


@settings(max_examples=40, deadline=None, derandomize=True)
@given(inst=tiny_instances(), width=st.sampled_from([1, 2, 5, 50]))
def test_every_bound_below_brute_force_and_the_schedule_feasible(inst, width):
    seen: list[float] = []
    res = aggregated_lp_bound(
        inst, time_limit=None, width=width, observer=Observer(on_bound=seen.append)
    )
    opt = brute_force_tel(inst)
    assert all(b <= opt + 1e-6 for b in seen)
    assert res.info["lp_value"] == pytest.approx(lp_bound(inst).bound, rel=REL, abs=1e-7)
    sched = lp_order_schedule(inst, res.info["mean_start"])
    assert sched.feasible and sched.tel >= opt


@pytest.mark.parametrize("solver", ["ipm", "pdlp"])
def test_interior_and_first_order_masters_give_valid_bounds(solver):
    inst = scaled_mix(30, 2)
    lp = lp_bound(inst).bound
    res = aggregated_lp_bound(inst, time_limit=None, master_solver=solver, max_iterations=40)
    assert "lp_value" not in res.info  # an approximate master value is not claimed
    assert int(inst.decode.sum()) <= res.bound <= lp * (1 + REL)


def test_stopped_early_the_bound_is_still_below_the_lp():
    inst = scaled_mix(80, 1)
    full = lp_bound(inst).bound
    res = aggregated_lp_bound(inst, time_limit=None, max_iterations=2, width=20)
    assert not res.info["converged"] and "lp_value" not in res.info
    assert int(inst.decode.sum()) <= res.bound <= full * (1 + REL)


def test_time_limit_is_honoured():
    inst = paper_scaled(200, 0)
    res = aggregated_lp_bound(inst, time_limit=0.3)
    assert res.runtime_s < 0.3 + 30  # a hang guard
    assert int(inst.decode.sum()) <= res.bound <= lp_bound(inst).bound * (1 + REL)


def test_arrivals_on_the_instance_axis():
    base = read_instance(EXACT[0])
    late = base.replace(arrival=base.arrival + 1000)
    sched = best_heuristic(late)
    res = aggregated_lp_bound(late, sched, time_limit=None)
    ref = aggregated_lp_bound(base, Schedule(base, sched.start - 1000), time_limit=None)
    assert res.info["time_shift"] == 1000
    assert res.info["lp_value"] == pytest.approx(ref.info["lp_value"], rel=1e-9)
    np.testing.assert_allclose(res.info["mean_start"], ref.info["mean_start"] + 1000)
    assert lp_order_schedule(late, res.info["mean_start"]).feasible


def test_lp_order_schedule_lists_by_completion_then_decode_then_index():
    inst = Instance.from_arrays([1, 1, 1, 1], [3, 2, 2, 1], 4, name="four")
    # completions 5, 4, 4, 6: the list is 1, 2 (a tie on completion and o, then index), 0, 3.
    # The strict executor by hand (M = 4): t=0 admits 1 (memory 2, 3 in rounds 1-2), not 2
    # (3 + 3 > 4 in round 2); t=2 admits 2 (rounds 3-4), not 0 (3 + 3 in round 4); t=4 admits
    # 0 (rounds 5-7: 2, 3, 4) and 3 (round 5: 2 + 2 = 4)
    sched = lp_order_schedule(inst, np.array([2.0, 2.0, 2.0, 5.0]))
    assert sched.start.tolist() == [4, 0, 2, 4]
    assert sched.tel == 7 + 2 + 4 + 5
    with pytest.raises(ValueError, match="shape"):
        lp_order_schedule(inst, np.zeros(3))


def test_the_method_reports_a_bound_and_a_schedule():
    inst = read_instance(MIX10)
    bounds: list[float] = []
    schedules: list[Schedule] = []
    METHODS["lp-aggregated"].run(
        inst,
        best_heuristic(inst),
        SolveOptions(time_limit=None, threads=1),
        Observer(on_bound=bounds.append, on_incumbent=schedules.append),
    )
    assert bounds and max(bounds) <= MIX10_OPT
    assert max(bounds) == pytest.approx(lp_bound(inst).bound, rel=REL)
    assert schedules and schedules[-1].feasible and schedules[-1].tel >= MIX10_OPT


def test_certify_on_a_medium_instance_names_the_method():
    inst = scaled_mix(100, 0)
    res = certify(inst, time_limit=20, threads=1)
    assert res.bound <= res.objective
    assert res.info["plan"]["size"] == "medium"
    assert str(res.info["methods"]["lp-aggregated"]).startswith("done")
    assert res.bound >= lp_bound(inst).bound * (1 - 1e-6)  # the LP, proven in the budget


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(alpha=1.0), "alpha"),
        (dict(seed_policies=("nope",)), "seed policy"),
        (dict(width=0), "width"),
        (dict(width=2.5), "width"),
        (dict(windows_target=0), "windows_target"),
        (dict(master_solver="dual"), "master_solver"),
        (dict(tol=1e9), "tol"),  # an attacker's case: a restricted master's value claimed
        (dict(tol=0.0), "tol"),
        (dict(time_limit=0), "time_limit"),
        (dict(threads=0), "threads"),
    ],
)
def test_bad_options_are_refused(kw, match):
    with pytest.raises(ValueError, match=match):
        aggregated_lp_bound(scaled_mix(5, 0), **kw)


@pytest.mark.parametrize("width", [1, 2, 100])
def test_an_overflow_of_one_token_in_a_billion_is_cut(width):
    # an attacker's case: with a relative tolerance of 1e-6, the width-2 master's one-token
    # overflow of round 4 stood, and the aggregated value 9 was reported as the LP's 10
    M = 10**9 + 7
    inst = Instance.from_arrays([M - 4, M // 2 - 3, 0], [4, 2, 2], M, [0, 3, 3], name="bigM")
    res = aggregated_lp_bound(inst, time_limit=None, width=width)
    assert res.info["lp_value"] == pytest.approx(lp_bound(inst, horizon=res.horizon).bound)
    assert res.bound <= brute_force_tel(inst) + 1e-6
