"""A_max, A_min, Sorted-F+Amin and the eviction executor (SPEC section 6).

Checked: the exact-interval equivalences (A_min = A_max = MC-SF, Sorted-F+Amin = Sorted-F) on the
reference cases, random instances and generated workloads; a hand-computed eviction case; and
properties of every run with random intervals: feasibility with the cut runs (independent check
of :class:`~lpsched.schedule.Schedule`), A_max never evicts, every eviction was necessary (the
round after it would have overflowed), was caused by an estimate that was too low, and hit the
runs with the least progress.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import instances
from hypothesis import given, settings
from hypothesis import strategies as st
from reference.cases import CASES

from lpsched.executor import execute
from lpsched.generators.intervals import exact, multiplicative
from lpsched.generators.workloads import generate
from lpsched.instance import Instance
from lpsched.policies.amin import amax, amin, sorted_f_amin
from lpsched.policies.baselines import mcsf_order
from lpsched.policies.registry import run_policy
from lpsched.policies.sorted_f import sorted_f_order
from lpsched.schedule import Schedule


def _case(case) -> Instance:
    return exact(
        Instance.from_arrays(
            case["prefill"],
            case["decode"],
            case["memory"],
            case["arrival"],
            ids=case["ids"],
            name=case["name"],
        )
    )


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_exact_intervals_reference_cases(case):
    inst = _case(case)
    want = case["policies"]["mcsf"]["start"]
    for policy in (amin, amax):
        sched = policy(inst)
        assert sched.start.tolist() == want
        assert sched.evictions == 0
    if "sorted-f" in case["policies"]:
        sched = sorted_f_amin(inst, solver="dp")
        assert sched.start.tolist() == case["policies"]["sorted-f"]["start"]


@settings(max_examples=150, deadline=None)
@given(instances())
def test_exact_intervals_equal_mcsf_and_sorted_f(inst):
    ex = exact(inst)
    want = execute(inst, mcsf_order(inst)).start.tolist()
    assert amin(ex).start.tolist() == want
    assert amax(ex).start.tolist() == want
    sf = execute(inst, sorted_f_order(inst, "dp")).start.tolist()
    assert sorted_f_amin(ex, solver="dp").start.tolist() == sf


@pytest.mark.parametrize("solver", ["swap", "quantile"])
def test_exact_intervals_generated_workload(solver):
    inst = generate("mix-80-20", 300, 16492, seed=4)
    ex = exact(inst)
    assert np.array_equal(
        sorted_f_amin(ex, solver=solver).start, run_policy(inst, "sorted-f", solver=solver).start
    )
    assert np.array_equal(amin(ex).start, run_policy(inst, "mcsf").start)


def test_hand_computed_eviction():
    """M = 8; r0: s=2, o=4, l=1; r1: s=2, o=3, l=u=3. List by e: r0, r1; both start at 0.
    t=1: e0=2, round 2 holds 4+4=8. t=2: e0=3, round 3 would hold 5+5=10 > 8: both have
    progress 2, the larger index r1 is evicted (2 tokens lost) and re-admitted at once (round 3:
    r0 5 + r1 3 = 8). t=3: e0=4, round 4 would hold 6+4 = 10: r1 (progress 1) evicted again
    (1 token lost) and cannot restart (round 4: 6 + 3 > 8). t=4: r0 completes; r1 starts and
    completes at 7. TEL = 4 + 7 = 11. A_max (u0 = 4) is MC-SF: r1 at 0, r0 at 2, TEL 3+6 = 9."""
    inst = Instance.from_arrays([2, 2], [4, 3], 8, decode_lo=[1, 3], decode_hi=[4, 3])
    sched = amin(inst).check()
    assert sched.start.tolist() == [0, 4]
    assert sched.tel == 11
    assert sched.evictions == 2 and sched.wasted_tokens == 3
    assert sched.info["evictions"] == 2 and sched.info["wasted_tokens"] == 3
    assert sorted(map(tuple, sched.runs.tolist())) == [
        (0, 0, 4, 1),
        (1, 0, 2, 0),
        (1, 2, 3, 0),
        (1, 4, 7, 1),
    ]
    assert sched.peak_memory == 8
    mx = amax(inst).check()
    assert mx.start.tolist() == [2, 0] and mx.tel == 9 and mx.evictions == 0


def test_runs_feasibility_catches_overflow_of_cut_runs():
    """The check covers runs cut short: a cut run that overlaps a full one beyond M fails."""
    inst = Instance.from_arrays([2, 2], [4, 3], 8)
    ok = Schedule(inst, [0, 4], runs=[(0, 0, 4, 1), (1, 0, 2, 0), (1, 4, 7, 1)])
    assert ok.feasible
    bad = Schedule(inst, [0, 4], runs=[(0, 0, 4, 1), (1, 0, 3, 0), (1, 4, 7, 1)])
    assert any("round 3 holds 10" in v for v in bad.violations())
    missing = Schedule(inst, [0, 4], runs=[(0, 0, 4, 1)])
    assert any("exactly one completed run" in v for v in missing.violations())
    wrong = Schedule(inst, [0, 4], runs=[(0, 0, 4, 1), (1, 3, 7, 1)])
    assert not wrong.feasible


def _running_at(runs: np.ndarray, t: int) -> np.ndarray:
    """Runs that were running at decision time t, before evictions: started before t and not
    completed at or before t (a run cut at t was still running)."""
    p, end, done = runs[:, 1], runs[:, 2], runs[:, 3]
    return np.flatnonzero((p < t) & ((end > t) | ((end == t) & (done == 0))))


@st.composite
def with_intervals(draw):
    inst = draw(instances(max_n=8, max_memory=30, max_decode=8))
    lo, hi = [], []
    for s, o in zip(inst.prefill.tolist(), inst.decode.tolist(), strict=True):
        lo.append(draw(st.integers(1, o)))
        hi.append(draw(st.integers(o, inst.memory - s)))
    return inst.replace(decode_lo=lo, decode_hi=hi)


@settings(max_examples=300, deadline=None)
@given(with_intervals(), st.booleans())
def test_eviction_properties(inst, online):
    o, s, lo = inst.decode, inst.prefill, inst.decode_lo
    for policy in ("amin", "sorted-f-amin", "amax"):
        opts = {"online": online, "solver": "dp"}
        sched = run_policy(inst, policy, **opts)
        assert sched.violations() == []  # runs included: no run ever holds more than M
        assert np.all(sched.completion == sched.start + o)
        runs = sched.runs
        if policy == "amax":
            assert sched.evictions == 0 and len(runs) == inst.n
            continue
        if not np.any(lo < o):
            assert sched.evictions == 0
        for t in np.unique(runs[runs[:, 3] == 0, 2]).tolist():
            act = _running_at(runs, t)
            mem = int(np.sum(s[runs[act, 0]] + t + 1 - runs[act, 1]))
            assert mem > inst.memory  # the eviction was necessary
            assert np.any(lo[runs[act, 0]] < o[runs[act, 0]])  # some estimate was too low
            cut = act[(runs[act, 2] == t) & (runs[act, 3] == 0)]
            kept = np.setdiff1d(act, cut)
            if kept.size:  # least progress first: every evicted run started no earlier
                assert runs[cut, 1].min() >= runs[kept, 1].max()
            # after the evictions round t+1 fits (also implied by the feasibility check)
            assert int(np.sum(s[runs[kept, 0]] + t + 1 - runs[kept, 1])) <= inst.memory


def test_noisy_intervals_generated_workload_feasible():
    inst = multiplicative(generate("mix-80-20", 300, 16492, seed=2), 1.0, seed=2)
    for policy in ("amin", "sorted-f-amin", "amax"):
        sched = run_policy(inst, policy, solver="swap")
        assert sched.feasible
    assert run_policy(inst, "amax").evictions == 0
    assert run_policy(inst, "amin").evictions > 0


def test_errors():
    plain = Instance.from_arrays([1], [2], 5)
    with pytest.raises(ValueError, match="prediction intervals"):
        amin(plain)
    with pytest.raises(KeyError, match="strict"):
        run_policy(exact(plain), "amin+backfill")
