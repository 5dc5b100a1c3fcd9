"""Sorted-F Phase 1 (SPEC section 4): the exact dp solver against enumeration (tie rule included),
the reference lists, and the guarantees of the swap and quantile heuristics."""

from __future__ import annotations

from fractions import Fraction
from itertools import combinations

import numpy as np
import pytest
from conftest import instances
from hypothesis import given, settings
from hypothesis import strategies as st
from reference.cases import CASES

from lpsched.instance import Instance
from lpsched.policies.quantile import QuantileGreedy
from lpsched.policies.sorted_f import (
    DP_MAX_CELLS,
    F,
    phase1_batches,
    resolve_phase1,
    select_dp,
    select_swap,
    sorted_f_order,
)

# --------------------------------------------------------------------------- brute force


def f_exact(values) -> Fraction:
    """``F(X) = sum o / |X|^2`` as an exact fraction."""
    values = [int(v) for v in values]
    return Fraction(sum(values), len(values) ** 2)


def brute_select(decode, size, memory: int) -> tuple[int, ...]:
    """SPEC Phase-1 choice by enumeration of every non-empty ``X`` with ``sum size <= M``:
    least ``F`` (exact), then larger ``|X|``, then the lexicographically smallest tuple of
    ascending positions."""
    r = len(decode)
    best_key = None
    for k in range(1, r + 1):
        for X in combinations(range(r), k):
            if sum(int(size[i]) for i in X) <= memory:
                key = (f_exact([decode[i] for i in X]), -k, X)
                if best_key is None or key < best_key:
                    best_key = key
    return best_key[2]


def brute_phase1_order(instance: Instance) -> list[int]:
    """The Sorted-F list by repeated :func:`brute_select`; each batch sorted by ``o``, index."""
    o, z = instance.decode.tolist(), instance.size.tolist()
    remaining = list(range(instance.n))
    out: list[int] = []
    while remaining:
        pos = brute_select([o[i] for i in remaining], [z[i] for i in remaining], instance.memory)
        batch = [remaining[p] for p in pos]
        out += sorted(batch, key=lambda i: (o[i], i))
        remaining = [i for i in remaining if i not in batch]
    return out


@st.composite
def phase1_inputs(draw, max_r: int = 10):
    """``(decode, size, M)`` with ``size_i = s_i + o_i <= M``; the ``ties`` mode draws from
    tiny ranges so that many subsets share the least ``F``."""
    memory = draw(st.integers(1, 30))
    r = draw(st.integers(1, max_r))
    ties = draw(st.booleans())
    o_max = min(memory, 2 if ties else 10)
    decode = draw(st.lists(st.integers(1, o_max), min_size=r, max_size=r))
    size = [o + draw(st.integers(0, min(memory - o, 1 if ties else memory))) for o in decode]
    return decode, size, memory


def _check_batches(inst: Instance, batches) -> None:
    """Feasible, a partition of range(n), each batch sorted by (o, index)."""
    o, z = inst.decode.tolist(), inst.size.tolist()
    flat = [int(i) for b in batches for i in b]
    assert sorted(flat) == list(range(inst.n))
    for b in batches:
        b = [int(i) for i in b]
        assert len(b) >= 1
        assert sum(z[i] for i in b) <= inst.memory
        assert b == sorted(b, key=lambda i: (o[i], i))


def _instance(case) -> Instance:
    return Instance.from_arrays(
        case["prefill"],
        case["decode"],
        case["memory"],
        case["arrival"],
        ids=case["ids"],
        name=case["name"],
    )


# --------------------------------------------------------------------------- F and dp


def test_F_values():
    assert F(np.array([5])) == 5.0
    assert F(np.array([3, 1])) == 1.0
    assert F(np.array([1, 2, 3])) == pytest.approx(6 / 9)


def test_select_dp_hand_example():
    # o = (4, 1, 1, 6), size = (5, 3, 3, 7), M = 8.
    # Feasible: {0}: 4, {1}: 1, {2}: 1, {3}: 6, {0,1}: 5/4, {0,2}: 5/4, {1,2}: 2/4 (size 6),
    # {1,2,...} cannot take a third (6 + 5 > 8).  argmin = {1, 2} with F = 1/2.
    assert select_dp(np.array([4, 1, 1, 6]), np.array([5, 3, 3, 7]), 8).tolist() == [1, 2]


def test_select_dp_tie_rules():
    # o = (1, 4), size = (1, 4), M = 5: {0}: 1, {0, 1}: 5/4, {1}: 4 -> {0} (no tie).
    assert select_dp(np.array([1, 4]), np.array([1, 4]), 5).tolist() == [0]
    # o = (1, 3), size (1, 3), M = 4: {0}: 1, {0, 1}: 4/4 = 1 -> tie, the larger set wins.
    assert select_dp(np.array([1, 3]), np.array([1, 3]), 4).tolist() == [0, 1]
    # o = (2, 1, 1, 2), size all 2, M = 4: pairs have F = (o_i + o_j)/4, least 2/4 = {1, 2};
    # singles at best 1 > 1/2.
    assert select_dp(np.array([2, 1, 1, 2]), np.array([2, 2, 2, 2]), 4).tolist() == [1, 2]
    # o all 1, size all 2, M = 4: every pair has F = 1/2 -> lexicographically smallest {0, 1}.
    assert select_dp(np.array([1, 1, 1, 1]), np.array([2, 2, 2, 2]), 4).tolist() == [0, 1]
    # o = (1, 1, 2, 2), size = (3, 3, 1, 1), M = 4: {0, 1} too big (6); {0,2}, {0,3}, {1,2},
    # {1,3} have F = 3/4; {2, 3} has 4/4; triples do not fit; singles >= 1 -> {0, 2}.
    assert select_dp(np.array([1, 1, 2, 2]), np.array([3, 3, 1, 1]), 4).tolist() == [0, 2]


@settings(max_examples=300, deadline=None)
@given(phase1_inputs())
def test_select_dp_equals_enumeration(data):
    decode, size, memory = data
    got = select_dp(np.array(decode), np.array(size), memory).tolist()
    assert tuple(got) == brute_select(decode, size, memory)


@settings(max_examples=100, deadline=None)
@given(instances(max_n=8, arrivals=False))
def test_phase1_dp_equals_enumeration(inst):
    batches = phase1_batches(inst, "dp")
    _check_batches(inst, batches)
    assert np.concatenate(batches).tolist() == brute_phase1_order(inst)
    assert sorted_f_order(inst, "dp").tolist() == brute_phase1_order(inst)


OFFLINE = [pytest.param(c, id=c["name"]) for c in CASES if "sorted_f_order" in c]


@pytest.mark.parametrize("case", OFFLINE)
def test_phase1_dp_reproduces_reference_order(case):
    inst = _instance(case)
    batches = phase1_batches(inst, "dp")
    _check_batches(inst, batches)
    assert np.concatenate(batches).tolist() == case["sorted_f_order"]
    assert sorted_f_order(inst, "auto").tolist() == case["sorted_f_order"]  # auto = dp at n<=100


def test_brute_force_reproduces_reference_orders():
    """The enumeration above is itself right: it agrees with the shared reference lists."""
    for case in CASES:
        if "sorted_f_order" in case:
            assert brute_phase1_order(_instance(case)) == case["sorted_f_order"], case["name"]


def test_dp_refuses_huge_tables():
    r, memory = 2000, 100_000
    assert (r + 1) * (r + 1) * (memory + 1) > DP_MAX_CELLS
    with pytest.raises(MemoryError, match="swap or quantile"):
        select_dp(np.ones(r, dtype=np.int64), np.ones(r, dtype=np.int64), memory)


def test_resolve_phase1():
    assert resolve_phase1("auto", 1) == "dp"
    assert resolve_phase1("auto", 100) == "dp"
    assert resolve_phase1("auto", 101) == "swap"
    assert resolve_phase1("auto", 999) == "swap"
    assert resolve_phase1("auto", 2000) == "swap"  # the paper's choice at n = 2000
    assert resolve_phase1("auto", 10_000) == "swap"
    assert resolve_phase1("auto", 10_001) == "quantile"
    # dp only when its tables surely fit: n = 100 at M = 16,492 yes, at M = 50,000 no
    assert resolve_phase1("auto", 100, 16_492) == "dp"
    assert resolve_phase1("auto", 100, 50_000) == "swap"
    assert resolve_phase1("swap", 5) == "swap"
    with pytest.raises(ValueError, match="dp"):
        resolve_phase1("greedy", 5)
    with pytest.raises(ValueError):
        phase1_batches(Instance.from_arrays([0], [1], 1), "greedy")


# --------------------------------------------------------------------------- heuristics


@settings(max_examples=120, deadline=None)
@given(
    instances(max_n=30, max_memory=60, max_decode=20, arrivals=False),
    st.sampled_from(["swap", "quantile", "auto"]),
    st.integers(1, 40),
    st.sampled_from([0.5, 0.9, 1.0]),
    st.integers(0, 3),
)
def test_heuristic_batches_are_feasible_partitions(inst, solver, sample_size, quantile, seed):
    batches = phase1_batches(inst, solver, sample_size=sample_size, quantile=quantile, seed=seed)
    _check_batches(inst, batches)
    dp_first = phase1_batches(inst, "dp")[0]
    assert f_exact(inst.decode[dp_first]) <= f_exact(inst.decode[batches[0]])


@settings(max_examples=150, deadline=None)
@given(phase1_inputs(max_r=12))
def test_swap_is_a_local_minimum(data):
    """No single add, remove or swap that stays within M lowers F (the documented guarantee)."""
    decode, size, memory = data
    X = select_swap(np.array(decode), np.array(size), memory).tolist()
    assert X == sorted(set(X)) and X
    used = sum(size[i] for i in X)
    assert used <= memory
    fx = f_exact([decode[i] for i in X])
    out = [j for j in range(len(decode)) if j not in X]
    neighbours = [X + [j] for j in out if used + size[j] <= memory]
    if len(X) >= 2:
        neighbours += [[i for i in X if i != k] for k in X]
    neighbours += [
        [i for i in X if i != k] + [j] for k in X for j in out if used - size[k] + size[j] <= memory
    ]
    for Y in neighbours:
        assert f_exact([decode[i] for i in Y]) >= fx


def test_quantile_identical_requests():
    # Ten copies of (s=1, o=2), M = 10: sizes 3, three fit per batch; F falls with the prefix
    # length, so every batch is the longest prefix that fits.
    inst = Instance.from_arrays([1] * 10, [2] * 10, 10)
    batches = phase1_batches(inst, "quantile", quantile=1.0)
    assert [b.tolist() for b in batches] == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]


def test_quantile_prefix_tie_goes_to_the_longer_prefix():
    # r0 (o=1, size 1) and fifty (o=3, size 3), M = 4. Prefixes of the o-sorted list that fit:
    # {r0}: F = 1, {r0, r1}: F = 4/4 = 1 -> tie, the longer prefix. The rest go one by one.
    inst = Instance.from_arrays([0] * 51, [1] + [3] * 50, 4)
    batches = [b.tolist() for b in phase1_batches(inst, "quantile", quantile=1.0)]
    assert batches == [[0, 1]] + [[i] for i in range(2, 51)]
    assert [b.tolist() for b in phase1_batches(inst, "dp")] == batches


def test_quantile_greedy_reproducible():
    rng = np.random.default_rng(7)
    decode = rng.integers(1, 200, size=400)
    prefill = rng.integers(0, 300, size=400)
    inst = Instance.from_arrays(prefill, decode, 2000)
    runs = [
        QuantileGreedy(sample_size=16, quantile=0.8, seed=11).batches(
            inst.decode, inst.size, inst.memory
        )
        for _ in range(2)
    ]
    assert [b.tolist() for b in runs[0]] == [b.tolist() for b in runs[1]]
    a = sorted_f_order(inst, "quantile", sample_size=16, quantile=0.8, seed=11)
    b = sorted_f_order(inst, "quantile", sample_size=16, quantile=0.8, seed=11)
    assert a.tolist() == b.tolist()
    assert a.tolist() == np.concatenate(runs[0]).tolist()
    _check_batches(inst, runs[0])


@pytest.mark.parametrize(
    "kwargs", [dict(sample_size=0), dict(quantile=0.0), dict(quantile=1.5), dict(quantile=-0.1)]
)
def test_quantile_greedy_rejects_bad_parameters(kwargs):
    with pytest.raises(ValueError):
        QuantileGreedy(**kwargs)


# --------------------------------------------------------------------------- F ratio vs dp


def _random_instance(rng: np.random.Generator) -> Instance:
    """A trace-like instance: lognormal prefill and decode lengths, 20..60 requests."""
    n = int(rng.integers(20, 61))
    memory = int(rng.integers(60, 301))
    o = np.clip(np.rint(rng.lognormal(2.3, 0.9, n)), 1, memory // 2).astype(np.int64)
    s = np.rint(rng.lognormal(3.0, 1.0, n)).astype(np.int64)
    s = np.minimum(s, memory - o)
    return Instance.from_arrays(s, o, memory)


def _quantiles(x: np.ndarray) -> str:
    q = np.quantile(x, [0.5, 0.9, 0.99])
    return (
        f"mean {x.mean():.4f}  median {q[0]:.4f}  p90 {q[1]:.4f}  p99 {q[2]:.4f}  "
        f"max {x.max():.4f}  share==1 {np.mean(x == 1.0):.3f}"
    )


def test_first_batch_F_ratio_against_dp():
    """dp is the exact argmin: F(swap) >= F(dp) and F(quantile) >= F(dp) on 200 random
    instances (exact fractions). Prints the ratio distribution (``pytest -s``)."""
    rng = np.random.default_rng(20250806)
    ratios: dict[str, list[float]] = {"swap": [], "quantile": []}
    for _ in range(200):
        inst = _random_instance(rng)
        f_dp = f_exact(inst.decode[phase1_batches(inst, "dp")[0]])
        first = {
            "swap": select_swap(inst.decode, inst.size, inst.memory),
            "quantile": QuantileGreedy().batches(inst.decode, inst.size, inst.memory)[0],
        }
        for name, X in first.items():
            assert inst.size[X].sum() <= inst.memory
            f_h = f_exact(inst.decode[X])
            assert f_dp <= f_h, (name, inst.prefill.tolist(), inst.decode.tolist(), inst.memory)
            ratios[name].append(float(f_h / f_dp))
    print("\nF(first batch) / F(dp) over 200 random instances (n 20..60, M 60..300):")
    for name, r in ratios.items():
        print(f"  {name:8s} {_quantiles(np.asarray(r))}")
