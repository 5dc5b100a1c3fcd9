"""``response`` (SPEC section 11.4): phases of cap 2^r, each a staggered pipeline on a
surrogate prompt."""

from __future__ import annotations

import pytest
from test_blind import assert_blind
from test_rect import spread

from lpsched.generators.two_point import two_point
from lpsched.instance import Instance
from lpsched.policies.registry import check_policy_options, run_policy
from lpsched.policies.response import RESPONSE


def test_phases_by_hand():
    # M = 10, s = 2 for all, o = 1, 3, 2. Phase 0 (L = 1): peak 3K <= 10, K = 3, all start at
    # 0; r0 completes, r1 and r2 die at 1. Phase 1 (L = 2, offsets 0 and 1, peak 4 + 3 = 7):
    # r1 at 1, r2 at 2; r1 dies at 3, r2 completes at 4. Phase 2 (L = 4) begins when nothing
    # runs: r1 at 4, completes at 7.
    inst = Instance.from_arrays([2, 2, 2], [1, 3, 2], 10)
    sched = run_policy(inst, "response").check()
    assert sched.tel == 1 + 7 + 4 and sched.start.tolist() == [0, 4, 2]
    assert sorted(map(tuple, sched.runs.tolist())) == [
        (0, 0, 1, 1), (1, 0, 1, 0), (1, 1, 3, 0), (1, 4, 7, 1), (2, 0, 1, 0), (2, 2, 4, 1),
    ]  # fmt: skip


def test_the_surrogate_quantile_splits_a_phase():
    # M = 20, s = 1, 1, 10, 10, o = 1. q = 1: surrogate 10, width 1 (2 * 11 > 20): one at a
    # time, TEL 1 + 2 + 3 + 4. q = 0.5: surrogate 1 for r0, r1 (width 2, both at 0), then a
    # phase of r2, r3 with surrogate 10: TEL 1 + 1 + 2 + 3.
    inst = Instance.from_arrays([1, 1, 10, 10], [1, 1, 1, 1], 20)
    assert run_policy(inst, "response").check().tel == 10
    assert run_policy(inst, "response", surrogate_quantile=0.5).check().tel == 7


def test_a_window_beyond_the_cache_stops_at_m_minus_s():
    # s = 0 and 6, M = 10, o = 10 and 4: phase 3 would have L = 8 > M - 6; L = 4 finishes r1
    # and the surrogate of the next phase is 0
    sched = run_policy(Instance.from_arrays([0, 6], [10, 4], 10), "response").check()
    assert sched.start.tolist()[0] > sched.start.tolist()[1]


def test_two_point_figures():
    assert run_policy(two_point(), "response").check().tel == 22_262
    assert run_policy(two_point(prefill=8), "response").check().tel == 8_340


@pytest.mark.parametrize("q", [1.0, 0.5])
def test_response_is_blind_on_a_spread_instance(q):
    assert_blind(RESPONSE, spread(), {"surrogate_quantile": q})


@pytest.mark.parametrize("q", [0, 1.5, True, "max"])
def test_option_errors(q):
    with pytest.raises(ValueError, match=r"surrogate_quantile must be a number in \(0, 1\]"):
        check_policy_options(["response"], {"surrogate_quantile": q})
    with pytest.raises(ValueError, match="surrogate_quantile"):
        run_policy(two_point(), "response", surrogate_quantile=q)
