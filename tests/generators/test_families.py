"""Adversarial families for FCFS, MC-SF and size priority: closed forms against the executor."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from lpsched.certify import solve_exact
from lpsched.generators.families import (
    FAMILIES,
    family_good_schedule,
    family_instance,
    family_ratio,
    family_tels,
)
from lpsched.policies.registry import run_policy

SMALL_M = [4, 5, 6, 7, 9, 10, 16, 17, 25, 31, 50]
LARGE_M = [100, 257, 1000, 1024, 3000]


def _solver(inst):
    return "dp" if inst.n <= 40 else "swap"


@pytest.mark.parametrize("name", list(FAMILIES))
@pytest.mark.parametrize("M", SMALL_M + LARGE_M)
def test_closed_forms_equal_executor(name, M):
    inst = family_instance(name, M)
    h, g = family_tels(name, M)
    sched = run_policy(inst, FAMILIES[name].policy).check()
    assert sched.tel == h
    good = family_good_schedule(inst)
    assert good.tel == g
    sf = run_policy(inst, "sorted-f", solver=_solver(inst)).check()
    assert sf.tel == g  # Sorted-F finds the good schedule: ratio 1


@pytest.mark.parametrize("M", [4, 9, 16, 100, 10**4, 10**6])
def test_formulas_by_hand(M):
    L = math.isqrt(M)
    q = M // L
    assert family_tels("fcfs", M) == (L + q * (L + 1), q + L + 1)
    q, k = M // 2, math.isqrt(2 * M)
    assert family_tels("mcsf", M) == (
        k * (k + 1) // 2 + q * (k + 2),
        2 * q + 2 * k + k * (k + 1) // 2,
    )
    L = M - 1
    r = math.isqrt(2 * L)
    assert family_tels("size", M) == (L + r * L + r * (r + 1) // 2, r * (r + 1) // 2 + r + L)


def test_values_at_known_points():
    # M = 100: fcfs L = q = 10; mcsf q = 50, k = 14; size L = 99, r = 14
    assert family_tels("fcfs", 100) == (120, 21)
    assert family_tels("mcsf", 100) == (905, 233)
    assert family_tels("size", 100) == (1590, 218)
    assert family_ratio("fcfs", 100) == Fraction(120, 21)


@pytest.mark.parametrize("name", list(FAMILIES))
def test_ratio_grows_without_bound(name):
    ratios = [float(family_ratio(name, 4**e)) for e in range(2, 16)]
    assert all(b > a for a, b in zip(ratios[:-1], ratios[1:], strict=True))
    assert ratios[-1] > 60  # M = 4^15 ~ 10^9
    # Theta(sqrt(M)): ratio / sqrt(M) settles
    lead = {"fcfs": 0.5, "mcsf": 1 / (2 * math.sqrt(2)), "size": 1 / math.sqrt(2)}[name]
    M = 10**12
    assert float(family_ratio(name, M)) / math.sqrt(M) == pytest.approx(lead, rel=0.01)


@pytest.mark.parametrize("name", list(FAMILIES))
def test_only_the_target_policy_is_fooled(name):
    inst = family_instance(name, 400)
    g = family_good_schedule(inst).tel
    for p in ("fcfs", "mcsf", "size"):
        tel = run_policy(inst, p).tel
        assert (tel > 2 * g) == (p == name)


@pytest.mark.parametrize("name", list(FAMILIES))
@pytest.mark.parametrize("M", [4, 7, 12])
def test_good_schedule_is_optimal_at_small_M(name, M):
    inst = family_instance(name, M)
    res = solve_exact(inst, time_limit=30)
    assert str(res.status) == "optimal"
    assert res.objective == family_good_schedule(inst).tel


def test_metadata_and_shapes():
    inst = family_instance("mcsf", 20)
    assert inst.n == 10 + 6 and inst.memory == 20
    assert inst.metadata["family"] == "mcsf" and len(inst.metadata["good_start"]) == inst.n
    assert family_instance("size", 20).n == math.isqrt(38) + 1


@pytest.mark.parametrize(
    "name,M", [("fcfs", 1), ("mcsf", 3), ("size", 0), ("size", 2.5), ("nope", 10)]
)
def test_bad_parameters(name, M):
    with pytest.raises(ValueError):
        family_instance(name, M)
    with pytest.raises(ValueError):
        family_tels(name, M)
