"""The clock's limits: an overflowing clock, idle rounds below the float spacing of ``tau``, a
time model that exits, and admission rounds beyond int64 are clear errors or exact answers."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from lpsched.instance import Instance
from lpsched.io import read_instance
from lpsched.policies.registry import POLICIES, PolicyError, register_policy, run_policy
from lpsched.policies.sorted_f_seconds import sorted_f_seconds_order
from lpsched.schedule import Schedule
from lpsched.timing import TimeModel, TimeModelError, to_seconds
from lpsched.timing.clock import ArrivalClock

MIX = Instance.from_arrays([2, 3, 1, 4], [3, 2, 4, 1], 12, [0, 0, 0, 0], name="mix4")
HUGE = "linear:base_s=1e308"
MIX12 = Path(__file__).parents[2] / "instances" / "exact" / "mix12-s1.json"


def _timed(arrival_s: list[float], prefill: int = 1) -> Instance:
    n = len(arrival_s)
    return Instance.from_arrays(
        [prefill] * n, [2] * n, 10, [0] * n, name="timed", arrival_s=arrival_s
    )


def test_an_overflowing_clock_is_one_error_not_inf():
    """Durations of 1e308 s summed to inf: to_seconds gave inf / NaN figures."""
    sched = run_policy(MIX, "fcfs")
    with pytest.raises(TimeModelError, match="the clock overflows: tau at round"):
        to_seconds(sched, HUGE)
    with pytest.raises(TimeModelError, match="the clock overflows"):
        run_policy(_timed([0.0, 1.0]), "online-fcfs", time_model=HUGE)
    with pytest.raises(TimeModelError, match="the clock overflows"):
        sorted_f_seconds_order(read_instance(MIX12), HUGE)
    secs = to_seconds(sched, "linear:base_s=1e300")  # large but finite: as before
    assert np.isfinite(secs.latency_s).all() and secs.stats()["tel_s"] > 0


def test_idle_rounds_below_the_float_spacing_of_tau():
    """An idle round of 5e-10 s after tau = 1e9 s: the 64-step search failed its assertion."""
    inst = Instance.from_arrays(
        [0, 0], [1, 1], 10, [0, 0], name="idle", arrival_s=[0.0, np.nextafter(1e9, np.inf)]
    )
    spec = (
        "linear:base_s=5e-10,prefill_token_s=0,prefill_token2_s=0,decode_request_s=0,kv_token_s=1e9"
    )
    sched = run_policy(inst, "online-fcfs", time_model=spec)
    secs = to_seconds(sched, spec)
    assert sched.start.tolist() == secs.admission_rounds(inst.arrival_s).tolist()
    assert (secs.latency_s > 0).all()


def _exits_when_busy(P, D, K):
    if np.any(D > 0):
        sys.exit(0)
    return np.full(np.shape(P), 0.01)


class _Boom(BaseException):
    pass


def _booms(P, D, K):
    raise _Boom("boom")


def _interrupts(P, D, K):
    raise KeyboardInterrupt


def test_a_time_model_that_exits_on_busy_rounds_is_reported_on_the_clock():
    """The clock's fast path caught only Exception: sys.exit(0) ended the run silently."""
    inst = _timed([0.0, 0.5, 3.0])
    with pytest.raises(TimeModelError, match=r"'leaver' called sys.exit\(0\)"):
        run_policy(inst, "online-fcfs", time_model=TimeModel("leaver", _exits_when_busy))
    with pytest.raises(TimeModelError, match="'boomer' failed: _Boom: boom"):
        run_policy(inst, "online-fcfs", time_model=TimeModel("boomer", _booms))
    clock = ArrivalClock(TimeModel("leaver", _exits_when_busy), np.array([0.0]))
    with pytest.raises(TimeModelError, match="called sys.exit"):
        clock.advance(3, lambda r0, r1: (np.ones(r1 - r0, np.int64),) * 2, 3)


def test_every_user_callable_has_one_guard_that_lets_ctrl_c_through():
    from lpsched.plugins import call_plugin

    with pytest.raises(ValueError, match=r"'f' failed: _Boom: boom"):
        call_plugin(_booms, (0, 0, 0), {}, who="'f'", returns="f returns", error=ValueError)
    with pytest.raises(KeyboardInterrupt):
        call_plugin(_interrupts, (0, 0, 0), {}, who="'f'", returns="f returns", error=ValueError)
    with pytest.raises(KeyboardInterrupt):
        TimeModel("ctrl-c", _interrupts).duration(1, 1, 1)
    saved = dict(POLICIES)
    try:
        register_policy("boom-policy", lambda inst: _booms(0, 0, 0))
        with pytest.raises(PolicyError, match="'boom-policy'.*failed: _Boom: boom"):
            run_policy(MIX, "boom-policy")
    finally:
        POLICIES.clear()
        POLICIES.update(saved)


def test_admission_rounds_beyond_int64_are_refused_never_negative():
    """An arrival 1e12 s away on idle rounds of 1e-300 s gave -9223372036854775800."""
    sched = Schedule(_timed([0.0, 1e12]), np.array([0, 5]))
    secs = to_seconds(sched, "linear:base_s=1e-300")
    with pytest.raises(ValueError, match=r"arrival_s of 1000000000000.0 s .* 10\^312"):
        secs.admission_rounds([1e12, 1e3])
    far = to_seconds(sched, "linear:base_s=1e-3").admission_rounds([1e12])
    assert far.tolist() == [int(far[0])] and far[0] > 2**40
