"""Every HiGHS run of a certify method keeps its budget: it is given at most the time left,
and no phase that ignores HiGHS' time limit and interrupt callbacks runs. Tested on the
mechanism (what each run is given), never on wall-clock durations."""

from __future__ import annotations

import time

import pytest

from lpsched.certify.methods import partial_integrality
from lpsched.generators.small import scaled_mix
from lpsched.policies.local_search import best_heuristic


@pytest.fixture
def runs(monkeypatch):
    """Record, for each HiGHS run of partial integrality, its presolve option and its time
    limit against the seconds left until the deadline it was run with."""
    seen: list[dict] = []
    real = partial_integrality.run_highs

    def recording(h, deadline=None):
        left = None if deadline is None else deadline - time.perf_counter()
        option = {k: h.getOptionValue(k)[1] for k in ("presolve", "time_limit")}
        seen.append({"presolve": option["presolve"], "limit": option["time_limit"], "left": left})
        return real(h, deadline)

    monkeypatch.setattr(partial_integrality, "run_highs", recording)
    return seen


def test_partial_integrality_runs_without_the_presolve_that_ignores_its_limit(runs):
    """Before: HiGHS' MIP presolve ran 11-22 s on a 9.4 s limit (n = 200 of the scaled mix,
    M = 50: `bound --method partial-integrality --time-limit 10` took 16-46 s, and SIGTERM
    waited for it), since it checks neither the limit nor the interrupt callback often enough.
    """
    inst = scaled_mix(12, seed=0, memory=50)
    res = partial_integrality.partial_integrality_bound(
        inst, best_heuristic(inst), time_limit=30, threads=1
    )
    assert res.bound > 0 and runs
    for run in runs:
        assert run["presolve"] == "off"
        assert run["limit"] <= run["left"] + 0.01  # set just before the run


def _old_best(inst):
    """best_heuristic as it was: every policy in HEURISTICS order, the first best kept."""
    from lpsched.executor import execute
    from lpsched.policies.local_search import HEURISTICS, LIST_ORDERS, SCHEDULE_POLICIES

    best = None
    for name in HEURISTICS:
        if name in SCHEDULE_POLICIES:
            try:
                cands = [SCHEDULE_POLICIES[name](inst)]
            except ValueError:
                cands = []
        else:
            order = LIST_ORDERS[name](inst)
            cands = [execute(inst, order, backfill=b) for b in (False, True)]
        for k, sched in enumerate(cands):
            label = name if name in SCHEDULE_POLICIES or not k else f"{name}+backfill"
            if best is None or sched.tel < best[0]:
                best = (sched.tel, label, sched.start.tolist())
    return best


@pytest.mark.parametrize("n", [4, 8, 12, 30])
def test_the_opening_picks_the_schedule_it_picked_before(n):
    """Sorted-F now runs last; the winner (first in HEURISTICS on ties) is unchanged."""
    from lpsched.policies.local_search import best_heuristic

    for seed in range(3):
        inst = scaled_mix(n, seed=seed, memory=50)
        got = best_heuristic(inst)
        assert (got.tel, got.policy, got.start.tolist()) == _old_best(inst)


def test_a_slow_policy_that_does_not_fit_is_skipped_and_the_rest_reported(monkeypatch):
    """Before: certify at n = 20,000 spent 12-17 s of a 5 s limit in Sorted-F's Phase 1 before
    it checked its budget. Now Sorted-F is not started when twice its expected time would pass
    the deadline; every schedule found is passed on as it is found."""
    from lpsched.certify import certify
    from lpsched.policies import local_search

    def never(*args, **kwargs):
        raise AssertionError("Sorted-F ran")

    monkeypatch.setitem(local_search.LIST_ORDERS, "sorted-f", never)
    monkeypatch.setattr(local_search, "slow_heuristic_seconds", lambda name, n: 1e6)
    inst = scaled_mix(10, seed=0, memory=50)
    seen = []
    best = local_search.best_heuristic(inst, deadline=time.perf_counter() + 60, found=seen.append)
    assert best.info["skipped"] == ["sorted-f"]
    assert len(seen) == 2 * 4 + 2 - ("gba-d" not in {s.policy for s in seen})
    assert best.tel == min(s.tel for s in seen)
    res = certify(inst, 5)
    assert res.info["heuristics_skipped"] == ["sorted-f"] and res.schedule is not None


def test_without_a_deadline_every_policy_runs(monkeypatch):
    from lpsched.policies import local_search

    monkeypatch.setattr(local_search, "slow_heuristic_seconds", lambda name, n: 1e6)
    best = local_search.best_heuristic(scaled_mix(10, seed=0, memory=50))
    assert "skipped" not in best.info


def test_the_opening_local_search_gets_no_more_than_the_time_left(monkeypatch):
    """The local search's share was a quarter of the limit, even when the list policies had
    used the limit up; now it is capped by the time left (and skipped when none is)."""
    from lpsched.certify import driver

    budgets = []

    def recording(inst, schedule, moves, time_limit):
        budgets.append(time_limit)
        return schedule

    def slow_lists(inst, **kwargs):
        time.sleep(0.3)
        return best_heuristic(inst)

    monkeypatch.setattr(driver, "improve_schedule", recording)
    monkeypatch.setattr(driver, "best_heuristic", slow_lists)
    from lpsched.certify import certify

    certify(scaled_mix(10, seed=0, memory=50), 0.2)
    assert budgets == []  # the 0.2 s were gone before the local search


def _record_presolve(monkeypatch) -> list[str]:
    """The presolve setting of every HiGHS run from now on, in order."""
    from lpsched.solvers.backends import highs

    seen: list[str] = []
    real = highs.run_highs

    def recording(h, deadline=None):
        seen.append(h.getOptionValue("presolve")[1])
        return real(h, deadline)

    monkeypatch.setattr(highs, "run_highs", recording)
    return seen


@pytest.mark.parametrize(("limit", "presolve"), [(0, "off"), (None, "choose")])
def test_exact_presolves_only_models_up_to_its_size_limit(monkeypatch, limit, presolve):
    """Before: `exact --time-limit 60` on 46 requests of jaillet-synthetic (743,143 non-zeros)
    ran 65-91 s, 57 s of them in HiGHS' MIP presolve, which reduced nothing and checked neither
    the limit nor the interrupt callback. Above PRESOLVE_MAX_NONZEROS presolve is off; below it
    (the reproductions' sizes) it stays on, so their results do not change."""
    from lpsched.certify import solve_exact
    from lpsched.solvers.backends import highs

    seen = _record_presolve(monkeypatch)
    if limit is not None:
        monkeypatch.setattr(highs, "PRESOLVE_MAX_NONZEROS", limit)
    res = solve_exact(scaled_mix(6, seed=0, memory=50), "highs", 30)
    assert str(res.status) == "optimal"
    assert seen and set(seen) == {presolve}


def test_the_large_plan_leaves_out_lp_aggregated_above_its_horizon(monkeypatch):
    """Before: at n = 20,000 (T = 4,472,118 rounds) lp-aggregated computed its list-policy seeds
    (Sorted-F: 15 s) and only then refused the horizon: 19-20 s on a 5 s limit."""
    from lpsched.certify import plan

    inst = scaled_mix(10, seed=0, memory=50)
    monkeypatch.setattr(plan, "SMALL_MAX_NONZEROS", 0)
    monkeypatch.setattr(plan, "AUTO_LP_MAX_NONZEROS", 0)
    assert "lp-aggregated" in plan.certify_plan(inst, best_heuristic(inst))["methods"]
    monkeypatch.setattr(plan, "MAX_HORIZON", 1)
    chosen = plan.certify_plan(inst, best_heuristic(inst))
    assert chosen["size"] == "large" and "lp-aggregated" not in chosen["methods"]
    assert "lp-aggregated left out" in chosen["reason"]


def test_the_lp_seeds_leave_out_a_slow_policy_that_does_not_fit(monkeypatch):
    from lpsched.certify.methods import colgen
    from lpsched.certify.methods.aggregated import aggregated_lp_bound
    from lpsched.policies import local_search

    def never(*args, **kwargs):
        raise AssertionError("Sorted-F ran")

    inst = scaled_mix(10, seed=0, memory=50)
    first = best_heuristic(inst)
    monkeypatch.setitem(local_search.LIST_ORDERS, "sorted-f", never)
    monkeypatch.setattr(
        colgen, "slow_heuristic_seconds", lambda name, n: 1e6 * (name == "sorted-f")
    )
    assert aggregated_lp_bound(inst, first, time_limit=5).bound > 0
    with pytest.raises(AssertionError, match="Sorted-F ran"):
        aggregated_lp_bound(inst, first)  # without a limit every seed policy runs


def test_presolve_is_capped_by_the_time_left(monkeypatch):
    """Before: `exact --time-limit 2` on scaled-mix n = 110 (349,564 non-zeros, under the
    400,000 cap) ran 5.4 s, 3.7 s of them in HiGHS' presolve, which keeps no limit. The cap
    now shrinks with the time left, and the run uses the time left when it starts."""
    from lpsched.certify import solve_exact
    from lpsched.solvers.backends import highs

    assert highs.presolve_max_nonzeros(None) == highs.PRESOLVE_MAX_NONZEROS
    assert highs.presolve_max_nonzeros(2 * highs.PRESOLVE_FULL_SECONDS) == 400_000
    assert highs.presolve_max_nonzeros(2.0) == 13_333 < 349_564
    assert highs.presolve_max_nonzeros(20.0) == 133_333 < 311_445
    assert highs.presolve_max_nonzeros(12.0) > 77_922  # paper-scaled n = 60 keeps presolve
    assert highs.presolve_max_nonzeros(-1.0) == 0

    seen = _record_presolve(monkeypatch)
    monkeypatch.setattr(highs, "PRESOLVE_FULL_SECONDS", 1e12)  # any limit is short
    res = solve_exact(scaled_mix(6, seed=0, memory=50), "highs", 30)
    assert str(res.status) == "optimal" and seen and set(seen) == {"off"}
