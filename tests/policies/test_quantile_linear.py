"""The linear ``quantile`` Phase 1 (issue 13): the batches of the former doubling-window walk
(``tests/reference/quantile.py``, commit b7a4cff) with the kernels compiled and interpreted, and
each kernel against a brute-force or numpy equivalent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference import quantile as reference_quantile

from lpsched.generators.workloads import generate
from lpsched.instance import Instance
from lpsched.kernels import BACKEND
from lpsched.policies import quantile
from lpsched.policies.quantile import QuantileGreedy
from lpsched.policies.sorted_f import phase1_batches, sorted_f_order

KERNELS = (
    "_quantile_batches",
    "_kth_waiting",
    "_next_below",
    "_best_prefix",
    "_remove_least",
    "_order_pair",
    "lerp",
    "_frac_le",
)
# the backend fixture patches module attributes once per test, the same for every example
# (too_slow too: a setting here replaces the conftest profile's list)
PATCHED = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
}


@pytest.fixture(params=["compiled", "python"])
def backend(request, monkeypatch):
    """Run with the kernels as :mod:`lpsched.kernels` built them, or with their Python source."""
    if request.param == "python":
        if BACKEND != "numba":
            pytest.skip("the kernels are interpreted already (numba missing or LPSCHED_NUMBA=0)")
        for name in KERNELS:
            monkeypatch.setattr(quantile, name, getattr(quantile, name).py_func)
    return request.param


def _reference(decode, size, memory, **params) -> list[list[int]]:
    ref = reference_quantile.QuantileGreedy(**params)
    return [b.tolist() for b in ref.batches(np.asarray(decode), np.asarray(size), memory)]


def _new(decode, size, memory, **params) -> list[list[int]]:
    got = QuantileGreedy(**params).batches(np.asarray(decode), np.asarray(size), memory)
    return [b.tolist() for b in got]


@st.composite
def outlier_inputs(draw):
    """``(decode, size, M)``: a bulk of short requests and a share of long-prefill ones (the
    outliers that the walk skips and that stay at the front), sizes ``<= M``."""
    memory = draw(st.integers(2, 400))
    n = draw(st.integers(1, 150))
    share = draw(st.sampled_from([0.0, 0.1, 0.3, 0.7]))
    decode, size = [], []
    for _ in range(n):
        o = draw(st.integers(1, max(1, min(memory, 30))))
        long = draw(st.floats(0, 1)) < share
        s = draw(st.integers(0, memory - o)) if long else draw(st.integers(0, min(5, memory - o)))
        decode.append(o)
        size.append(o + s)
    return decode, size, memory


@settings(max_examples=250, **PATCHED)
@given(
    outlier_inputs(),
    st.integers(1, 40),
    st.sampled_from([0.3, 0.5, 0.8, 0.9, 1.0]),
    st.integers(0, 5),
)
def test_batches_equal_reference(backend, data, sample_size, quantile, seed):
    decode, size, memory = data
    params = dict(sample_size=sample_size, quantile=quantile, seed=seed)
    assert _new(decode, size, memory, **params) == _reference(decode, size, memory, **params)


@settings(max_examples=60, **PATCHED)
@given(
    st.integers(1, 60),
    st.integers(2**21, 2**40),
    st.integers(0, 3),
    st.data(),
)
def test_batches_equal_reference_with_huge_lengths(backend, n, memory, seed, data):
    """``M >= 2**21``: the best prefix compares ``F`` by exact fractions, not products."""
    decode = data.draw(st.lists(st.integers(1, memory // 4), min_size=n, max_size=n))
    size = [o + data.draw(st.integers(0, memory - o)) for o in decode]
    params = dict(sample_size=8, quantile=0.9, seed=seed)
    assert _new(decode, size, memory, **params) == _reference(decode, size, memory, **params)


def test_huge_lengths_tie_goes_to_the_longer_prefix(backend):
    # o = (x, 3x), sizes = o, M = 4x with x = 2**30 (M >= 2**21: fractions, not products):
    # F({0}) = x = 4x / 4 = F({0, 1}) -> tie, the longer prefix.
    x = 2**30
    assert _new([x, 3 * x], [x, 3 * x], 4 * x, quantile=1.0) == [[0, 1]]
    assert _new([x, 3 * x + 1], [x, 3 * x + 1], 4 * x + 1, quantile=1.0) == [[0], [1]]


@pytest.mark.parametrize(
    "workload, n, seed", [("conversation", 3000, 0), ("mix-80-20", 3000, 1), ("code", 2000, 2)]
)
def test_workload_batches_equal_reference(backend, workload, n, seed):
    inst = generate(workload, n, 16492, seed=seed)
    expected = _reference(inst.decode, inst.size, inst.memory)
    assert _new(inst.decode, inst.size, inst.memory) == expected
    assert sorted_f_order(inst, "quantile").tolist() == [i for b in expected for i in b]
    assert [b.tolist() for b in phase1_batches(inst, "quantile")] == expected


def test_empty_and_single():
    empty = np.zeros(0, dtype=np.int64)
    assert QuantileGreedy().batches(empty, empty, 5) == []
    order, ends = QuantileGreedy().priority_list(empty, empty, 5)
    assert order.size == 0 and ends.size == 0
    assert _new([3], [4], 4) == [[0]]
    inst = Instance.from_arrays([0, 0, 0], [2, 1, 1], 2)
    # (o, index) order: requests 1, 2 (size 1 each), 0 (size 2), M = 2. The walk takes 1 and
    # 2 and stops at 0 (does not fit); F({1}) = 1 > F({1, 2}) = 2/4. Then 0 alone.
    assert [b.tolist() for b in phase1_batches(inst, "quantile", quantile=1.0)] == [[1, 2], [0]]
    # a sample larger than the instance is the whole waiting set, allocated as such
    huge = QuantileGreedy(sample_size=10**12)
    got = [b.tolist() for b in huge.batches(np.array([3, 1, 2]), np.array([4, 2, 3]), 10)]
    assert got == _reference([3, 1, 2], [4, 2, 3], 10, sample_size=10**12) == [[1, 2], [0]]


_BOTH_WAYS = """
import json, sys
sys.path.insert(0, {tests!r})
from lpsched.generators.workloads import generate
from lpsched.kernels import BACKEND
from lpsched.policies.quantile import QuantileGreedy
out = []
for workload, n, seed in {cases!r}:
    inst = generate(workload, n, 16492, seed=seed)
    order = QuantileGreedy(seed=seed).priority_list(inst.decode, inst.size, inst.memory)[0]
    out.append(order.tolist())
print(json.dumps([BACKEND, out]))
"""


def test_same_batches_without_numba():
    """A fresh interpreter with ``LPSCHED_NUMBA=0`` (numpy's own Generator, no numba at all)
    gives this process's lists, and the reference's."""
    cases = [("conversation", 1500, 3), ("summarization", 1200, 4)]
    env = dict(os.environ, LPSCHED_NUMBA="0")
    script = _BOTH_WAYS.format(tests=str(Path(__file__).parent), cases=cases)
    res = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    backend, lists = json.loads(res.stdout)
    assert backend == "python"
    for (workload, n, seed), got in zip(cases, lists, strict=True):
        inst = generate(workload, n, 16492, seed=seed)
        mine = QuantileGreedy(seed=seed).priority_list(inst.decode, inst.size, inst.memory)[0]
        assert got == mine.tolist()
        expected = _reference(inst.decode, inst.size, inst.memory, seed=seed)
        assert got == [i for b in expected for i in b]


# --------------------------------------------------------------------------- the kernels


@settings(max_examples=300, **PATCHED)
@given(
    st.lists(st.integers(0, 2**40), min_size=2, max_size=300)
    | st.lists(st.integers(0, 6), min_size=2, max_size=300),
    st.data(),
)
def test_order_pair_is_two_order_statistics(backend, values, data):
    lo = data.draw(st.integers(0, len(values) - 2))
    arr = np.asarray(values, dtype=np.int64)
    scratch = np.empty(arr.size, dtype=np.int64)
    got = quantile._order_pair(arr, lo, scratch)
    ranked = sorted(values)
    assert (int(got[0]), int(got[1])) == (ranked[lo], ranked[lo + 1])
    assert arr.tolist() == values  # the input is left alone


@settings(max_examples=300, **PATCHED)
@given(
    st.lists(st.integers(1, 2**40), min_size=1, max_size=300)
    | st.lists(st.integers(1, 50), min_size=1, max_size=300),
    st.floats(0.01, 1.0) | st.sampled_from([0.5, 0.9, 1.0, 1 / 3]),
)
def test_thresholds_equal_numpy_quantile(backend, values, q):
    """The kernel's threshold (virtual index, order pair, lerp) is ``numpy.quantile``, bit for
    bit."""
    arr = np.asarray(values, dtype=np.int64)
    k = arr.size
    virtual = (k - 1) * q
    if virtual >= k - 1:
        got = float(arr.max())
    else:
        below = np.floor(virtual)
        scratch = np.empty(k, dtype=np.int64)
        a, b = quantile._order_pair(arr, int(below), scratch)
        got = quantile.lerp(a, b, virtual - below)
    assert got == np.quantile(arr, q)


@settings(max_examples=400, **PATCHED)
@given(
    st.integers(0, 2**62),
    st.integers(1, 2**62),
    st.integers(0, 2**62),
    st.integers(1, 2**62),
)
def test_frac_le_is_exact(backend, a, b, c, d):
    assert bool(quantile._frac_le(a, b, c, d)) == (Fraction(a, b) <= Fraction(c, d))
    assert bool(quantile._frac_le(a, b, a, b))


@settings(max_examples=200, **PATCHED)
@given(st.lists(st.booleans(), min_size=1, max_size=300), st.data())
def test_tree_queries_against_scans(backend, waiting, data):
    """``_kth_waiting`` and ``_next_below`` on trees built as the kernel builds them."""
    n = len(waiting)
    sizes = data.draw(st.lists(st.integers(1, 50), min_size=n, max_size=n))
    flags = np.asarray(waiting)
    width = 1
    while width < n:
        width *= 2
    least = np.full(2 * width, quantile._REMOVED, dtype=np.int64)
    least[width : width + n] = np.where(flags, sizes, quantile._REMOVED)
    for node in range(width - 1, 0, -1):
        least[node] = min(least[2 * node], least[2 * node + 1])
    blocks = (n + quantile._BLOCK - 1) // quantile._BLOCK
    fenwick = np.zeros(blocks + 1, dtype=np.int64)
    for p in np.flatnonzero(flags):
        b = p // quantile._BLOCK + 1
        while b <= blocks:
            fenwick[b] += 1
            b += b & -b
    top = 1
    while 2 * top <= blocks:
        top *= 2
    live = np.flatnonzero(flags).tolist()
    for rank, p in enumerate(live):
        assert quantile._kth_waiting(fenwick, top, flags, rank) == p
    start = data.draw(st.integers(0, n - 1))
    theta = data.draw(st.integers(0, 55))
    expected = next((p for p in live if p >= start and sizes[p] <= theta), -1)
    assert quantile._next_below(least, width, start, float(theta)) == expected
