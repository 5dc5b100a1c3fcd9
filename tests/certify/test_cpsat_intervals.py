"""CP-SAT on the interval + time-indexed model: feasible schedules never worse than the input,
valid bounds (checked against the brute force and the shipped optima), arrivals, callbacks,
the size guard and the time limit."""

from __future__ import annotations

import _thread
import math
import threading
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference.brute_force import brute_force_tel, tiny_instances

from lpsched.certify.methods.cpsat_intervals import (
    _add_intervals,
    _classes,
    latency_caps,
    solve_cpsat_intervals,
)
from lpsched.formulations.horizon import horizon_t1
from lpsched.generators.small import scaled_mix
from lpsched.instance import Instance
from lpsched.io import read_instance
from lpsched.policies.local_search import best_heuristic
from lpsched.schedule import Schedule
from lpsched.solvers.progress import Observer, Progress
from lpsched.solvers.result import LPTooLargeError

SHIPPED = {  # proven optima (instances/README.md)
    "instances/exact/mix10-s1.json": 74,
    "instances/exact/mix12-s1.json": 114,
    "instances/exact/mix12-s4-online.json": 106,
}


def _fcfs(inst: Instance) -> Schedule:
    """A feasible but poor schedule: requests one after another in index order."""
    start = np.empty(inst.n, dtype=np.int64)
    t = 0
    for i in range(inst.n):
        start[i] = t = max(t, int(inst.arrival[i]))
        t += int(inst.decode[i])
    return Schedule(inst, start).check()


def _valid(res, inst: Instance, input_schedule: Schedule) -> None:
    """Every result: a checked schedule of ``inst`` not worse than the input, a bound of at
    least ``sum o`` and at most the TEL, and the status that the bound implies."""
    res.schedule.check()
    assert res.schedule.instance is inst
    assert res.objective == res.schedule.tel <= input_schedule.tel
    assert int(inst.decode.sum()) <= res.bound <= res.objective
    assert res.status == ("optimal" if math.ceil(res.bound - 1e-6) >= res.objective else "feasible")
    assert "error" not in res.info


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_instances(max_n=5))
def test_tiny_instances_against_the_brute_force(inst):
    opt = brute_force_tel(inst)
    given_ = _fcfs(inst)
    res = solve_cpsat_intervals(inst, given_, time_limit=30, threads=1)
    _valid(res, inst, given_)
    assert res.objective >= opt and res.bound <= opt
    assert res.status == "optimal" and res.objective == opt  # tiny: proven in milliseconds


def _max_latencies(inst: Instance, ub: int) -> np.ndarray:
    """The largest latency of each request over every feasible schedule with TEL <= ub, by
    enumeration (SPEC section 2 only); -1 where no such schedule exists."""
    s, o, a = inst.prefill.tolist(), inst.decode.tolist(), inst.arrival.tolist()
    n, M = inst.n, inst.memory
    mem = [0] * (max(a) + ub + 2)
    lat = [0] * n
    out = np.full(n, -1, dtype=np.int64)
    rest = [sum(o[i:]) for i in range(n)] + [0]

    def dfs(i: int, tel: int) -> None:
        if i == n:
            np.maximum(out, lat, out=out)
            return
        for p in range(a[i], a[i] + ub - tel - rest[i + 1] - o[i] + 1):
            if all(mem[p + j] + s[i] + j <= M for j in range(1, o[i] + 1)):
                for j in range(1, o[i] + 1):
                    mem[p + j] += s[i] + j
                lat[i] = p + o[i] - a[i]
                dfs(i + 1, tel + lat[i])
                for j in range(1, o[i] + 1):
                    mem[p + j] -= s[i] + j

    dfs(0, 0)
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_instances(max_n=4), st.integers(0, 3))
def test_latency_caps_hold_for_every_schedule_at_least_as_good(inst, extra):
    ub = brute_force_tel(inst) + extra
    caps = latency_caps(inst, ub)
    worst = _max_latencies(inst, ub)
    assert (worst >= inst.decode).all()  # an optimal schedule exists within ub
    assert (worst <= caps).all()
    # never looser than the waiting slack of the start windows
    assert (caps <= ub - (inst.decode.sum() - inst.decode)).all()


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_instances(max_n=5))
def test_the_interval_view_alone_is_exact(inst):
    # starts, the interval stack with its cumulative and the class order, without the
    # time-indexed rows: its optimum is the brute-force optimum (neither too loose nor too tight)
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    lo = inst.arrival.astype(np.int64)
    p = _add_intervals(model, inst, lo, horizon_t1(inst) - inst.decode, _classes(inst))
    model.minimize(sum(p) + int((inst.decode - inst.arrival).sum()))
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    assert solver.solve(model) == cp_model.OPTIMAL
    assert round(solver.objective_value) == brute_force_tel(inst)
    Schedule(inst, np.array([solver.value(v) for v in p])).check()


@pytest.mark.parametrize("path", sorted(SHIPPED))
def test_shipped_optima_reached_and_proven(path):
    inst = read_instance(path)
    given_ = best_heuristic(inst)
    res = solve_cpsat_intervals(inst, given_, time_limit=60, threads=1)
    _valid(res, inst, given_)
    assert res.status == "optimal" and res.objective == res.bound == SHIPPED[path]


def test_arrivals_away_from_zero_give_the_same_optimum():
    inst = read_instance("instances/exact/mix12-s4-online.json")
    late = inst.replace(arrival=inst.arrival + 1000)
    given_ = _fcfs(late)
    res = solve_cpsat_intervals(late, given_, time_limit=60, threads=1)
    _valid(res, late, given_)
    assert res.info["time_shift"] == 1000 + int(inst.arrival.min())
    assert res.status == "optimal" and res.objective == 106
    assert (res.schedule.start >= late.arrival).all()


class _Recording(Progress):
    """A quiet display that also records what the observer receives."""

    def __init__(self, schedules: list[Schedule], bounds: list[float]) -> None:
        super().__init__("quiet")
        self.schedules, self.bounds = schedules, bounds

    def on_incumbent(self, schedule: Schedule) -> None:
        self.schedules.append(schedule)
        super().on_incumbent(schedule)

    def on_bound(self, bound: float) -> None:
        self.bounds.append(bound)
        super().on_bound(bound)


def test_callbacks_report_each_strictly_better_value():
    inst = read_instance("instances/exact/mix10-s1.json")
    given_ = _fcfs(inst)
    schedules: list[Schedule] = []
    bounds: list[float] = []
    res = solve_cpsat_intervals(
        inst,
        given_,
        time_limit=60,
        threads=1,
        observer=(progress := _Recording(schedules, bounds)),
    )
    assert res.status == "optimal" and res.objective == 74
    assert progress.incumbent == progress.bound == 74
    tels = [s.check().tel for s in schedules]
    assert tels and tels[0] < given_.tel and tels[-1] == 74
    assert all(a > b for a, b in zip(tels, tels[1:], strict=False))
    assert res.info["solutions"] == len(schedules) and res.info["improved"]
    assert bounds and bounds[-1] == 74 and all(b <= 74 for b in bounds)
    assert all(a < b for a, b in zip(bounds, bounds[1:], strict=False))


def test_an_optimal_input_is_returned_as_it_is():
    inst = read_instance("instances/exact/mix10-s1.json")
    best = solve_cpsat_intervals(inst, _fcfs(inst), time_limit=60, threads=1).schedule
    res = solve_cpsat_intervals(inst, best, time_limit=60, threads=2)
    assert res.schedule is best and not res.info["improved"] and res.status == "optimal"


def test_identical_requests_are_handled():
    # five identical requests: the class order p_0 <= ... <= p_4 must keep the optimum
    inst = Instance.from_arrays([3] * 5, [3] * 5, 12, name="same")
    given_ = _fcfs(inst)
    res = solve_cpsat_intervals(inst, given_, time_limit=30, threads=1)
    _valid(res, inst, given_)
    assert res.status == "optimal" and res.objective == brute_force_tel(inst)


def test_size_guard_names_the_size():
    inst = read_instance("instances/exact/mix12-s1.json")
    with pytest.raises(LPTooLargeError, match=r"n = 12.*max_nonzeros = 1,000") as info:
        solve_cpsat_intervals(
            inst, best_heuristic(inst), time_limit=10, threads=1, max_nonzeros=1000
        )
    assert isinstance(info.value, ValueError) and "non-zeros" in str(info.value)


def test_a_build_cut_short_returns_the_input_and_the_trivial_bound():
    inst = read_instance("instances/exact/mix12-s1.json")
    given_ = _fcfs(inst)
    res = solve_cpsat_intervals(inst, given_, time_limit=1e-9, threads=1)
    assert res.schedule is given_ and res.bound == int(inst.decode.sum())
    assert res.status == "feasible" and "time limit" in res.info["stopped"]


@pytest.mark.parametrize(
    "kwargs, word",
    [
        ({"threads": 0}, "threads"),
        ({"threads": True}, "threads"),
        ({"time_limit": -1}, "time_limit"),
    ],
)
def test_bad_options_are_refused(kwargs, word):
    inst = read_instance("instances/exact/mix10-s1.json")
    kwargs = {"time_limit": 10, **kwargs}
    with pytest.raises(ValueError, match=word):
        solve_cpsat_intervals(inst, _fcfs(inst), **kwargs)


def test_ctrl_c_stops_cpsat_and_propagates():
    inst = scaled_mix(30, 0)
    fired: list[float] = []

    def ctrl_c() -> None:
        fired.append(time.perf_counter())
        _thread.interrupt_main()

    timer = threading.Timer(3.0, ctrl_c)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            solve_cpsat_intervals(inst, best_heuristic(inst), time_limit=120, threads=1)
    finally:
        timer.cancel()
    assert fired  # stopped by the Ctrl-C, not by the 120 s limit
    assert time.perf_counter() - fired[0] < 60  # a hang guard, from the Ctrl-C


def test_an_exception_in_a_callback_stops_cpsat_and_is_raised():
    inst = scaled_mix(20, 0)
    called: list[float] = []

    def boom(_sched: Schedule) -> None:
        called.append(time.perf_counter())
        raise RuntimeError("caller's callback failed")

    with pytest.raises(RuntimeError, match="caller's callback failed"):
        solve_cpsat_intervals(
            inst, _fcfs(inst), time_limit=120, threads=1, observer=Observer(on_incumbent=boom)
        )
    assert len(called) == 1  # the search stopped at the first failure
    assert time.perf_counter() - called[0] < 60  # a hang guard, from the failure
