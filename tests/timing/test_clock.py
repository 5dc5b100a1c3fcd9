"""The executors' clock (:class:`lpsched.timing.clock.ArrivalClock`) is ``to_seconds``'s ``tau``
bit for bit, chunk boundaries included, and :meth:`ScheduleSeconds.admission_rounds` inverts
it (SPEC section 10)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lpsched.timing.clock as clock_module
import lpsched.timing.seconds as seconds_module
from lpsched.generators.arrivals import poisson_arrival_seconds
from lpsched.generators.workloads import generate
from lpsched.instance import Instance
from lpsched.policies.registry import CLOCK_POLICIES, run_policy
from lpsched.schedule import Schedule
from lpsched.timing import TimeModelError, time_model, to_seconds
from lpsched.timing.clock import NOT_ARRIVED, ArrivalClock

#: Coefficients that are not binary fractions, so that sums round.
ODD = time_model(
    "linear",
    base_s=0.0123,
    prefill_token_s=1.7e-4,
    prefill_token2_s=3e-9,
    decode_request_s=3.1e-4,
    kv_token_s=2.3e-7,
)


def _timed(n: int, rate_s: float, seed: int = 0) -> Instance:
    inst = generate("conversation", n, 16492, seed=seed)
    alpha = poisson_arrival_seconds(n, rate_s, np.random.default_rng(seed))
    return inst.replace(arrival_s=alpha)


@pytest.mark.parametrize("chunk", [None, 5, 64])
def test_executor_clock_is_to_seconds_bit_for_bit(monkeypatch, chunk):
    if chunk is not None:  # busy rounds summed in chunks: the boundaries must agree
        monkeypatch.setattr(seconds_module, "CHUNK_ROUNDS", chunk)
        monkeypatch.setattr(clock_module, "CHUNK_ROUNDS", chunk)
    for rate in (0.5, 4.0, 40.0):  # idle gaps to overload
        inst = _timed(250, rate, seed=int(rate))
        for policy in CLOCK_POLICIES:
            sched = run_policy(inst, policy, time_model=ODD).check()
            secs = to_seconds(sched, ODD)
            a = sched.instance.arrival
            assert np.array_equal(secs.admission_rounds(inst.arrival_s), a), (rate, policy)
            before = secs.tau_at(np.maximum(a - 1, 0))
            assert np.all((a == 0) | (before < inst.arrival_s)), (rate, policy)
            assert np.all(secs.tau_at(a) >= inst.arrival_s)


def test_admission_rounds_by_hand():
    # one request (s 2, o 3) started at 0 on linear base 1, prefill 0.5: d(1) = 2, then 1 s;
    # idle rounds after C = 3 last 1 s: tau = 0, 2, 3, 4, 5, ... (tau(r) = r + 1 from r = 1)
    inst = Instance.from_arrays([2], [3], 8)
    model = time_model(
        "linear",
        base_s=1.0,
        prefill_token_s=0.5,
        prefill_token2_s=0.0,
        decode_request_s=0.0,
        kv_token_s=0.0,
    )
    secs = to_seconds(Schedule(inst, [0]), model)
    got = secs.admission_rounds([0.0, -1.0, 0.5, 2.0, 2.01, 3.0, 4.5, 10.0, 1e6])
    assert got.tolist() == [0, 0, 1, 1, 2, 2, 4, 9, 999_999]
    assert secs.admission_rounds(np.zeros((2, 2))).shape == (2, 2)
    with pytest.raises(ValueError, match="finite"):
        secs.admission_rounds([np.nan])


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.integers(0, 12), min_size=1, max_size=6),
    st.lists(st.floats(0, 40, allow_nan=False), min_size=1, max_size=8),
)
def test_admission_rounds_is_the_first_round_reaching(starts, alphas):
    inst = Instance.from_arrays([1] * len(starts), [2] * len(starts), 100)
    secs = to_seconds(Schedule(inst, starts), ODD)
    p = secs.admission_rounds(alphas)
    assert np.all(secs.tau_at(p) >= alphas)
    assert np.all((p == 0) | (secs.tau_at(np.maximum(p - 1, 0)) < alphas))


def test_idle_clock_in_closed_form():
    # nothing ever runs: tau(r) = r f(0,0,0); arrivals on and between round ends
    idle = ODD.idle_s
    alpha = np.array([0.0, idle, 3 * idle, 2.5 * idle, 1e3, 7.77])
    clock = ArrivalClock(ODD, alpha)
    assert clock.rounds[0] == 0 and clock.assigned == 1
    end = clock.advance(None, lambda r0, r1: (np.zeros(0), np.zeros(0)), 0, stop=1e3)
    assert clock.assigned == alpha.size
    expect = [int(np.argmax(np.arange(200_000) * idle >= a)) for a in alpha]
    assert clock.rounds == expect
    assert end == expect[4] and clock.tau == end * idle


def test_advance_stops_at_a_limit_before_the_arrival():
    clock = ArrivalClock(ODD, np.array([5.0]))
    assert clock.rounds == [NOT_ARRIVED]
    assert clock.advance(10, lambda r0, r1: (np.zeros(0), np.zeros(0)), 0, stop=5.0) == 10
    assert clock.rounds == [NOT_ARRIVED] and clock.t == 10


def test_an_arrival_beyond_round_2_to_the_40_is_refused():
    inst = Instance.from_arrays([1, 1], [1, 1], 4, arrival_s=[0.0, 2.0**40])
    with pytest.raises(TimeModelError, match="2\\^40"):
        run_policy(inst, "online-fcfs", time_model="linear")
