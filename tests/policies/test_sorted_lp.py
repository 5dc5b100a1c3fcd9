"""Sorted-LP (lpsched.policies.sorted_lp): the registry entry, the ordering rule, consistency of
the fractional completion times with the LP value, and the fast LP path."""

from __future__ import annotations

import time

import numpy as np
import pytest
from conftest import instance_and_order
from hypothesis import given, settings

from lpsched.certify import lp_bound, solve_lp
from lpsched.executor import execute
from lpsched.instance import Instance
from lpsched.policies.local_search import adjacent_swaps
from lpsched.policies.registry import POLICIES, run_policy
from lpsched.policies.sorted_lp import lp_completion_times, lp_swap_order, sorted_lp_order
from lpsched.solvers.result import LPTooLargeError


def test_registered_and_feasible():
    assert "sorted-lp" in POLICIES and "horizon" in POLICIES["sorted-lp"].options
    inst = Instance.from_arrays([9, 1, 3, 3, 1, 0], [1, 7, 8, 5, 4, 8], 22)
    for spec in ("sorted-lp", "sorted-lp+backfill"):
        sched = run_policy(inst, spec)
        assert sched.check().policy == spec
        assert sorted(sched.info["order"].tolist()) == list(range(6))
        assert sched.tel >= 38  # the optimum of this instance (reference case ref00)


def test_ample_memory_orders_by_decode_then_index():
    # everything starts at round 0 in the LP: key = o_i; ties by o_i then index
    inst = Instance.from_arrays([0, 5, 2, 1, 3], [3, 1, 2, 1, 3], 100)
    assert lp_completion_times(inst).tolist() == pytest.approx([3, 1, 2, 1, 3])
    assert sorted_lp_order(inst).tolist() == [1, 3, 2, 0, 4]


def test_conflicting_pair_short_first():
    # (5, 5) and (5, 1) cannot overlap (6 + 6 > 10): the LP puts the short one first
    inst = Instance.from_arrays([5, 5], [5, 1], 10)
    c = lp_completion_times(inst)
    assert c[1] < c[0]
    assert sorted_lp_order(inst).tolist() == [1, 0]
    assert run_policy(inst, "sorted-lp").tel == 1 + 6


def test_identical_requests_keep_index_order():
    inst = Instance.from_arrays([4, 4, 4, 4], [3, 3, 3, 3], 14)
    assert sorted_lp_order(inst).tolist() == [0, 1, 2, 3]


def test_keys_reproduce_the_lp_value():
    """sum_i (fractional C_i - a_i) is the LP objective, and the order sorts the keys."""
    inst = Instance.from_arrays(
        [3, 5, 6, 5, 1, 7, 0, 0, 5], [3, 4, 2, 1, 3, 2, 1, 5, 4], 15, [0, 2, 0, 1, 0, 3, 0, 0, 1]
    )
    sol = solve_lp(inst)
    c = sol.fractional_completion()
    assert (c - inst.arrival).sum() == pytest.approx(sol.value, abs=1e-6)
    assert sol.value == pytest.approx(lp_bound(inst).bound)
    assert (c >= inst.arrival + inst.decode - 1e-9).all()
    order = sorted_lp_order(inst)
    assert (np.diff(np.round(c[order], 6)) >= 0).all()


def test_fast_path_at_n_60():
    rng = np.random.default_rng(7)
    n = 60
    long = rng.random(n) < 0.2
    s = np.where(long, rng.integers(15, 31, n), rng.integers(1, 7, n))
    inst = Instance.from_arrays(s, rng.integers(1, 13, n), 50)
    t0 = time.perf_counter()
    sched = run_policy(inst, "sorted-lp")
    assert time.perf_counter() - t0 < 60  # a hang guard (about 1 s)
    assert sched.check().tel >= lp_bound(inst).bound - 1e-6


def test_too_large_full_lp_is_refused_and_auto_takes_the_aggregated_lp():
    inst = Instance.from_arrays([10] * 50, [400] * 50, 1000)
    with pytest.raises(LPTooLargeError, match="non-zeros"):
        sorted_lp_order(inst, max_nonzeros=10_000, lp="full")
    auto = sorted_lp_order(inst, max_nonzeros=10_000, max_iterations=5)
    assert auto.tolist() == sorted_lp_order(inst, lp="aggregated", max_iterations=5).tolist()


@pytest.mark.parametrize("bad", [0, -5, 1.5, 1e6, "100", True])
def test_max_nonzeros_accepts_only_positive_integers(bad):
    # max_nonzeros=0 used to mean "the default"; now only None does
    inst = Instance.from_arrays([9, 1, 3], [1, 7, 8], 22)
    for call in (
        lambda: sorted_lp_order(inst, max_nonzeros=bad),
        lambda: lp_completion_times(inst, max_nonzeros=bad),
        lambda: run_policy(inst, "sorted-lp", max_nonzeros=bad),
        lambda: solve_lp(inst, max_nonzeros=bad),
        lambda: lp_bound(inst, max_nonzeros=bad),
    ):
        with pytest.raises(ValueError, match=r"max_nonzeros must be a positive integer .* None"):
            call()


def test_max_nonzeros_none_is_the_default_and_small_limits_refuse():
    inst = Instance.from_arrays([9, 1, 3], [1, 7, 8], 22)
    assert sorted_lp_order(inst, max_nonzeros=None).tolist() == sorted_lp_order(inst).tolist()
    assert (
        sorted_lp_order(inst, max_nonzeros=np.int64(10**6)).tolist()
        == sorted_lp_order(inst).tolist()
    )
    with pytest.raises(LPTooLargeError):
        sorted_lp_order(inst, max_nonzeros=1, lp="full")


def test_aggregated_lp_orders_like_the_lp_when_it_converges():
    # ample memory: the aggregated LP converges at once, everything starts at round 0
    inst = Instance.from_arrays([0, 5, 2, 1, 3], [3, 1, 2, 1, 3], 100)
    assert sorted_lp_order(inst, lp="aggregated").tolist() == [1, 3, 2, 0, 4]


def test_aggregated_list_is_a_function_of_the_instance():
    rng = np.random.default_rng(3)
    n = 80
    inst = Instance.from_arrays(rng.integers(0, 30, n), rng.integers(1, 20, n), 120)
    first = run_policy(inst, "sorted-lp", lp="aggregated", max_iterations=4)
    again = run_policy(inst, "sorted-lp", lp="aggregated", max_iterations=4)
    assert first.info["order"].tolist() == again.info["order"].tolist()
    assert first.check().tel == again.tel


@pytest.mark.parametrize(
    "bad", [{"lp": "dual"}, {"max_iterations": 0}, {"max_iterations": 2.5}, {"max_passes": 0}]
)
def test_lp_options_are_checked(bad):
    inst = Instance.from_arrays([9, 1, 3], [1, 7, 8], 22)
    with pytest.raises(ValueError):
        lp_swap_order(inst, **bad)


def naive_adjacent_swaps(inst, order, max_passes):
    """Adjacent swaps with the executor re-run from scratch for every trial."""
    lst = list(order)
    tel = execute(inst, lst).tel
    for _ in range(max_passes):
        swapped = False
        for k in range(inst.n - 1):
            trial = lst[:k] + [lst[k + 1], lst[k]] + lst[k + 2 :]
            trial_tel = execute(inst, trial).tel
            if trial_tel < tel:
                lst, tel, swapped = trial, trial_tel, True
        if not swapped:
            break
    return lst


@settings(max_examples=150, deadline=None)
@given(instance_and_order(max_n=8, max_memory=24, max_decode=6))
def test_adjacent_swaps_equal_rerunning_the_executor(case):
    inst, order = case
    improved, info = adjacent_swaps(inst, order, max_passes=3)
    assert improved.tolist() == naive_adjacent_swaps(inst, order, 3)
    assert execute(inst, improved).tel <= execute(inst, order).tel
    assert info["passes"] <= 3


def test_lp_swap_never_worse_than_sorted_lp():
    rng = np.random.default_rng(5)
    n = 40
    inst = Instance.from_arrays(rng.integers(0, 30, n), rng.integers(1, 20, n), 60)
    lp = run_policy(inst, "sorted-lp")
    swap = run_policy(inst, "lp-swap")
    assert swap.check().tel <= lp.tel
