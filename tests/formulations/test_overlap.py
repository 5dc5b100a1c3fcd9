"""Overlap cuts (SPEC section 3.1): the pair bounds by hand, the inequality against every
feasible schedule of tiny instances, the separated cuts against feasible schedules, and the
method ``mip-overlap`` against brute-force optima."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference.brute_force import REFERENCE, brute_force_tel, ref_instance, tiny_instances

from lpsched.certify import solve
from lpsched.certify.shortcuts import solve_exact, solve_lp
from lpsched.formulations.overlap import (
    overlap_bounds,
    separate_conflict_cliques,
    separate_overlap_cuts,
)
from lpsched.generators.jaillet import jaillet_synthetic
from lpsched.instance import Instance
from lpsched.schedule import Schedule
from lpsched.solvers.options import SolveOptions
from lpsched.solvers.result import SolveStatus


def test_overlap_bounds_by_hand():
    # M = 10; (s, o) = (2, 6) peak 8, (1, 3) peak 4, (3, 1) peak 4
    inst = Instance.from_arrays([2, 1, 3], [6, 3, 1], 10)
    L = overlap_bounds(inst)
    # pair (0, 1): max(0, 10 - 8 - 1, 10 - 4 - 2) = 4; (0, 2): max(0, 10-8-3, 10-4-2) = 4;
    # (1, 2): max(0, 10 - 4 - 3, 10 - 4 - 1) = 5; diagonal: 10 - 8 - 2 = 0, 10-4-1 = 5, 10-4-3 = 3
    assert L.tolist() == [[0, 4, 4], [4, 5, 5], [4, 5, 3]]


def _late_counts(inst: Instance, start: np.ndarray, K: list[int]) -> int:
    """Most requests of K late in one round, thresholds lambda_j of SPEC section 3.1."""
    s, o, M = inst.prefill, inst.decode, inst.memory
    lam = {j: max([max(0, M - s[i] - o[i] - s[j]) for i in K if i != j], default=0) for j in K}
    horizon = int((start + o).max())
    return max(
        sum(1 for j in K if start[j] + lam[j] < t <= start[j] + o[j]) for t in range(1, horizon + 1)
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_at_most_one_late_in_every_feasible_schedule(data):
    """The inequality of SPEC section 3.1, checked on every feasible schedule with starts in
    0..5 of tiny memory-bound instances, for every set K of two or more requests."""
    M = data.draw(st.integers(4, 12))
    n = data.draw(st.integers(2, 3))
    s = [data.draw(st.integers(0, M // 3)) for _ in range(n)]
    o = [data.draw(st.integers(1, M - si)) for si in s]
    inst = Instance.from_arrays(s, o, M)
    sets = [list(K) for r in range(2, n + 1) for K in itertools.combinations(range(n), r)]
    for start in itertools.product(range(6), repeat=n):
        p = np.array(start)
        if not Schedule(inst, p).feasible:
            continue
        for K in sets:
            assert _late_counts(inst, p, K) <= 1, (s, o, M, start, K)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_instances(max_n=3))
def test_conflicting_columns_never_meet_in_a_feasible_schedule(inst):
    """Brute force: for every feasible schedule with starts in the model's windows, no two of
    its columns conflict (SPEC section 3.1's pair test, as the clique separation uses it)."""
    from lpsched.formulations.overlap import ColumnConflicts

    sol = solve_lp(inst, aggregate=False)
    mat = sol.matrix
    cols = ColumnConflicts(mat)
    windows = [range(int(mat.lo[u]), int(mat.hi[u]) + 1) for u in range(mat.n_units)]
    for start in itertools.product(*windows):
        p = np.array(start)
        if not Schedule(inst, p).feasible:
            continue
        chosen = np.array([mat.column(u, int(k)) for u, k in enumerate(start)])
        for c in chosen.tolist():
            assert not cols.conflicts(chosen, c).any(), (start, c)


def _feasible_schedules(inst: Instance, rng: np.random.Generator, count: int):
    from lpsched.executor import execute

    yield solve_exact(inst, local_search=0).schedule
    for _ in range(count):
        yield execute(inst, rng.permutation(inst.n), backfill=bool(rng.integers(2)))


@pytest.mark.parametrize("aggregate", [True, False])
def test_separated_cuts_hold_for_feasible_schedules(aggregate):
    """Cuts separated on the LP of reference and memory-bound instances hold for the optimum
    and for list schedules; on the memory-bound ones the LP violates some."""
    rng = np.random.default_rng(1)
    cases = [ref_instance(c) for c in REFERENCE[:8]]
    cases += [jaillet_synthetic(n=6, seed=seed, memory=12) for seed in range(4)]
    found = 0
    for inst in cases:
        sol = solve_lp(inst, aggregate=aggregate)
        cuts = separate_overlap_cuts(sol.matrix, sol.x) + separate_conflict_cliques(
            sol.matrix, sol.x
        )
        found += len(cuts)
        for cols, rhs in cuts:
            assert sol.x[cols].sum() > rhs  # violated at the LP point
        for sched in _feasible_schedules(inst, rng, 15):
            if not sol.matrix.fits(sched.start):
                continue
            x = sol.matrix.values_from_starts(sched.start)
            for cols, rhs in cuts:
                assert x[cols].sum() <= rhs + 1e-9
    assert found > 0


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_instances())
def test_mip_overlap_matches_brute_force(inst):
    opt = brute_force_tel(inst)
    res = solve(inst, ("mip-overlap",), SolveOptions(time_limit=None))
    assert (res.status, res.objective) == (SolveStatus.OPTIMAL, opt), res.info
    assert res.schedule.check().tel == opt


def test_mip_overlap_lifts_the_lp_on_a_memory_bound_instance():
    """jaillet-synthetic n = 8, seed 3: the cut loop raises the LP, never above the optimum
    that the plain MIP proves, and the MIP with the cuts proves the same optimum."""
    inst = jaillet_synthetic(n=8, seed=3)
    plain = solve(inst, ("mip",), SolveOptions(time_limit=None))
    assert plain.status is SolveStatus.OPTIMAL
    res = solve(inst, ("mip-overlap",), SolveOptions(time_limit=None))
    assert (res.status, res.objective) == (SolveStatus.OPTIMAL, plain.objective)
    assert res.info["lp_before"] < res.info["lp_after"] <= plain.objective + 1e-6
    assert res.info["overlap_cuts"] > 0


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_instances())
def test_lp_overlap_between_lp_and_optimum(inst):
    opt = brute_force_tel(inst)
    lifted = solve(inst, ("lp-overlap",), SolveOptions(time_limit=None))
    plain = solve(inst, ("lp",), SolveOptions(time_limit=None))
    assert plain.bound - 1e-6 <= lifted.bound <= opt + 1e-6


def test_lp_overlap_reports_every_round():
    """Each round's value reaches the observer (the bound only rises); zero rounds is the LP."""
    from lpsched import run_policy
    from lpsched.certify.methods import METHODS
    from lpsched.solvers.progress import Observer

    inst = jaillet_synthetic(n=10, seed=3)
    sched = run_policy(inst, "mcsf")
    seen: list[float] = []
    facts = METHODS["lp-overlap"].run(
        inst, sched, SolveOptions(time_limit=None), Observer(on_bound=seen.append)
    )
    assert len(seen) >= 2 and seen == sorted(seen) and facts["cuts"] > 0
    assert seen[0] == pytest.approx(facts["lp_before"]) and seen[-1] == pytest.approx(
        facts["lp_after"]
    )
    none = SolveOptions(time_limit=None, method_options={"lp-overlap": {"rounds": 0}})
    assert solve(inst, ("lp-overlap",), none).bound == pytest.approx(
        solve(inst, ("lp",), SolveOptions(time_limit=None)).bound
    )
