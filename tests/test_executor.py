"""Executor (SPEC section 4): reference cases, a literal round-by-round reference executor, and
properties every schedule must have."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import instance_and_order, instances
from hypothesis import given, settings
from hypothesis import strategies as st
from reference.backfill import reference_backfill_starts
from reference.cases import CASES

from lpsched import executor
from lpsched.executor import execute
from lpsched.instance import Instance
from lpsched.policies.registry import run_policy


def reference_execute(instance: Instance, order, backfill: bool = False) -> list[int]:
    """The executor of SPEC section 4, literally, round by round with brute-force memory.

    For ``t = 0, 1, 2, ...``: walk ``L``; a waiting request ``h`` is admitted (``p_h = t``) if
    ``a_h <= t`` and, for every round ``r`` in ``t+1 .. t+o_h``,
    ``sum over started j with p_j < r <= p_j+o_j of (s_j + r - p_j)  +  s_h + r - t  <=  M``.
    Strict: the walk stops at the first waiting request that is not admitted; backfill: skip it.
    """
    s = [int(x) for x in instance.prefill]
    o = [int(x) for x in instance.decode]
    a = [int(x) for x in instance.arrival]
    M = instance.memory
    start: list[int | None] = [None] * instance.n
    running: list[int] = []
    horizon = max(a) + sum(o)  # by then everything has been admitted
    t = 0
    while None in start:
        assert t <= horizon, "reference executor did not terminate"
        running = [j for j in running if start[j] + o[j] > t]  # C_j <= t have left
        for h in order:
            if start[h] is not None:
                continue
            ok = a[h] <= t
            r = t + 1
            while ok and r <= t + o[h]:
                m = sum(s[j] + r - start[j] for j in running if start[j] < r <= start[j] + o[j])
                ok = m + s[h] + r - t <= M
                r += 1
            if ok:
                start[h] = t
                running.append(h)
            elif not backfill:
                break
        t += 1
    return [int(p) for p in start]  # type: ignore[arg-type]


def _instance(case) -> Instance:
    return Instance.from_arrays(
        case["prefill"],
        case["decode"],
        case["memory"],
        case["arrival"],
        ids=case["ids"],
        name=case["name"],
    )


def _order(case, key: str) -> list[int]:
    """The baseline lists, computed here from SPEC section 4 (ties by index)."""
    n = len(case["decode"])
    if key == "fcfs":
        return sorted(range(n), key=lambda i: (case["arrival"][i], i))
    if key == "mcsf":
        return sorted(range(n), key=lambda i: (case["decode"][i], i))
    if key == "size":
        return sorted(range(n), key=lambda i: (case["prefill"][i] + case["decode"][i], i))
    if key == "sorted-f":
        return list(case["sorted_f_order"])
    raise AssertionError(key)


REF_RUNS = [
    pytest.param(case, name, id=f"{case['name']}-{name}")
    for case in CASES
    for name in case["policies"]
]


# --------------------------------------------------------------------------- reference cases


@pytest.mark.parametrize("case, name", REF_RUNS)
def test_reference_case_via_registry(case, name):
    expected = case["policies"][name]
    sched = run_policy(_instance(case), name, solver="dp")
    assert sched.start.tolist() == expected["start"]
    assert sched.tel == expected["tel"]
    assert sched.policy == name
    sched.check()


@pytest.mark.parametrize("case, name", REF_RUNS)
def test_reference_case_via_execute(case, name):
    expected = case["policies"][name]
    base, _, suffix = name.partition("+")
    order = _order(case, base)
    sched = execute(_instance(case), order, backfill=suffix == "backfill")
    assert sched.start.tolist() == expected["start"]
    assert sched.tel == expected["tel"]


@pytest.mark.parametrize("case, name", REF_RUNS)
def test_reference_case_via_reference_executor(case, name):
    """The slow executor below reproduces the shared reference values (it is itself right)."""
    base, _, suffix = name.partition("+")
    starts = reference_execute(_instance(case), _order(case, base), backfill=suffix == "backfill")
    assert starts == case["policies"][name]["start"]


def test_hand_example_strict_and_backfill():
    # M = 10; r0 (s=6, o=2), r1 (s=5, o=1), r2 (s=1, o=1). List L = (0, 1, 2).
    # t=0: admit r0 (holds 7, 8 in rounds 1, 2). r1 would need 8 + 6 > 10 in round 1: stop.
    #   Strict: r2 waits behind r1. Backfill: r2 fits (7 + 2 = 9 <= 10 in round 1): p_2 = 0.
    # t=2: r0 finishes at C = 2, r1 starts at 2 (round 3 holds 6).
    #   Strict: r2 also at t=2 (round 3: 6 + 2 = 8 <= 10).
    inst = Instance.from_arrays([6, 5, 1], [2, 1, 1], 10)
    assert execute(inst, [0, 1, 2]).start.tolist() == [0, 2, 2]
    assert execute(inst, [0, 1, 2], backfill=True).start.tolist() == [0, 2, 0]


def test_arrival_blocks_strict_walk():
    # r0 arrives at 3 and heads the list; strict order makes r1 wait for it, backfill does not.
    inst = Instance.from_arrays([0, 0], [1, 1], 10, [3, 0])
    assert execute(inst, [0, 1]).start.tolist() == [3, 3]
    assert execute(inst, [0, 1], backfill=True).start.tolist() == [3, 0]


def test_single_request_and_full_memory():
    inst = Instance.from_arrays([4], [1], 5, [7])
    assert execute(inst, [0]).start.tolist() == [7]
    # Two requests of size s + o = M run strictly one after the other.
    inst = Instance.from_arrays([3, 3], [2, 2], 5)
    assert execute(inst, [1, 0]).start.tolist() == [2, 0]
    assert execute(inst, [1, 0], backfill=True).start.tolist() == [2, 0]


@pytest.mark.parametrize(
    "order", [[0, 0, 1], [0, 1], [0, 1, 3], [-1, 0, 1], [2, 1, 0, 3], [[0, 1, 2]], [0.5, 1, 2]]
)
def test_non_permutation_raises(order):
    inst = Instance.from_arrays([1, 1, 1], [1, 1, 1], 5)
    with pytest.raises(ValueError, match="permutation"):
        execute(inst, order)


# --------------------------------------------------------------------------- properties

POLICY_SPECS = ["fcfs", "mcsf", "size", "sorted-f"]


@settings(max_examples=120, deadline=None)
@given(instances(), st.sampled_from(POLICY_SPECS), st.booleans())
def test_every_policy_schedule_is_feasible(inst, name, backfill):
    spec = name + ("+backfill" if backfill else "")
    sched = run_policy(inst, spec, solver="dp")
    sched.check()
    assert (sched.start >= inst.arrival).all()
    order = np.asarray(sched.info["order"])
    assert sorted(order.tolist()) == list(range(inst.n))
    if not backfill:
        assert (np.diff(sched.start[order]) >= 0).all()


@settings(max_examples=250, deadline=None)
@given(instance_and_order(), st.booleans())
def test_executor_matches_reference_executor(pair, backfill):
    inst, order = pair
    sched = execute(inst, order, backfill=backfill)
    assert sched.start.tolist() == reference_execute(inst, order, backfill=backfill)
    sched.check()
    if not backfill:
        starts = sched.start[np.asarray(order)]
        assert (np.diff(starts) >= 0).all()


@settings(max_examples=60, deadline=None)
@given(instance_and_order(max_n=14, max_memory=60, max_decode=15, max_arrival=20), st.booleans())
def test_executor_matches_reference_executor_larger(pair, backfill):
    inst, order = pair
    assert execute(inst, order, backfill=backfill).start.tolist() == reference_execute(
        inst, order, backfill=backfill
    )


@settings(max_examples=15, deadline=None)
@given(instance_and_order(max_n=150, max_memory=12, max_decode=4, max_arrival=40), st.booleans())
def test_executor_matches_reference_executor_many_requests(pair, backfill):
    """Long runs with many distinct completion rounds (exercises the pruning of the past)."""
    inst, order = pair
    assert execute(inst, order, backfill=backfill).start.tolist() == reference_execute(
        inst, order, backfill=backfill
    )


def test_many_requests_fixed():
    rng = np.random.default_rng(3)
    n = 300
    decode = rng.integers(1, 5, n)
    prefill = rng.integers(0, 5, n)
    inst = Instance.from_arrays(prefill, decode, 9, rng.integers(0, 60, n))
    for backfill in (False, True):
        order = rng.permutation(n).tolist()
        sched = execute(inst, order, backfill=backfill)
        assert sched.start.tolist() == reference_execute(inst, order, backfill=backfill)
        sched.check()


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.integers(1, 5), st.integers(0, 4), st.integers(1, 12))
def test_identical_requests(s_plus, o, extra, n):
    """n copies of (s, o): strict and backfill agree with the reference, and the schedule is
    feasible; with s + o = M they run one at a time."""
    memory = s_plus + o + extra
    inst = Instance.from_arrays([s_plus] * n, [o] * n, memory)
    for backfill in (False, True):
        sched = execute(inst, list(range(n)), backfill=backfill)
        assert sched.start.tolist() == reference_execute(inst, range(n), backfill=backfill)
        sched.check()
    if extra == 0:
        assert execute(inst, list(range(n))).start.tolist() == [k * o for k in range(n)]


# --------------------------------------------------------------------------- backfill identity
#
# The backfilling walk is a compiled kernel (lpsched.kernels) with an interpreted fallback; it
# must reproduce the previous implementation (tests/reference/backfill.py) and the literal
# round-by-round executor exactly, with exact and with coarsened node fronts, both ways.


def _random_case(seed: int, n: int, memory: int, max_arrival: int) -> tuple[Instance, list]:
    """Random requests (ties in s and o are frequent) and three lists: MC-SF, FCFS, random."""
    rng = np.random.default_rng(seed)
    decode = rng.integers(1, max(2, memory // 3), n)
    prefill = rng.integers(0, memory - decode + 1)
    arrival = rng.integers(0, max_arrival + 1, n) if max_arrival else np.zeros(n, np.int64)
    inst = Instance.from_arrays(prefill, decode, memory, arrival)
    orders = [
        np.lexsort((np.arange(n), decode)).tolist(),  # MC-SF
        np.lexsort((np.arange(n), arrival)).tolist(),  # FCFS
        rng.permutation(n).tolist(),
    ]
    return inst, orders


@settings(max_examples=150, deadline=None)
@given(instance_and_order(max_n=30, max_memory=40, max_decode=12, max_arrival=15))
def test_backfill_matches_previous_implementation(pair):
    inst, order = pair
    assert execute(inst, order, backfill=True).start.tolist() == reference_backfill_starts(
        inst, order
    )


@pytest.mark.parametrize("front", [1, 2, 16])
@pytest.mark.parametrize(
    "seed, n, memory, max_arrival",
    [(0, 400, 50, 0), (1, 400, 50, 300), (2, 1500, 200, 0), (3, 1500, 2000, 4000), (4, 60, 9, 30)],
)
def test_backfill_matches_previous_implementation_medium(
    monkeypatch, front, seed, n, memory, max_arrival
):
    """Medium instances; a front of 1 or 2 points per node forces the coarse fronts (and the
    walk's backtracking out of nodes whose front promised a fit)."""
    monkeypatch.setattr(executor, "_FRONT", front)
    inst, orders = _random_case(seed, n, memory, max_arrival)
    for order in orders:
        got = execute(inst, order, backfill=True)
        assert got.start.tolist() == reference_backfill_starts(inst, order)
        got.check()
        if n <= 60:
            assert got.start.tolist() == reference_execute(inst, order, backfill=True)


@settings(max_examples=40, deadline=None)
@given(instance_and_order(max_n=20, max_memory=30, max_decode=10, max_arrival=10))
def test_backfill_coarse_fronts_match_reference_executor(pair):
    inst, order = pair
    expected = reference_execute(inst, order, backfill=True)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(executor, "_FRONT", 1)
        assert execute(inst, order, backfill=True).start.tolist() == expected


_BOTH_WAYS = """
import json, sys
import numpy as np
sys.path.insert(0, {tests!r})
from test_executor import _random_case
from lpsched import executor
from lpsched.executor import execute
from lpsched.kernels import BACKEND
out = []
for seed, n, memory, max_arrival in {cases!r}:
    inst, orders = _random_case(seed, n, memory, max_arrival)
    out.append([execute(inst, o, backfill=True).start.tolist() for o in orders])
print(json.dumps([BACKEND, out]))
"""


def test_backfill_same_schedules_with_and_without_numba():
    """The interpreted kernel (LPSCHED_NUMBA=0, a fresh interpreter) gives the schedules of this
    process's kernel and of the previous implementation."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    cases = [(5, 300, 40, 0), (6, 300, 500, 600), (7, 800, 100, 50)]
    here = str(Path(__file__).parent)
    env = dict(os.environ, LPSCHED_NUMBA="0")
    script = _BOTH_WAYS.format(tests=here, cases=cases)
    res = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    backend, starts = json.loads(res.stdout)
    assert backend == "python"
    for case, got in zip(cases, starts, strict=True):
        inst, orders = _random_case(*case)
        for order, g in zip(orders, got, strict=True):
            assert g == execute(inst, order, backfill=True).start.tolist()
            assert g == reference_backfill_starts(inst, order)
