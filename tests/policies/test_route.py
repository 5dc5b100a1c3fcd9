"""``route`` (SPEC section 11.5): large requests to Rect, small ones prompt-heavy then
response-heavy, the three branches time-sliced in doubling stages."""

from __future__ import annotations

import numpy as np
import pytest
from test_blind import assert_blind

from lpsched.generators.two_point import two_point
from lpsched.instance import Instance
from lpsched.policies.registry import check_policy_options, run_policy
from lpsched.policies.route import ROUTE


def test_all_large_route_is_rect():
    # s = 96 > M / 4 = 64 for every request: only the large branch has work, its window never
    # ends, and route's schedule is rect's
    inst = two_point()
    route, rect = run_policy(inst, "route").check(), run_policy(inst, "rect").check()
    assert np.array_equal(route.start, rect.start) and np.array_equal(route.runs, rect.runs)
    assert route.tel == rect.tel == 22_076


def test_route_beats_fcfs_on_two_point_prefill_8():
    inst = two_point(prefill=8)
    tel = run_policy(inst, "route").check().tel
    assert tel < run_policy(inst, "fcfs").tel == 81_011
    # measured: 8,274, against vllm 3,903 and the clairvoyant mcsf 2,966
    assert tel == 8_274


def test_a_large_request_waits_for_the_prompt_heavy_window():
    # M = 16, Lambda = 4: r0 (s 8, o 2) is large, r1 (s 2, o 1) small. Stage 0: the
    # prompt-heavy window [0, 1) runs r1 (cap 1, completes at 1); the response-heavy one has no
    # work; the large window opens at 1, alone from then on: caps 1 (killed at 2), then 2
    # (completes at 4). rect alone runs both at 0: TEL 4 against route's 5.
    inst = Instance.from_arrays([8, 2], [2, 1], 16)
    sched = run_policy(inst, "route").check()
    assert sorted(map(tuple, sched.runs.tolist())) == [(0, 1, 2, 0), (0, 2, 4, 1), (1, 0, 1, 1)]
    assert run_policy(inst, "rect").tel == 4


def test_a_prompt_heavy_request_turns_response_heavy():
    # M = 16, s = 2: caps 1 and 2 = s_i on the prompt-heavy side; r1 (o 5) dies at cap 2 and
    # moves to the response-heavy side with the first cap above s_i, 4 (killed at 7), then 8
    inst = Instance.from_arrays([2, 2], [1, 5], 16)
    sched = run_policy(inst, "route").check()
    assert sorted(map(tuple, sched.runs.tolist())) == [
        (0, 0, 1, 1), (1, 0, 1, 0), (1, 1, 3, 0), (1, 3, 7, 0), (1, 7, 12, 1),
    ]  # fmt: skip


def _mixed(seed: int = 0, n: int = 60, memory: int = 240) -> Instance:
    """Prompts 4 and 30 (small) and 90 (large), decode lengths spread over 1..100."""
    rng = np.random.default_rng(seed)
    s = np.array([4, 30, 90])[np.arange(n) % 3]
    return Instance.from_arrays(s, rng.integers(1, 101, n), memory)


@pytest.mark.parametrize("options", [{}, {"stage_unit": 4, "large_fraction": 0.5}])
def test_route_is_blind_on_a_mixed_instance(options):
    assert_blind(ROUTE, _mixed(), options)


@pytest.mark.parametrize("seed", range(5))
def test_mixed_instances_are_feasible(seed):
    inst = _mixed(seed)
    for unit in (1, 3):
        run_policy(inst, "route", stage_unit=unit).check()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"large_fraction": 0}, r"large_fraction must be a number in \(0, 1\], got 0"),
        ({"large_fraction": "1/4"}, "large_fraction must be a number"),
        ({"stage_unit": 0}, r"stage_unit must be an integer in \[1, 2\^40\], got 0"),
        ({"stage_unit": 1.5}, "stage_unit must be an integer"),
        ({"surrogate_quantile": 2}, r"surrogate_quantile must be a number in \(0, 1\]"),
    ],
)
def test_option_errors(options, message):
    with pytest.raises(ValueError, match=message):
        check_policy_options(["route"], options)
    with pytest.raises(ValueError, match=message):
        run_policy(two_point(), "route", **options)
