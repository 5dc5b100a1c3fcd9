"""1-bit SVF on the blind executor (SPEC section 11; arXiv 2606.22327): ``svf-1bit``.

Checked: the theory's constants from ``T``, hand-computed cases of the outliving rule (extend,
kill when the longer reservation does not fit, the ladder's last level when ``T`` is too small),
equality with a round-by-round reading of the rule written from the module docstring (random
instances with arrivals, both outliving rules), feasibility with every attempt, blindness with
options, the two-point instance and the option checks.
"""

from __future__ import annotations

import pytest
from conftest import instances
from hypothesis import given, settings
from hypothesis import strategies as st
from test_blind import assert_blind, two_point_spread

from lpsched.blind import BlindView
from lpsched.generators.two_point import two_point
from lpsched.instance import Instance
from lpsched.policies.registry import (
    POLICIES,
    PolicySelectionError,
    check_policy_options,
    run_policy,
)
from lpsched.policies.svf_1bit import OneBitSVF, one_bit_setting

SMALL = {"surrogate_short": 1, "surrogate_long": 2, "threshold": 1, "max_decode": 4}


def _runs(sched) -> list[tuple[int, ...]]:
    return sorted(tuple(r) for r in sched.runs.tolist())


def test_the_theory_constants_from_the_bound():
    # two_point: M = 256, every s = 96, so T = M - min s = 160 (the true max o_i, here)
    view = BlindView.of(two_point())
    st_ = one_bit_setting(view)
    assert (st_.max_decode, st_.threshold, st_.short, st_.long) == (160, 12, 4, 45)
    st_ = one_bit_setting(view, max_decode=10_000)
    assert (st_.threshold, st_.short, st_.long) == (100, 10, 1000)
    assert one_bit_setting(view, threshold=7, surrogate_long=3).threshold == 7
    assert POLICIES["svf-1bit"].blind.revealed(two_point(), max_decode=81) == ("class", 9)


def test_an_outlived_reservation_is_extended_or_killed():
    # M = 12; r0 and r1 both (s 4, o 3), long (o > 1); surrogate O_1 = 2, T = 4: ladder 2, 4, 8.
    # t=0: both reserve 4 + 2 = 6: 12 <= 12, both start. Round 2 holds 6 + 6 = 12.
    # t=2: both have emitted 2 tokens and not finished. Oldest first, then index: r0 would
    #      need 4 + 4 + r1's 6 = 14 > 12: killed, cut run (r0, 0, 2), queued with R = 4; r1
    #      then extends to 4 (6 + 8 = 14 - 6 = 8 <= 12). r0 needs 8 more: 16 > 12, waits.
    # t=3: r1 completes; r0 restarts (reserves 8), completes at 6. TEL = 6 + 3 = 9.
    inst = Instance.from_arrays([4, 4], [3, 3], 12)
    sched = run_policy(inst, "svf-1bit", **SMALL).check()
    assert _runs(sched) == [(0, 0, 2, 0), (0, 3, 6, 1), (1, 0, 3, 1)]
    assert sched.tel == 9 and (sched.info["kills"], sched.info["wasted_tokens"]) == (1, 2)
    # outlive="kill": both are killed at 2 and queued with R = 4 (volume 4 * 4 + 10 each); r0
    # restarts at 2 (8 <= 12), r1 does not fit beside it (16) and starts when r0 completes, 5.
    sched = run_policy(inst, "svf-1bit", outlive="kill", **SMALL).check()
    assert _runs(sched) == [(0, 0, 2, 0), (0, 2, 5, 1), (1, 0, 2, 0), (1, 5, 8, 1)]
    assert sched.tel == 13 and (sched.info["kills"], sched.info["wasted_tokens"]) == (2, 4)


def test_a_bound_below_the_decode_length_reaches_the_last_level():
    # M = 10, r0 (s 2, o 6) long, O_1 = 2, T = 3: ladder 2, 3, M - s = 8. Alone, it extends at
    # 2 (to 3) and at 3 (to 8) and completes at 6 without a kill.
    inst = Instance.from_arrays([2], [6], 10)
    opts = dict(SMALL, max_decode=3)
    sched = run_policy(inst, "svf-1bit", **opts).check()
    assert _runs(sched) == [(0, 0, 6, 1)] and sched.info["kills"] == 0
    assert sched.info["visits"] == 4  # 0, the wakes at 2 and 3, the completion at 6


def literal_one_bit(inst: Instance, options: dict) -> tuple[list[int], list[tuple[int, ...]]]:
    """The rule of the module docstring read one round at a time, with the true lengths:
    completions; outliving requests oldest first (extend if the reservations fit, else kill);
    then the queue by (surrogate volume, index) while the head's reservation fits."""
    s, o, a, M = inst.prefill.tolist(), inst.decode.tolist(), inst.arrival.tolist(), inst.memory
    outlive = options.get("outlive", "extend")
    setting = one_bit_setting(BlindView.of(inst), **{k: v for k, v in options.items()
                                                     if k != "outlive"})  # fmt: skip
    ladders = []
    for i in range(inst.n):
        long = o[i] > setting.threshold
        first = min(setting.long if long else setting.short, M - s[i])
        bound = min(setting.max_decode if long else setting.threshold, M - s[i])
        ladders.append(sorted({x for x in (first, bound, M - s[i]) if x >= first}))
    level = [0] * inst.n
    running: dict[int, int] = {}
    done: set[int] = set()
    runs, start = [], [0] * inst.n
    t = min(a)
    while len(done) < inst.n:
        for j in [j for j, p in running.items() if p + o[j] <= t]:
            runs.append((j, running[j], running.pop(j) + o[j], 1))
            start[j] = runs[-1][1]
            done.add(j)
        reserved = sum(s[j] + ladders[j][level[j]] for j in running)
        for j in sorted((j for j, p in running.items() if t - p == ladders[j][level[j]]),
                        key=lambda j: (running[j], j)):  # fmt: skip
            R, level[j] = ladders[j][level[j]], level[j] + 1
            if outlive == "extend" and reserved + ladders[j][level[j]] - R <= M:
                reserved += ladders[j][level[j]] - R
            else:
                reserved -= s[j] + R
                p = running.pop(j)
                if t > p:
                    runs.append((j, p, t, 0))

        def volume(i: int) -> tuple[int, int]:
            R = ladders[i][level[i]]
            return s[i] * R + R * (R + 1) // 2, i

        waiting = [i for i in range(inst.n) if a[i] <= t and i not in running and i not in done]
        for h in sorted(waiting, key=volume):
            if reserved + s[h] + ladders[h][level[h]] > M:
                break
            reserved += s[h] + ladders[h][level[h]]
            running[h] = t
        t += 1
    return start, sorted(runs)


OPTIONS = st.sampled_from(
    [{}, {"outlive": "kill"}, SMALL, dict(SMALL, outlive="kill"), dict(SMALL, max_decode=2)]
)


@settings(max_examples=200, deadline=None)
@given(instances(max_n=8, max_memory=30, max_decode=10), OPTIONS)
def test_equals_round_by_round_reading_and_is_feasible(inst, options):
    sched = run_policy(inst, "svf-1bit", **options).check()  # every attempt within M
    start, runs = literal_one_bit(inst, options)
    assert sched.start.tolist() == start
    assert _runs(sched) == runs
    assert sorted(sched.runs[sched.runs[:, 3] == 1][:, 0].tolist()) == list(range(inst.n))


@pytest.mark.parametrize("options", [{"outlive": "kill"}, SMALL, {"max_decode": 40}])
def test_blind_with_options(options):
    assert_blind(POLICIES["svf-1bit"].blind, two_point_spread(prefill=8), options)


def test_two_point():
    # shorts (surrogate 4) before longs (45, extended to 160 when outlived, alone): MC-SF's
    # 13,448, against fcfs and vllm's 185,892; with prefill 8, 4,787 (vllm 3,903, mcsf 2,966)
    sched = run_policy(two_point(), "svf-1bit").check()
    assert sched.tel == 13_448 == run_policy(two_point(), "mcsf").tel
    assert sched.info["kills"] == 0
    assert sched.tel < run_policy(two_point(), "vllm").tel == 185_892
    assert run_policy(two_point(prefill=8), "svf-1bit").check().tel == 4_787


def test_options_are_checked():
    with pytest.raises(PolicySelectionError, match="outlive must be one of extend, kill"):
        check_policy_options(["svf-1bit"], {"outlive": "wait"})
    with pytest.raises(PolicySelectionError, match="surrogate_short must be an integer >= 1"):
        check_policy_options(["svf-1bit"], {"surrogate_short": 0})
    with pytest.raises(PolicySelectionError, match="threshold must be an integer >= 0"):
        check_policy_options(["svf-1bit"], {"threshold": 2.5})
    with pytest.raises(ValueError, match="needs the class bit"):
        OneBitSVF(BlindView.of(two_point()))
