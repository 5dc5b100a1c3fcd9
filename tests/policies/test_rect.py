"""``rect`` (SPEC section 11.3): doubling caps, kill and restart, queue by area budget."""

from __future__ import annotations

import numpy as np
from test_blind import assert_blind

from lpsched.generators.two_point import two_point
from lpsched.instance import Instance
from lpsched.policies.rect import RECT
from lpsched.policies.registry import POLICIES, run_policy


def spread(seed: int = 0, n: int = 60, memory: int = 240) -> Instance:
    """Two prompt lengths and decode lengths spread over 1..100: requests alike in ``s_i``
    that are still unfinished at any time, so the blindness check has swaps to try."""
    rng = np.random.default_rng(seed)
    s = np.where(np.arange(n) % 2 == 0, 4, 30)
    return Instance.from_arrays(s, rng.integers(1, 101, n), memory)


def test_a_kill_and_restart_by_hand():
    # M = 10; A (s 2, o 3), B (s 3, o 1), C (s 4, o 2). Caps 1, 2, 4, ...; an attempt with cap
    # c reserves s + c. t = 0: budgets 2 s c = 4 (A), 6 (B), 8 (C): A (3) and B (4) start,
    # C (5) does not fit (12 > 10). t = 1: B completes; A dies at its cap 1 and waits with cap
    # 2 (budget 8, ties by index: before C): A (4) and C (5) start. t = 2: C dies at cap 1,
    # restarts with cap 2 (reserves 6, 10 <= 10). t = 3: A dies at cap 2; with cap 4 it needs
    # 6 beside C's 6: waits. t = 4: C completes, A starts and completes at 7.
    inst = Instance.from_arrays([2, 3, 4], [3, 1, 2], 10)
    sched = RECT.run(inst, name="rect", record=True).check()
    assert sched.tel == 7 + 1 + 4 and sched.start.tolist() == [4, 0, 2]
    assert sorted(map(tuple, sched.runs.tolist())) == [
        (0, 0, 1, 0), (0, 1, 3, 0), (0, 4, 7, 1), (1, 0, 1, 1), (2, 1, 2, 0), (2, 2, 4, 1),
    ]  # fmt: skip
    assert sched.info["decisions"] == [
        (0, (), (0, 1)), (1, (0,), (0, 2)), (2, (2,), (2,)), (3, (0,), ()), (4, (), (0,)),
    ]  # fmt: skip
    assert (sched.info["kills"], sched.info["wasted_tokens"]) == (3, 4)


def test_the_last_cap_is_never_killed():
    # s + o = M: caps 1, 2, 4 then M - s = 5 (not 8), which covers o = 5
    sched = run_policy(Instance.from_arrays([3], [5], 8), "rect").check()
    assert [tuple(r) for r in sched.runs.tolist()][-1] == (0, 7, 12, 1)
    assert sched.info["kills"] == 3


def test_two_point_figures():
    assert run_policy(two_point(), "rect").check().tel == 22_076
    assert run_policy(two_point(prefill=8), "rect").check().tel == 9_960


def test_rect_is_blind_on_a_spread_instance():
    assert_blind(RECT, spread(), {})


def test_registered_as_blind():
    assert POLICIES["rect"].blind is RECT and POLICIES["rect"].options == ()
