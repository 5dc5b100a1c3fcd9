"""Sorted-LP (lpsched.policies.sorted_lp): the registry entry, the ordering rule, consistency of
the fractional completion times with the LP value, and the fast LP path."""

from __future__ import annotations

import time

import numpy as np
import pytest

from lpsched.instance import Instance
from lpsched.policies.registry import POLICIES, run_policy
from lpsched.policies.sorted_lp import lp_completion_times, sorted_lp_order
from lpsched.solvers.result import LPTooLargeError
from lpsched.solvers.solve import lp_bound, solve_lp


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


def test_too_large_lp_is_refused():
    inst = Instance.from_arrays([10] * 50, [400] * 50, 1000)
    with pytest.raises(LPTooLargeError, match="non-zeros"):
        sorted_lp_order(inst, max_nonzeros=10_000)


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
        sorted_lp_order(inst, max_nonzeros=1)
