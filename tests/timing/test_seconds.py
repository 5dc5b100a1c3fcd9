"""A schedule in seconds (SPEC section 10): ``round_loads`` and ``to_seconds``.

Checked: ``unit`` gives back every round figure exactly (the default instance and random small
instances, for list policies, ``vllm`` with preemption and ``amin`` with eviction); the loads
and the clock equal a round-by-round reading of the SPEC text under random ``linear``
coefficients; a hand-computed three-request example with an idle round; a ``vllm`` preemption
whose restart pays its prefill again; idle gaps of 2^40 rounds cost no memory; and the guards
(too many busy rounds, arrivals in seconds).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import instances
from hypothesis import given, settings
from hypothesis import strategies as st

from lpsched.generators.intervals import multiplicative
from lpsched.instance import Instance
from lpsched.io import default_instance
from lpsched.policies.registry import run_policy
from lpsched.policies.vllm import vllm
from lpsched.schedule import Schedule, latency_stats
from lpsched.timing import TimeModel, round_loads, time_model, to_seconds
from lpsched.timing.builtin import linear

POLICIES = ("fcfs", "mcsf", "sorted-f", "mcsf+backfill", "vllm", "vllm-sf", "amin", "amax")


def reference(schedule: Schedule, model: TimeModel):
    """SPEC section 10 read literally, one round at a time over every run: the loads, the
    clock tau(0..T) and each request's latency, TTFT and TPOT."""
    inst = schedule.instance
    if schedule.runs is None:
        runs = [(i, int(schedule.start[i]), int(schedule.completion[i])) for i in range(inst.n)]
    else:
        runs = [(int(r), int(p), int(e)) for r, p, e, _ in schedule.runs.tolist()]
    T = schedule.makespan
    P, D, K = [0] * T, [0] * T, [0] * T
    for t in range(1, T + 1):
        for i, p, end in runs:
            s = int(inst.prefill[i])
            if p < t <= end:
                D[t - 1] += 1
                K[t - 1] += s + t - p
                if t == p + 1:
                    P[t - 1] += s
    tau = [0.0]
    for t in range(T):
        tau.append(tau[-1] + model.duration(P[t], D[t], K[t]))
    lat, ttft, tpot = [], [], []
    for i in range(inst.n):
        a, p, c, o = (
            int(x[i]) for x in (inst.arrival, schedule.start, schedule.completion, inst.decode)
        )
        lat.append(tau[c] - tau[a])
        ttft.append(tau[p + 1] - tau[a])
        tpot.append((tau[c] - tau[p + 1]) / (o - 1) if o > 1 else math.nan)
    return (P, D, K), tau, lat, ttft, tpot


def assert_round_figures(schedule: Schedule) -> None:
    """Under ``unit`` every figure in seconds is the round figure, exactly."""
    sec = to_seconds(schedule, "unit")
    inst = schedule.instance
    assert sec.latency_s.tolist() == schedule.latency.tolist()
    assert sec.ttft_s.tolist() == (schedule.start + 1 - inst.arrival).tolist()
    multi = inst.decode > 1
    assert np.all(sec.tpot_s[multi] == 1.0) and np.all(np.isnan(sec.tpot_s[~multi]))
    assert sec.arrival_s.tolist() == inst.arrival.tolist()
    rounds, tau = sec.tau_profile()
    assert tau.tolist() == rounds.tolist()
    fig, stats = sec.stats(), latency_stats(schedule)
    assert fig["tel_s"] == stats["tel"] == schedule.tel
    for key in ("mean_latency", "p50_latency", "p90_latency", "p99_latency"):
        assert fig[key + "_s"] == stats[key], key
    assert fig["throughput_tokens_s"] == stats["token_throughput"]
    assert fig["throughput_requests_s"] == stats["throughput"]
    assert fig["makespan_s"] == stats["makespan"] == schedule.makespan


@pytest.mark.parametrize("policy", ["fcfs", "mcsf", "sorted-f", "vllm"])
def test_unit_gives_back_the_round_figures_on_the_default(policy):
    sched = run_policy(default_instance(), policy)
    assert_round_figures(sched)
    if policy == "vllm":
        assert sched.evictions > 0  # preemptions: cut runs and restarts


def test_unit_gives_back_the_round_figures_with_eviction():
    inst = multiplicative(default_instance(), 0.5, seed=0)
    sched = run_policy(inst, "amin")
    assert sched.evictions > 0
    assert_round_figures(sched)


@settings(max_examples=60, deadline=None)
@given(
    instances(max_n=8, max_memory=30, max_decode=8, max_arrival=12),
    st.sampled_from(POLICIES),
    st.floats(0.0, 0.5),
    st.integers(0, 2**16),
)
def test_unit_and_linear_equal_the_round_by_round_reading(inst, policy, eps, seed):
    if policy in ("amin", "amax"):
        inst = multiplicative(inst, eps, seed=seed)
    sched = run_policy(inst, policy).check()
    assert_round_figures(sched)
    rng = np.random.default_rng(seed)
    model = time_model(
        "linear",
        base_s=float(rng.uniform(0.001, 0.1)),
        prefill_token_s=float(rng.uniform(0, 0.01)),
        prefill_token2_s=float(rng.uniform(0, 1e-4)),
        decode_request_s=float(rng.uniform(0, 0.01)),
        kv_token_s=float(rng.uniform(0, 0.001)),
    )
    (P, D, K), tau, lat, ttft, tpot = reference(sched, model)
    got = round_loads(sched)
    assert [x.tolist() for x in got] == [P, D, K]
    assert np.array_equal(got[2], sched.memory_at(np.arange(1, sched.makespan + 1)))
    sec = to_seconds(sched, model)
    np.testing.assert_allclose(sec.tau_profile()[1], tau, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(sec.latency_s, lat, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(sec.ttft_s, ttft, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(sec.tpot_s, tpot, rtol=1e-12, atol=1e-12)  # NaN where o_i = 1


def test_linear_hand_computed_three_requests():
    """Three requests, M = 20, (s, o, a): r0 (2, 2, 0), r1 (3, 1, 0), r2 (1, 2, 1), started at
    p = 0, 0, 3; so r0 runs in rounds 1-2 (holding 3, 4 tokens), r1 in round 1 (4 tokens), r2
    in rounds 4-5 (2, 3 tokens), and round 3 is idle.

    linear: base_s = 0.1, prefill_token_s = 0.01, prefill_token2_s = 0.001,
    decode_request_s = 0.02, kv_token_s = 0.005.

    ===== ========================= === === === ====================================== =====
    round who                         P_t D_t K_t d(t)                                   tau
    ===== ========================= === === === ====================================== =====
    1     r0, r1 prefill + 1st token  5   2   7 0.1 + 0.05 + 0.025 + 0.04 + 0.035 = 0.25 0.25
    2     r0                          0   1   4 0.1 + 0.02 + 0.02 = 0.14                  0.39
    3     idle                        0   0   0 f(0, 0, 0) = 0.1                          0.49
    4     r2 prefill + 1st token      1   1   2 0.1 + 0.01 + 0.001 + 0.02 + 0.01 = 0.141  0.631
    5     r2                          0   1   3 0.1 + 0.02 + 0.015 = 0.135                0.766
    ===== ========================= === === === ====================================== =====

    alpha = tau(a) = 0, 0, tau(1) = 0.25. Latency: r0 tau(2) = 0.39, r1 tau(1) = 0.25,
    r2 tau(5) - 0.25 = 0.516 (TEL 1.156 s). TTFT: r0 tau(1) = 0.25, r1 0.25,
    r2 tau(4) - 0.25 = 0.381. TPOT: r0 (tau(2) - tau(1)) / 1 = 0.14, r1 none (o = 1),
    r2 (tau(5) - tau(4)) / 1 = 0.135.
    """
    inst = Instance.from_arrays([2, 3, 1], [2, 1, 2], 20, [0, 0, 1], name="three")
    sched = Schedule(inst, [0, 0, 3]).check()
    model = time_model(
        "linear",
        base_s=0.1,
        prefill_token_s=0.01,
        prefill_token2_s=0.001,
        decode_request_s=0.02,
        kv_token_s=0.005,
    )
    P, D, K = round_loads(sched)
    assert (P.tolist(), D.tolist(), K.tolist()) == (
        [5, 0, 0, 1, 0],
        [2, 1, 0, 1, 1],
        [7, 4, 0, 2, 3],
    )
    assert model.durations(P, D, K) == pytest.approx([0.25, 0.14, 0.1, 0.141, 0.135])
    sec = to_seconds(sched, model)
    assert sec.tau_profile()[1] == pytest.approx([0, 0.25, 0.39, 0.49, 0.631, 0.766])
    assert sec.latency_s == pytest.approx([0.39, 0.25, 0.516])
    assert sec.ttft_s == pytest.approx([0.25, 0.25, 0.381])
    assert sec.tpot_s[[0, 2]] == pytest.approx([0.14, 0.135]) and math.isnan(sec.tpot_s[1])
    stats = sec.stats()
    assert stats["tel_s"] == pytest.approx(1.156)
    assert stats["mean_latency_s"] == pytest.approx(1.156 / 3)
    assert stats["mean_ttft_s"] == pytest.approx((0.25 + 0.25 + 0.381) / 3)
    assert stats["mean_tpot_s"] == pytest.approx((0.14 + 0.135) / 2)
    assert stats["makespan_s"] == pytest.approx(0.766)
    assert stats["throughput_tokens_s"] == pytest.approx(5 / 0.766)  # 5 tokens over 0 .. tau(5)
    assert sec.idle_s == model.idle_s == pytest.approx(0.1)


def test_a_preempted_request_pays_its_prefill_again():
    """The vllm hand case of tests/policies/test_vllm.py: M = 10, (s, o): r0 (3, 4),
    r1 (1, 1), r2 (1, 4), r3 (4, 1); runs r0 [0, 4], r1 [0, 1], r2 [0, 2] cut, r2 [3, 7],
    r3 [4, 5].

    ===== ================================== === === ==== ========= ===
    round running (first round: prefill)      P_t D_t K_t  d = 1 + P tau
    ===== ================================== === === ==== ========= ===
    1     r0*, r1*, r2* (cut run)              5   3   8   6         6
    2     r0, r2 (cut run)                     0   2   8   1         7
    3     r0                                   0   1   6   1         8
    4     r0, r2* (restart: s = 1 again)       1   2   9   2         10
    5     r2, r3*                              4   2   8   5         15
    6     r2                                   0   1   4   1         16
    7     r2                                   0   1   5   1         17
    ===== ================================== === === ==== ========= ===

    With d = 1 + P (linear: base_s = 1, prefill_token_s = 1, the rest 0): r2's latency is
    tau(7) = 17 s (16 if the restart paid nothing), its TTFT tau(4) = 10 s (counted to the
    first token of its final run), its TPOT (17 - 10) / 3 s; r3's latency tau(5) = 15 s.
    """
    inst = Instance.from_arrays([3, 1, 1, 4], [4, 1, 4, 1], 10, name="hand")
    sched = vllm(inst).check()
    assert sched.runs is not None and sched.evictions == 1
    P, D, K = round_loads(sched)
    assert P.tolist() == [5, 0, 0, 1, 4, 0, 0]
    assert P.sum() == inst.prefill.sum() + inst.prefill[2]
    assert D.tolist() == [3, 2, 1, 2, 2, 1, 1]
    assert K.tolist() == [8, 8, 6, 9, 8, 4, 5]
    model = time_model(
        "linear",
        base_s=1.0,
        prefill_token_s=1.0,
        prefill_token2_s=0.0,
        decode_request_s=0.0,
        kv_token_s=0.0,
    )
    sec = to_seconds(sched, model)
    assert sec.tau_profile()[1].tolist() == [0, 6, 7, 8, 10, 15, 16, 17]
    assert sec.latency_s.tolist() == [10, 6, 17, 15]
    assert sec.ttft_s.tolist() == [6, 6, 10, 15]
    assert sec.tpot_s[2] == pytest.approx(7 / 3)


def test_idle_gaps_of_2_to_the_40_rounds_are_compressed():
    """Arrivals at 0, 2^39 and 2^40 - 10: the worker is busy 2 + 3 + 1 rounds; the idle
    rounds between cost f(0, 0, 0) each and no memory. With d = 0.5 + 0.25 P: r0 (s 1, o 2)
    lasts 0.75 + 0.5 s, r1 (s 2, o 3) 1.0 + 0.5 + 0.5 s, r2 (s 0, o 1) 0.5 s."""
    last = 2**40 - 10
    inst = Instance.from_arrays([1, 2, 0], [2, 3, 1], 10, [0, 2**39, last])
    sched = Schedule(inst, inst.arrival).check()
    assert sched.makespan == last + 1
    model = time_model(
        "linear",
        base_s=0.5,
        prefill_token_s=0.25,
        prefill_token2_s=0.0,
        decode_request_s=0.0,
        kv_token_s=0.0,
    )
    sec = to_seconds(sched, model)
    assert sec.busy_tau.size == 6 and sec.busy_first.tolist() == [1, 2**39 + 1, last + 1]
    assert sec.tau_at([0, 1, 2, 3]).tolist() == [0.0, 0.75, 1.25, 1.75]
    assert sec.latency_s.tolist() == [1.25, 2.0, 0.5]
    assert sec.ttft_s.tolist() == [0.75, 1.0, 0.5]
    assert sec.arrival_s[1] == 1.25 + (2**39 - 2) * 0.5
    assert sec.makespan_s == 0.5 * (last + 1) + 0.25 * 3  # exact in float64
    unit = to_seconds(sched, "unit")
    assert unit.latency_s.tolist() == sched.latency.tolist()
    assert unit.makespan_s == last + 1
    with pytest.raises(ValueError, match="has 1,099,511,627,767 rounds.*max_rounds"):
        round_loads(sched)
    with pytest.raises(ValueError, match="max_rounds"):
        sec.tau_profile()


def test_too_many_busy_rounds_are_refused_with_a_message():
    inst = Instance.from_arrays([0], [1000], 2000)
    sched = Schedule(inst, [0])
    with pytest.raises(ValueError, match="busy in 1,000 rounds.*max_rounds = 999"):
        to_seconds(sched, "unit", max_rounds=999)
    assert to_seconds(sched, "unit", max_rounds=1000).makespan_s == 1000


def test_chunks_join_up(monkeypatch):
    """The loads and the clock do not depend on the chunk size."""
    import lpsched.timing.seconds as seconds

    sched = run_policy(default_instance(), "vllm")
    whole = to_seconds(sched, "linear")
    loads = round_loads(sched)
    monkeypatch.setattr(seconds, "CHUNK_ROUNDS", 7)
    chunked = to_seconds(sched, "linear")
    np.testing.assert_allclose(chunked.busy_tau, whole.busy_tau, rtol=1e-12)
    assert all(np.array_equal(a, b) for a, b in zip(round_loads(sched), loads, strict=True))


def test_arrivals_in_seconds():
    inst = Instance.from_arrays([0, 0], [2, 2], 10, [0, 1])
    sched = Schedule(inst, [0, 1])
    sec = to_seconds(sched, "unit", arrival_s=[0.0, 0.25])
    assert sec.latency_s.tolist() == [2.0, 2.75] and sec.ttft_s.tolist() == [1.0, 1.75]
    with pytest.raises(ValueError, match="arrival_s must give 2 finite"):
        to_seconds(sched, "unit", arrival_s=[0.0, math.inf])
    with pytest.raises(ValueError, match="arrival_s must give 2 finite"):
        to_seconds(sched, "unit", arrival_s=[0.0])
    late = to_seconds(sched, "unit", arrival_s=[5.0, 5.0])  # after the last completion
    with pytest.raises(ValueError, match="busy span is -2.0 s"):
        late.stats()


def test_the_schedule_is_unchanged_and_the_result_read_only():
    sched = run_policy(default_instance(), "mcsf")
    before = sched.start.copy()
    sec = to_seconds(sched, "linear")
    assert np.array_equal(sched.start, before)
    for arr in (sec.latency_s, sec.ttft_s, sec.tpot_s, sec.busy_tau):
        with pytest.raises(ValueError):
            arr[0] = 0.0


def test_linear_with_base_s_alone_is_a_fixed_round():
    sched = run_policy(default_instance(), "sorted-f")
    fixed = time_model(
        "linear",
        base_s=0.02,
        prefill_token_s=0,
        prefill_token2_s=0,
        decode_request_s=0,
        kv_token_s=0,
    )
    sec = to_seconds(sched, fixed)
    np.testing.assert_allclose(sec.latency_s, 0.02 * sched.latency, rtol=1e-9)
    assert linear(np.array([3]), np.array([1]), np.array([5]), 0.02, 0, 0, 0, 0).tolist() == [0.02]


def test_a_malformed_run_before_round_1_still_reads_as_memory_at():
    """A run record that starts before round 0 (refused by ``violations``, read by ``lpsched
    check``): its rounds from 1 on hold s + t - p tokens, and its prefill round, before round
    1, is not counted."""
    inst = Instance.from_arrays([2, 1], [3, 2], 20)
    runs = [[0, -2, 1, 0], [0, 1, 4, 1], [1, 0, 2, 1]]
    sched = Schedule(inst, [1, 0], runs=runs)
    assert sched.violations()
    P, D, K = round_loads(sched)
    assert K.tolist() == sched.memory_at([1, 2, 3, 4]).tolist() == [5 + 2, 3 + 3, 4, 5]
    assert P.tolist() == [1, 2, 0, 0] and D.tolist() == [2, 2, 1, 1]
