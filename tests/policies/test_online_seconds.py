"""Online executors with arrivals in seconds (SPEC section 10): ``online-*``, ``vllm``, ``vllm-sf``
admit request ``i`` at decision time ``p`` only once ``alpha_i <= tau(p)`` on the clock of the
rounds they run.

Checked: ``unit`` with integer ``alpha_i`` gives today's round schedules exactly; random
``linear`` models against a literal round-by-round reading of the rule whose clock is
:func:`lpsched.timing.to_seconds` of the runs made so far; the schedule is the round
executor's on its own admission rounds, which ``to_seconds`` recomputes exactly; a hand-computed
3-request case where the model changes an admission; a hand-computed ``vllm`` case whose
restart pays its prefill again; no effect without ``arrival_s``.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import instances
from hypothesis import given, settings
from hypothesis import strategies as st

from lpsched.instance import Instance
from lpsched.policies.online import execute_online, online_mcsf, online_sorted_f
from lpsched.policies.planners import KeyPlanner, SortedFPlanner
from lpsched.policies.registry import CLOCK_POLICIES, run_policy
from lpsched.policies.sorted_f import phase1_batches
from lpsched.policies.vllm import execute_preemptive, vllm, vllm_sf
from lpsched.schedule import Schedule
from lpsched.timing import TimeModel, time_model, to_seconds

ONLINE = ("online-fcfs", "online-mcsf", "online-sorted-f")
ALL = (*ONLINE, "vllm", "vllm-sf")


def _linear(base: float, prefill: float, decode: float = 0.0, kv: float = 0.0) -> TimeModel:
    return time_model(
        "linear",
        base_s=base,
        prefill_token_s=prefill,
        prefill_token2_s=0.0,
        decode_request_s=decode,
        kv_token_s=kv,
    )


def _runs(sched: Schedule) -> list[tuple[int, ...]]:
    if sched.runs is None:
        ends = sched.completion.tolist()
        return sorted((i, p, ends[i], 1) for i, p in enumerate(sched.start.tolist()))
    return sorted(tuple(r) for r in sched.runs.tolist())


def _opts(policy: str) -> dict:
    return {"solver": "dp"} if policy == "online-sorted-f" else {}


# ---------------------------------------------------------------------- unit = rounds
@settings(max_examples=150, deadline=None)
@given(instances(max_n=8, max_arrival=10), st.sampled_from([None, 1, 3]))
def test_unit_with_integer_seconds_is_the_round_schedule(inst, replan_every):
    timed = inst.replace(arrival_s=inst.arrival.astype(float))
    for policy in ALL:
        opts = _opts(policy)
        if policy in ONLINE:
            opts["replan_every"] = replan_every
        rounds = run_policy(inst, policy, **opts)
        clock = run_policy(timed, policy, time_model="unit", **opts).check()
        assert clock.start.tolist() == rounds.start.tolist(), policy
        assert _runs(clock) == _runs(rounds), policy
        assert clock.instance.arrival.tolist() == inst.arrival.tolist(), policy
        assert clock.info["time_model"].name == "unit"


def test_unit_on_generated_workloads_is_the_round_schedule():
    from lpsched.generators.arrivals import nominal_capacity
    from lpsched.generators.workloads import generate

    base = generate("conversation", 400, 16492, seed=3)
    cap = nominal_capacity(base.prefill, base.decode, 16492)
    for load in (0.5, 1.5):
        inst = generate("conversation", 400, 16492, seed=3, arrival_rate=load * cap)
        timed = inst.replace(arrival_s=inst.arrival.astype(float))
        for policy in ALL:
            rounds = run_policy(inst, policy)
            clock = run_policy(timed, policy, time_model="unit")
            assert np.array_equal(clock.start, rounds.start), (load, policy)
            assert _runs(clock) == _runs(rounds), (load, policy)


def test_no_effect_without_arrival_s_or_without_a_model():
    inst = Instance.from_arrays([3, 1, 4, 2], [2, 3, 1, 2], 9, [0, 1, 1, 4])
    timed = inst.replace(arrival_s=[0.0, 30.0, 0.5, 2.0])
    for policy in ALL:
        plain = run_policy(inst, policy)
        for other in (
            run_policy(inst, policy, time_model="linear"),  # no arrival_s: rounds
            run_policy(timed, policy),  # no model: rounds
        ):
            assert other.start.tolist() == plain.start.tolist()
            assert other.instance.arrival.tolist() == [0, 1, 1, 4]
            assert "time_model" not in other.info


# ---------------------------------------------------------------------- literal references
def _tau(inst: Instance, runs: list[tuple[int, int, int]], t: int, model: TimeModel) -> float:
    """``tau(t)`` of the runs made so far, ``(request, start, end)``, read by ``to_seconds``
    (rounds ``<= t`` depend on these runs alone)."""
    plain = inst.replace(arrival_s=None, arrival=np.zeros(inst.n, dtype=np.int64))
    rows = np.asarray([(i, p, e, 1) for i, p, e in runs], dtype=np.int64).reshape(-1, 4)
    sched = Schedule(plain, np.zeros(inst.n, dtype=np.int64), runs=rows)
    return float(to_seconds(sched, model).tau_at(t))


def reference_online(inst: Instance, policy: str, model: TimeModel, H: int | None) -> list[int]:
    """SPEC sections 5 and 10 literally, one decision time ``t`` at a time: request ``i`` is
    arrived from the first ``t`` with ``alpha_i <= tau(t)`` (``tau`` by ``to_seconds`` of the
    runs so far), visible from the next multiple of ``H``; re-plan when new ones become
    visible; walk the list, admitting while the brute-force memory check passes."""
    s, o, alpha = inst.prefill.tolist(), inst.decode.tolist(), inst.arrival_s.tolist()
    M, n = inst.memory, inst.n
    start: list[int | None] = [None] * n
    arrived: list[int | None] = [None] * n
    plan: list[int] = []
    seen: set[int] = set()
    t = 0
    while None in start:
        tau = _tau(inst, [(j, p, p + o[j]) for j, p in enumerate(start) if p is not None], t, model)
        for i in range(n):
            if arrived[i] is None and alpha[i] <= tau:
                arrived[i] = t
        waiting = [
            i
            for i in range(n)
            if start[i] is None
            and arrived[i] is not None
            and (H is None or -(-arrived[i] // H) * H <= t)
        ]
        if set(waiting) - seen:
            seen |= set(waiting)
            if policy == "online-sorted-f":
                sub = inst.subset(waiting)
                plan = [waiting[j] for b in phase1_batches(sub, "dp") for j in b.tolist()]
            elif policy == "online-mcsf":
                plan = sorted(waiting, key=lambda i: (o[i], i))
            else:
                plan = sorted(waiting, key=lambda i: (alpha[i], i))
        for h in [i for i in plan if start[i] is None]:
            ok = all(
                sum(
                    s[j] + r - start[j]
                    for j in range(n)
                    if start[j] is not None and start[j] < r <= start[j] + o[j]
                )
                + s[h]
                + r
                - t
                <= M
                for r in range(t + 1, t + o[h] + 1)
            )
            if not ok:
                break
            start[h] = t
        t += 1
    return [int(x) for x in start]  # type: ignore[arg-type]


def reference_vllm(inst: Instance, queue: list[int], model: TimeModel) -> list[tuple[int, ...]]:
    """SPEC section 4's production-style baseline read literally, one decision time at a time,
    with "``a_h <= t``" read "``alpha_h <= tau(t)``" (``tau`` by ``to_seconds`` of every run so
    far, cut ones included). Returns every run ``(request, start, end, completed)``, sorted."""
    s, o, alpha, M = (
        inst.prefill.tolist(),
        inst.decode.tolist(),
        inst.arrival_s.tolist(),
        inst.memory,
    )
    Q = list(queue)
    running: dict[int, int] = {}
    runs: list[tuple[int, int, int, int]] = []
    t = 0
    while len([r for r in runs if r[3]]) < inst.n:
        for j in [j for j, p in running.items() if p + o[j] <= t]:
            p = running.pop(j)
            runs.append((j, p, p + o[j], 1))
        made = [(j, p, e) for j, p, e, _ in runs] + [(j, p, p + o[j]) for j, p in running.items()]
        tau = _tau(inst, made, t, model)
        u = sum(s[j] + t + 1 - p for j, p in running.items())
        while Q and alpha[Q[0]] <= tau and u + s[Q[0]] + 1 <= M:
            h = Q.pop(0)
            running[h] = t
            u += s[h] + 1
        r = t + 2
        while sum(s[j] + r - p for j, p in running.items() if r <= p + o[j]) > M:
            j = max(running, key=lambda j: (running[j], j))
            p = running.pop(j)
            Q.insert(0, j)
            if t > p:
                runs.append((j, p, t, 0))
        t += 1
    return sorted(runs)


@st.composite
def timed_cases(draw):
    """A small instance with arrivals in seconds and a ``linear`` model whose rounds last a
    fraction of a second to a few seconds (so that arrivals fall between and inside rounds,
    and idle stretches occur)."""
    inst = draw(instances(max_n=6, max_memory=24, max_decode=6, arrivals=False))
    grid = st.sampled_from([0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.75, 6.0])
    free = st.floats(0.0, 9.0, allow_nan=False, allow_infinity=False)
    alpha = draw(st.lists(st.one_of(grid, free), min_size=inst.n, max_size=inst.n))
    model = _linear(
        draw(st.sampled_from([0.25, 0.5, 1.0, 0.3])),
        draw(st.sampled_from([0.0, 0.05, 0.125, 0.3])),
        draw(st.sampled_from([0.0, 0.1])),
        draw(st.sampled_from([0.0, 0.01])),
    )
    return inst.replace(arrival_s=alpha), model


@settings(max_examples=120, deadline=None)
@given(timed_cases(), st.sampled_from([None, 2]))
def test_online_matches_literal_reference_on_the_clock(case, H):
    inst, model = case
    for policy in ONLINE:
        opts = _opts(policy) | {"replan_every": H}
        sched = run_policy(inst, policy, time_model=model, **opts).check()
        assert sched.start.tolist() == reference_online(inst, policy, model, H), policy


@settings(max_examples=120, deadline=None)
@given(timed_cases())
def test_vllm_matches_literal_reference_on_the_clock(case):
    inst, model = case
    for fn, queue in (
        (vllm, np.argsort(inst.arrival_s, kind="stable").tolist()),
        (vllm_sf, np.lexsort((np.arange(inst.n), inst.decode)).tolist()),
    ):
        sched = fn(inst, time_model=model).check()
        assert _runs(sched) == reference_vllm(inst, queue, model), fn.__name__


@settings(max_examples=150, deadline=None)
@given(timed_cases())
def test_schedule_is_the_round_schedule_of_its_admission_rounds(case):
    """The schedule on the clock is the round executor's on the arrival rounds it found (with
    the same lists), and ``to_seconds`` of it gives back exactly those rounds."""
    inst, model = case
    alpha = inst.arrival_s
    for policy in ALL:
        sched = run_policy(inst, policy, time_model=model, **_opts(policy)).check()
        a = sched.instance.arrival
        secs = to_seconds(sched, model)
        assert secs.admission_rounds(alpha).tolist() == a.tolist(), policy
        assert np.all(secs.tau_at(sched.start) >= alpha), policy  # started after arrival
        assert np.array_equal(secs.arrival_s, alpha)
        rounds_inst = inst.replace(arrival=a, arrival_s=None)
        if policy == "online-fcfs":
            again = execute_online(rounds_inst, KeyPlanner(alpha.tolist()))
        elif policy == "online-mcsf":
            again = online_mcsf(rounds_inst)
        elif policy == "online-sorted-f":
            again = online_sorted_f(rounds_inst, "dp")
        elif policy == "vllm":
            again = execute_preemptive(rounds_inst, np.argsort(alpha, kind="stable"))
        else:
            again = vllm_sf(rounds_inst)
        assert _runs(again) == _runs(sched), policy


def test_clock_policies_are_registered():
    assert set(CLOCK_POLICIES) == set(ALL)


# ---------------------------------------------------------------------- hand-computed
def test_hand_computed_linear_changes_an_admission():
    """M = 7; online MC-SF; ``linear`` with base_s = 1 s and prefill_token_s = 0.125 s (the
    other coefficients 0), so a round lasts 1 + 0.125 P_t seconds.

    Requests (s, o, alpha): r0 (6, 1, 0 s), r1 (3, 4, 1.2 s), r2 (3, 1, 1.9 s). r1 and r2
    cannot run together (round p + 1 of both: 4 + 4 = 8 > 7).

    Under ``unit`` (tau(p) = p): r1 and r2 arrive at p = 2 (1.2 > 1, 1.9 > 1). p = 0: r0
    starts (C = 1). p = 1: nothing has arrived, round 2 is idle. p = 2: both are there;
    MC-SF takes r2 (o = 1) first, and r1 must wait: r2 starts at 2 (C = 3), r1 at 3 (C = 7).

    Under ``linear``: round 1 prefills r0, d(1) = 1 + 0.125 * 6 = 1.75, tau(1) = 1.75 >= 1.2, so
    r1 has arrived at p = 1 and starts alone (r0 left at C = 1). Round 2 prefills r1:
    d(2) = 1 + 0.125 * 3 = 1.375, tau(2) = 3.125 >= 1.9, so r2 arrives at p = 2, but r1 holds
    5, 6, 7 tokens in rounds 3-5: r2 (4 tokens) waits for r1's completion C = 5 and starts
    at 5. Rounds 3-5 last 1 s (tau = 4.125, 5.125, 6.125), round 6 prefills r2:
    d(6) = 1.375, tau(6) = 7.5. The time model reversed r1 and r2.

    Latencies in seconds tau(C_i) - alpha_i: r0 1.75, r1 6.125 - 1.2 = 4.925, r2 7.5 - 1.9 = 5.6.
    """
    inst = Instance.from_arrays([6, 3, 3], [1, 4, 1], 7, arrival_s=[0.0, 1.2, 1.9])
    unit = online_mcsf(inst, time_model="unit").check()
    assert unit.instance.arrival.tolist() == [0, 2, 2]
    assert unit.start.tolist() == [0, 3, 2]
    model = _linear(1.0, 0.125)
    sched = online_mcsf(inst, time_model=model).check()
    assert sched.instance.arrival.tolist() == [0, 1, 2]
    assert sched.start.tolist() == [0, 1, 5]
    assert sched.completion.tolist() == [1, 5, 6]
    secs = to_seconds(sched, model)
    assert secs.tau_at([1, 2, 3, 4, 5, 6]).tolist() == [1.75, 3.125, 4.125, 5.125, 6.125, 7.5]
    assert secs.latency_s.tolist() == pytest.approx([1.75, 4.925, 5.6], abs=1e-12)


def test_hand_computed_vllm_restart_pays_its_prefill_again():
    """The preemption of test_vllm's hand-computed case (M = 10; (s, o): r0 (3, 4), r1 (1, 1),
    r2 (1, 4), r3 (4, 1), all at 0 s) on ``linear`` with base_s = 1 s and prefill_token_s =
    0.5 s, and a fifth request r4 (s 0, o 1) arriving at 6.8 s.

    Rounds as there: r0, r1, r2 start at 0; r2 is preempted at t = 2 (cut run rounds 1-2) and
    restarts at 3; r3 starts at 4. Round 1 prefills 3 + 1 + 1 = 5 tokens: d(1) = 3.5 s;
    rounds 2, 3: 1 s (tau(3) = 5.5). Round 4 prefills r2 *again* (its restart): d(4) = 1.5,
    tau(4) = 7.0 >= 6.8, so r4 has arrived at t = 4 and starts there, after r3 (it fits:
    3 + 5 + 1 <= 10). Without the second prefill tau(4) would be 6.5 < 6.8 and r4 would wait
    for t = 5. Round 5 prefills r3 (4 tokens) and r4 (0): d(5) = 3, tau(5) = 10; rounds 6, 7
    finish r2: tau(7) = 12. Latencies: r2 12 s (from 0 s, both runs), r4 tau(5) - 6.8 = 3.2 s.
    """
    inst = Instance.from_arrays(
        [3, 1, 1, 4, 0], [4, 1, 4, 1, 1], 10, arrival_s=[0.0, 0.0, 0.0, 0.0, 6.8]
    )
    model = _linear(1.0, 0.5)
    sched = vllm(inst, time_model=model).check()
    assert _runs(sched) == [
        (0, 0, 4, 1),
        (1, 0, 1, 1),
        (2, 0, 2, 0),
        (2, 3, 7, 1),
        (3, 4, 5, 1),
        (4, 4, 5, 1),
    ]
    assert sched.instance.arrival.tolist() == [0, 0, 0, 0, 4]
    secs = to_seconds(sched, model)
    assert secs.tau_at(range(8)).tolist() == [0.0, 3.5, 4.5, 5.5, 7.0, 10.0, 11.0, 12.0]
    assert secs.latency_s[2] == 12.0
    assert secs.latency_s[4] == pytest.approx(3.2, abs=1e-12)
    # without the restart's prefill round 4 would end before r4 arrives
    assert secs.tau_at(3)[()] + 1.0 < 6.8 <= secs.tau_at(4)[()]


def test_idle_rounds_last_f000_and_are_skipped_at_once():
    """Nothing runs between two arrivals far apart: the idle rounds of f(0, 0, 0) = base_s
    until the second arrival are counted (rounds), not stepped (decisions)."""
    inst = Instance.from_arrays([2, 2], [1, 1], 8, arrival_s=[0.0, 1000.3])
    model = _linear(0.01, 0.001)
    for policy in ALL:
        sched = run_policy(inst, policy, time_model=model).check()
        secs = to_seconds(sched, model)
        a = int(sched.instance.arrival[1])
        assert secs.tau_at(a - 1)[()] < 1000.3 <= secs.tau_at(a)[()]
        assert a > 100_000
        assert sched.start.tolist() == [0, a]
        if policy in ONLINE:
            assert sched.info["decisions"] <= 6


def test_bad_model_is_refused():
    inst = Instance.from_arrays([1], [1], 4, arrival_s=[0.5])
    with pytest.raises(KeyError, match="no-such-model"):
        online_mcsf(inst, time_model="no-such-model")


def test_sorted_f_planner_used_unchanged():
    # the clock changes only when requests join the planner: the planner object is the same
    inst = Instance.from_arrays([1, 2, 3], [2, 2, 2], 20, arrival_s=[0.0, 0.4, 0.9])
    planner = SortedFPlanner(inst.prefill.tolist(), inst.decode.tolist(), 20, "dp")
    sched = execute_online(inst, planner, time_model=_linear(0.5, 0.0))
    assert sched.instance.arrival.tolist() == [0, 1, 2]
    assert planner.replans >= 1
