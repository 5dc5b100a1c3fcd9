"""3-Partition gadgets (SPEC section 8): generators, exact search, reduction, threshold."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from lpsched.certify import solve_exact
from lpsched.generators.three_partition import (
    gadget,
    partition_schedule,
    solve_three_partition,
    tel_threshold,
    three_partition_instance,
    three_partition_no,
    three_partition_yes,
    value_range,
)
from lpsched.policies.registry import run_policy


def brute_force_yes(values, B) -> bool:
    """Reference: try every assignment of positions to triples (small m only)."""
    vals = list(values)
    n = len(vals)

    def rec(rest):
        if not rest:
            return True
        first = rest[0]
        for a, b in itertools.combinations(rest[1:], 2):
            if vals[first] + vals[a] + vals[b] == B:
                if rec([x for x in rest if x not in (first, a, b)]):
                    return True
        return False

    return rec(list(range(n)))


def test_value_range_and_threshold():
    assert value_range(13) == (4, 6)  # 3.25 < a < 6.5
    assert value_range(12) == (4, 5)  # 3 < a < 6
    assert [tel_threshold(m) for m in (1, 2, 3, 4)] == [3, 9, 18, 30]


@pytest.mark.parametrize("m,B", [(1, 6), (2, 13), (3, 20), (4, 31), (5, 40), (8, 101)])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_yes_instances_are_valid(m, B, seed):
    tp = three_partition_yes(m, B, seed=seed)
    lo, hi = value_range(B)
    assert len(tp.values) == 3 * m and sum(tp.values) == m * B
    assert all(B < 4 * a and 2 * a < B for a in tp.values)
    assert all(lo <= a <= hi for a in tp.values)
    assert sorted(j for t in tp.partition for j in t) == list(range(3 * m))
    assert all(sum(tp.values[j] for j in t) == B for t in tp.partition)


@pytest.mark.parametrize("m,B", [(2, 13), (2, 20), (3, 20), (3, 31), (4, 30)])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_no_instances_are_valid_and_have_no_partition(m, B, seed):
    tp = three_partition_no(m, B, seed=seed)
    assert tp.partition is None
    assert sum(tp.values) == m * B
    assert all(B < 4 * a and 2 * a < B for a in tp.values)
    assert not brute_force_yes(tp.values, B)


def test_residue_construction_for_large_m():
    tp = three_partition_no(10, 100, seed=0)  # m > NO_SEARCH_MAX_M: residues mod 2
    assert tp.certificate == "residues mod p"
    assert sum(tp.values) == 1000 and all(25 < a < 50 for a in tp.values)
    assert len({a % 2 for a in tp.values}) == 1  # all odd: a triple of odds is odd, B even
    assert solve_three_partition(tp.values, 100) is None


def test_distinct_values():
    tp = three_partition_yes(4, 80, seed=3, distinct=True)
    assert len(set(tp.values)) == 12
    tp = three_partition_no(8, 200, seed=0, distinct=True)
    assert len(set(tp.values)) == 24 and solve_three_partition(tp.values, 200) is None


@pytest.mark.parametrize("seed", range(40))
def test_exact_search_agrees_with_brute_force(seed):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 4))
    B = int(rng.integers(9, 30))
    lo, hi = value_range(B)
    vals = rng.integers(lo, hi + 1, size=3 * m).tolist()
    vals[-1] += m * B - sum(vals)  # right sum, maybe out of range: the search does not care
    found = solve_three_partition(vals, B)
    assert (found is not None) == brute_force_yes(vals, B)
    if found is not None:
        assert all(sum(vals[j] for j in t) == B for t in found)


def test_known_small_cases():
    assert solve_three_partition([4, 4, 4, 4, 4, 6], 13) is None
    assert solve_three_partition([4, 4, 5, 4, 4, 5], 13) == [(0, 1, 2), (3, 4, 5)]
    assert solve_three_partition([1, 2], 3) is None


@pytest.mark.parametrize(
    "bad",
    [
        dict(m=0, B=13),
        dict(m=-1, B=13),
        dict(m=2, B=8),
        dict(m=2, B=5),
        dict(m=2.5, B=13),
        dict(m=2, B=13, distinct=True),
    ],
)
def test_bad_parameters_raise(bad):
    with pytest.raises(ValueError):
        gadget(**bad)


def test_no_instance_errors():
    with pytest.raises(ValueError, match="m >= 2"):
        three_partition_no(1, 13)
    with pytest.raises(ValueError, match="no-instance"):
        three_partition_no(2, 12)  # values 4 or 5, sum 24: all 4s, a yes-instance
    with pytest.raises(ValueError, match=r"use B = 35 \(or any B >= 41\)"):  # 36, 37 fail
        three_partition_yes(2, 13, distinct=True)


def test_reduction_instance():
    tp = three_partition_yes(3, 20, seed=5)
    inst = three_partition_instance(tp)
    assert inst.memory == 23 and inst.n == 9
    assert inst.prefill.tolist() == list(tp.values) and set(inst.decode.tolist()) == {1}
    md = inst.metadata
    assert md["tel_threshold"] == 18 and md["yes"] and md["m"] == 3 and md["B"] == 20
    assert md["partition"] == [list(t) for t in tp.partition]
    # four requests never fit in one round
    smallest4 = sorted(tp.values)[:4]
    assert sum(a + 1 for a in smallest4) > inst.memory


@pytest.mark.parametrize("m,B", [(1, 7), (2, 13), (3, 20), (5, 41), (12, 400)])
def test_planted_partition_schedule_reaches_threshold(m, B):
    inst = gadget(m, B, yes=True, seed=11)
    sched = partition_schedule(inst).check()
    assert sched.tel == tel_threshold(m) == 3 * m * (m + 1) // 2
    assert sched.peak_memory <= B + 3


def test_partition_schedule_errors():
    inst = gadget(2, 13, yes=False)
    with pytest.raises(ValueError, match="no partition"):
        partition_schedule(inst)
    yes = gadget(2, 13, yes=True)
    with pytest.raises(ValueError):
        partition_schedule(yes, [[0, 1, 2], [2, 3, 4]])


def test_heuristics_never_beat_threshold():
    for seed in range(5):
        inst = gadget(3, 20, yes=bool(seed % 2), seed=seed)
        for p in ("fcfs", "mcsf", "size", "sorted-f"):
            assert run_policy(inst, p).check().tel >= tel_threshold(3)


@pytest.mark.parametrize("solver", ["highs", "cpsat"])
@pytest.mark.parametrize("m,B", [(2, 13), (2, 21), (3, 20), (3, 27)])
@pytest.mark.parametrize("seed", [0, 1])
def test_exact_solver_decides_the_gadget(solver, m, B, seed):
    thr = tel_threshold(m)
    yes = solve_exact(gadget(m, B, yes=True, seed=seed), solver=solver, time_limit=30)
    assert str(yes.status) == "optimal" and yes.objective == thr
    yes.schedule.check()
    no = solve_exact(gadget(m, B, yes=False, seed=seed), solver=solver, time_limit=30)
    assert str(no.status) == "optimal" and no.objective > thr
    assert no.bound > thr


# ----------------------------------------------------------------------- advice on B (hardening)


def _advised_B(msg: str) -> list[int]:
    """The values of B an error message advises ("use B >= X", "B = X works", ...)."""
    import re

    return [int(x) for x in re.findall(r"B (?:>=|=) (\d+)", msg.split(";", 1)[1])]


def test_distinct_yes_too_small_B_gives_an_error_not_stop_iteration():
    # the search for a suggested B used to stop at 10 B + 100 and end in StopIteration
    with pytest.raises(ValueError, match=r"B = 10 is too small .* use B = 359 \(or any B >= 365\)"):
        three_partition_yes(20, 10, distinct=True)


@pytest.mark.parametrize("m", [1, 2, 3, 4, 5, 6, 7])
def test_distinct_yes_advice_is_right(m):
    with pytest.raises(ValueError) as info:
        three_partition_yes(m, 6, distinct=True)
    advised = _advised_B(str(info.value))
    assert advised
    for B in sorted(set(advised + [max(advised) + d for d in range(1, 8)])):
        tp = three_partition_yes(m, B, distinct=True, seed=3)
        lo, hi = value_range(B)
        assert len(set(tp.values)) == 3 * m and all(lo <= v <= hi for v in tp.values)
        assert all(sum(tp.values[j] for j in t) == B for t in tp.partition)


def test_distinct_yes_falls_back_to_the_construction():
    # the least B for 3m distinct values: the values are forced, the sampling fails; the
    # construction gives a valid yes-instance instead of an error
    for m, B in ((4, 71), (5, 87), (6, 107)):
        tp = three_partition_yes(m, B, distinct=True, max_tries=5)
        assert tp.is_yes and len(set(tp.values)) == 3 * m and sum(tp.values) == m * B
        assert all(sum(tp.values[j] for j in t) == B for t in tp.partition)


def test_distinct_no_advice_is_right():
    # "use B >= 51" for --m 3 --no --distinct was wrong: B = 51 then failed
    for B in (10, 51):
        with pytest.raises(ValueError) as info:
            three_partition_no(3, B, distinct=True)
        msg = str(info.value)
        assert "51 or distinct" not in msg and "use B >= 51" not in msg
        (advised,) = _advised_B(msg)
        tp = three_partition_no(3, advised, distinct=True)
        assert not tp.is_yes and len(set(tp.values)) == 9
        assert solve_three_partition(tp.values, advised) is None


def test_no_instance_advice_without_distinct_is_right():
    # B = 12: every value is 4 or 5 and the sum forces all 4s; the advice names a B that works
    with pytest.raises(ValueError) as info:
        three_partition_no(3, 12)
    (advised,) = _advised_B(str(info.value))
    assert solve_three_partition(three_partition_no(3, advised).values, advised) is None


def test_planted_construction_exists_exactly_when_distinct_values_can():
    """The construction behind the fallback and the advice succeeds at every B where 3m distinct
    allowed values can sum to mB at all, and its triples are valid."""
    from lpsched.generators.three_partition import _distinct_possible, _planted_distinct

    for m in range(1, 13):
        for B in range(6, 40 * m + 150):
            triples = _planted_distinct(m, B)
            assert (triples is not None) == _distinct_possible(m, B), (m, B)
            if triples is not None:
                lo, hi = value_range(B)
                flat = [v for t in triples for v in t]
                assert len(triples) == m and len(set(flat)) == 3 * m
                assert all(lo <= v <= hi for v in flat) and all(sum(t) == B for t in triples)
