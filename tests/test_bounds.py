"""Lower bounds (lpsched.bounds): hand-computed values, validity against exact optima, and the
chooser between the LP relaxation and the combinatorial bound."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lpsched.bounds import combinatorial_bound, trivial_bound
from lpsched.certify import lp_bound, solve_exact
from lpsched.instance import Instance

# Reference cases (from the project's reference/cases.json): M, s_i, o_i, a_i, optimal TEL.
REFERENCE = [
    (22, [9, 1, 3, 3, 1, 0], [1, 7, 8, 5, 4, 8], None, 38),  # ref00
    (15, [3, 5, 6, 5, 1, 7, 0, 0, 5], [3, 4, 2, 1, 3, 2, 1, 5, 4], None, 46),  # ref01
    (23, [8, 3, 5, 4, 11, 11, 1], [2, 1, 7, 6, 4, 4, 5], None, 49),  # ref04
    (12, [3, 1, 5, 0], [2, 8, 7, 7], None, 38),  # ref10
    (14, [4, 5, 7, 5, 0, 3, 5, 3], [2, 5, 3, 7, 3, 5, 2, 5], None, 70),  # ref12
    (20, [4, 9, 1, 9, 10, 7, 9, 2], [1, 3, 3, 3, 4, 3, 3, 3], None, 49),  # ref16
    (15, [7, 3, 5], [3, 2, 2], [3, 1, 3], 8),  # ref20
]


def test_hand_example():
    # M = 5; (s, o) = (2, 2), (0, 1), (1, 3); A_i = o s + o (o + 1) / 2 = 7, 1, 9.
    # k = 1, 2, 3: ceil((1, 8, 17) / 5) = 1, 2, 4; sorted o = 1, 2, 3; sum of maxima = 7 > sum o.
    inst = Instance.from_arrays([2, 0, 1], [2, 1, 3], 5)
    assert trivial_bound(inst) == 6
    assert combinatorial_bound(inst) == 7
    assert solve_exact(inst).objective >= 7


def test_arrival_version():
    # Same requests arriving at 0, 4, 1: sorted a + o = 2, 4, 5; area part 1, 2, 4;
    # sum of maxima 2 + 4 + 5 = 11, minus sum a = 5 -> 6 = sum o.
    inst = Instance.from_arrays([2, 0, 1], [2, 1, 3], 5, [0, 4, 1])
    assert combinatorial_bound(inst) == 6
    # late arrivals cannot push the bound below the trivial one
    late = Instance.from_arrays([2, 0, 1], [2, 1, 3], 5, [50, 60, 70])
    assert combinatorial_bound(late) == 6


@pytest.mark.parametrize("case", REFERENCE)
def test_reference_cases(case):
    memory, s, o, a, opt = case
    inst = Instance.from_arrays(s, o, memory, a)
    assert trivial_bound(inst) <= combinatorial_bound(inst) <= opt


@st.composite
def small_instances(draw) -> Instance:
    memory = draw(st.integers(3, 30))
    n = draw(st.integers(1, 7))
    o = [draw(st.integers(1, min(6, memory))) for _ in range(n)]
    s = [draw(st.integers(0, memory - oi)) for oi in o]
    a = draw(st.lists(st.integers(0, 6), min_size=n, max_size=n)) if draw(st.booleans()) else None
    return Instance.from_arrays(s, o, memory, a)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_instances())
def test_bounds_never_exceed_the_optimum(inst):
    res = solve_exact(inst)
    assert res.status.value == "optimal"
    cb = combinatorial_bound(inst)
    assert trivial_bound(inst) <= cb <= res.objective
    assert lp_bound(inst).bound <= res.objective + 1e-6
