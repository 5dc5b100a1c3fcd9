"""partial_integrality_bound: LP <= bound <= optimum (brute force, shipped optima), the two
extreme long sets (none = the LP at the same horizon, all = the optimum), arrivals, callbacks,
errors."""

from __future__ import annotations

import math

import highspy
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference.brute_force import brute_force_tel, tiny_instances
from reference.shipped import EXACT as EXACT_DIR

from lpsched.bounds import combinatorial_bound
from lpsched.certify import solve_lp
from lpsched.certify.methods.partial_integrality import long_requests, partial_integrality_bound
from lpsched.formulations.horizon import tight_horizon
from lpsched.formulations.time_indexed import time_indexed_matrix
from lpsched.generators.small import scaled_mix
from lpsched.instance import Instance
from lpsched.io import read_instance
from lpsched.policies.local_search import best_heuristic
from lpsched.schedule import InfeasibleScheduleError, Schedule
from lpsched.solvers.backends.highs import build_highs
from lpsched.solvers.options import shift_arrivals
from lpsched.solvers.progress import Observer
from lpsched.solvers.result import LPTooLargeError

EXACT = sorted(EXACT_DIR.glob("*.json"))


def _bound(inst, sched, long, **kw):
    return partial_integrality_bound(inst, sched, time_limit=30, threads=1, long=long, **kw)


def _exact_relaxation(inst, sched, long) -> float:
    """min P_L by HiGHS with a zero gap (the slow way the module avoids)."""
    shifted, shift = shift_arrivals(inst)
    hz = tight_horizon(shifted, Schedule(shifted, sched.start - shift))
    mat = time_indexed_matrix(shifted, hz, aggregate=True)
    mask = long_requests(shifted, long) if isinstance(long, str) else long
    units = np.array([mask[m].any() for m in mat.members])
    if not units.any():
        return solve_lp(inst).value
    h = build_highs(mat, integer_units=units, threads=1)
    h.setOptionValue("mip_abs_gap", 0.0)
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    return h.getInfo().objective_function_value


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_instances(max_n=5), st.data())
def test_between_lp_and_brute_force(inst, data):
    opt = brute_force_tel(inst)
    sched = best_heuristic(inst)
    lp = solve_lp(inst)  # the same heuristic schedule, hence the same horizon and windows
    mask = np.array(data.draw(st.lists(st.booleans(), min_size=inst.n, max_size=inst.n)))
    floor = combinatorial_bound(inst)  # the least it returns (it can beat the LP)
    none = _bound(inst, sched, "none")
    assert none.horizon == lp.horizon and none.info["optimal"]
    assert none.info["dual_bound"] == pytest.approx(lp.value, abs=1e-6)
    assert none.bound == max(math.ceil(lp.value - 1e-6), floor)
    full = _bound(inst, sched, "all")
    assert full.info["optimal"] and full.bound == opt
    bounds = [none.bound]
    for long in ("footprint", "area", mask):
        res = _bound(inst, sched, long)
        assert res.method == "partial-integrality" and res.info["optimal"]
        assert lp.value - 1e-6 <= res.bound <= opt
        # closed: the rounded optimum of the relaxation itself, solved here with no gap
        assert res.bound == max(math.ceil(_exact_relaxation(inst, sched, long) - 1e-4), floor)
        bounds.append(res.bound)
    # a larger long set is a smaller relaxation: footprint 0.4 and the area rule are not
    # nested in general, but every set lies between none and all
    assert max(bounds) <= full.bound


@pytest.mark.slow
@pytest.mark.parametrize("path", EXACT, ids=[p.stem for p in EXACT])
def test_shipped_optima_never_exceeded(path):
    inst = read_instance(path)
    opt = inst.metadata["optimal_tel"]
    sched = best_heuristic(inst)
    res = partial_integrality_bound(inst, sched, time_limit=8, threads=1)
    lp = solve_lp(inst)
    assert lp.value - 1e-6 <= res.bound <= opt
    assert res.info["long"] == int(long_requests(inst).sum()) > 0


def test_arrivals_mix12_online_all_integer_is_the_optimum():
    inst = read_instance(next(p for p in EXACT if p.stem == "mix12-s4-online"))
    assert inst.arrival.max() > 0
    sched = best_heuristic(inst)
    res = partial_integrality_bound(inst, sched, time_limit=60, threads=1, long="all")
    assert res.info["optimal"] and res.bound == inst.metadata["optimal_tel"] == 106
    # the same requests arriving 1000 rounds later: the same bound, the shift reported
    late = inst.replace(arrival=inst.arrival + 1000)
    moved = Schedule(late, sched.start + 1000)
    again = partial_integrality_bound(late, moved, time_limit=60, threads=1, long="all")
    assert again.bound == 106 and again.info["time_shift"] == 1000 + int(inst.arrival.min())


def test_long_rules_by_hand():
    inst = Instance.from_arrays([8, 2, 10, 0], [2, 6, 3, 3], 20)
    # M = 20: footprints s + o = 10, 8, 13, 3; token-rounds A = o s + o (o + 1) / 2 = 19, 33,
    # 36, 6 (sum 94)
    assert long_requests(inst, "footprint").tolist() == [True, True, True, False]  # >= 0.4 M
    assert long_requests(inst, "footprint", 0.5).tolist() == [True, False, True, False]  # >= 10
    assert long_requests(inst, "footprint", 0.6).tolist() == [False, False, True, False]
    # area, largest first: 36 (A2) holds 38% of 94, 36 + 33 (A1) 73%, + 19 (A0) 94%
    assert long_requests(inst).tolist() == [False, True, True, False]  # the default: area 50%
    assert long_requests(inst, "area", share=0.3).tolist() == [False, False, True, False]
    assert long_requests(inst, "area", share=0.9).tolist() == [True, True, True, False]
    assert long_requests(inst, "all").all() and not long_requests(inst, "none").any()


def test_long_mask_or_indices_and_on_bound():
    inst = scaled_mix(12, 1)
    sched = best_heuristic(inst)
    seen: list[float] = []
    by_index = partial_integrality_bound(
        inst,
        sched,
        time_limit=30,
        threads=1,
        long=[0, 3, 5],
        observer=Observer(on_bound=seen.append),
    )
    mask = np.zeros(inst.n, dtype=bool)
    mask[[0, 3, 5]] = True
    by_mask = partial_integrality_bound(inst, sched, time_limit=30, threads=1, long=mask)
    assert by_index.info["long"] == by_mask.info["long"] == 3
    assert by_index.bound == by_mask.bound <= 114  # mix12-s1's proven optimum
    assert seen and seen == sorted(set(seen)) and seen[-1] == by_index.bound
    assert all(float(b).is_integer() for b in seen)


def test_time_limit_is_respected():
    inst = scaled_mix(30, 0)
    sched = best_heuristic(inst)
    res = partial_integrality_bound(inst, sched, time_limit=2.0, threads=1, long="all")
    # stopped by the limit at any speed (the MIP of all 30 requests takes minutes): not proven,
    # the stop reported as HiGHS' own time limit or, on a slow machine, as the interrupt our
    # deadline sends it first; still a valid bound
    status = res.info["status"].lower()
    assert not res.info["optimal"] and ("time limit" in status or "interrupted" in status)
    assert res.bound <= 625  # the best schedule known
    assert res.runtime_s < 2.0 + 30  # a hang guard


def test_errors():
    inst = scaled_mix(12, 1)
    sched = best_heuristic(inst)
    with pytest.raises(ValueError, match="unknown long-set rule"):
        partial_integrality_bound(inst, sched, time_limit=5, long="longest")
    with pytest.raises(ValueError, match="share must be"):
        partial_integrality_bound(inst, sched, time_limit=5, share=1.5)
    with pytest.raises(ValueError, match="boolean mask needs shape"):
        partial_integrality_bound(inst, sched, time_limit=5, long=np.ones(3, dtype=bool))
    with pytest.raises(ValueError, match="out of range"):
        partial_integrality_bound(inst, sched, time_limit=5, long=[0, 12])
    with pytest.raises(ValueError, match="time_limit"):
        partial_integrality_bound(inst, sched, time_limit=0)
    with pytest.raises(LPTooLargeError, match="above the limit of 10"):
        partial_integrality_bound(inst, sched, time_limit=5, max_nonzeros=10)
    bad = Schedule(inst, np.zeros(inst.n, dtype=np.int64))  # everything at once overflows M
    with pytest.raises(InfeasibleScheduleError):
        partial_integrality_bound(inst, bad, time_limit=5)


def test_never_below_the_combinatorial_bound(monkeypatch):
    """Issue 22, item 7: an early stop's dual bound can be weaker than the combinatorial bound
    the docstring promises as the floor. With a floor raised to the schedule's TEL (a valid
    bound would never reach it, but the rule must hold for any floor) the result is the
    floor, named as its source."""
    from lpsched.certify.methods import partial_integrality as pi

    inst = read_instance(EXACT_DIR / "mix15-s1.json")
    sched = best_heuristic(inst)
    monkeypatch.setattr(pi, "combinatorial_bound", lambda instance: sched.tel)
    # any stop will do: every bound HiGHS can give is at most the optimum <= sched.tel
    res = partial_integrality_bound(inst, sched, time_limit=2, threads=1)
    assert res.bound == sched.tel
    assert res.info["source"] == "combinatorial"
