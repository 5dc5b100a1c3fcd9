"""Incremental re-planning of receding-horizon Sorted-F (issue 13): identical to re-planning anew.

:class:`~lpsched.policies.planners.SortedFPlanner` keeps its sorted waiting set, the quantile
sample positions and the compiled batch kernel between events. Its schedules (and re-plan counts)
are compared with ``tests/reference/online.py``, a verbatim copy of the planner that re-planned
Phase 1 from the whole waiting set, on random instances with arrivals, for every Phase-1 solver and
re-planning period; the kernels are checked against numpy and brute force. Every test runs with the
compiled kernels and with their interpreted source (``backend`` fixture), so both routes of
:mod:`lpsched.kernels` are held to the same results.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import instances
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference.online import SortedFPlanner as ReferencePlanner
from reference.online import reference_online_sorted_f_starts

from lpsched.blind import BlindView, run_blind
from lpsched.generators.workloads import generate
from lpsched.instance import Instance
from lpsched.kernels import BACKEND
from lpsched.policies import planners
from lpsched.policies.amin import AMinPolicy, sorted_f_amin
from lpsched.policies.online import online_sorted_f

KERNELS = ("_merge_sorted", "_order_statistics", "lerp")
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
            monkeypatch.setattr(planners, name, getattr(planners, name).py_func)
        # the compiled batch kernel is the jit of this function
        monkeypatch.setattr(planners, "_quantile_batch", planners._quantile_batch_exact)
    return request.param


@st.composite
def arrival_instances(draw) -> Instance:
    """Up to 60 requests, arrivals spread over up to 80 rounds (bursts and gaps)."""
    n = draw(st.integers(1, 60))
    memory = draw(st.integers(4, 120))
    o = draw(st.lists(st.integers(1, min(memory, 25)), min_size=n, max_size=n))
    s = [draw(st.integers(0, memory - oi)) for oi in o]
    horizon = draw(st.integers(0, 80))
    a = draw(st.lists(st.integers(0, horizon), min_size=n, max_size=n))
    return Instance.from_arrays(s, o, memory, a, name="hyp-arrivals")


def _same(inst, solver, replan_every=None, **options):
    sched = online_sorted_f(inst, solver, replan_every=replan_every, **options)
    starts, replans = reference_online_sorted_f_starts(
        inst, solver, replan_every=replan_every, **options
    )
    assert sched.start.tolist() == starts
    assert sched.info["replans"] == replans


quantile_options = st.fixed_dictionaries(
    {
        "sample_size": st.integers(1, 12),
        "quantile": st.sampled_from([0.05, 0.3, 0.5, 0.75, 0.9, 1.0]),
        "seed": st.integers(0, 3),
    }
)


@settings(max_examples=150, **PATCHED)
@given(
    arrival_instances(),
    st.sampled_from([None, 1, 2, 5]),
    quantile_options,
)
def test_quantile_matches_replanning_from_scratch(backend, inst, replan_every, options):
    # small samples put the thresholds anywhere and make continuation batches common
    _same(inst, "quantile", replan_every, **options)


@settings(max_examples=60, **PATCHED)
@given(
    instances(max_n=7, max_arrival=8),
    st.sampled_from(["dp", "swap", "quantile", "auto"]),
    st.sampled_from([None, 1, 3]),
)
def test_every_solver_matches_replanning_from_scratch(backend, inst, solver, replan_every):
    _same(inst, solver, replan_every, sample_size=3)


@settings(max_examples=25, **PATCHED)
@given(arrival_instances(), st.sampled_from(["dp", "swap"]), st.sampled_from([None, 4]))
def test_dp_and_swap_match_replanning_from_scratch(backend, inst, solver, replan_every):
    if solver == "dp" and inst.n > 30:
        inst = inst.subset(list(range(30)))
    _same(inst, solver, replan_every)


@pytest.mark.parametrize(
    ("load", "replan_every"), [(0.5, None), (1.0, None), (2.0, None), (2.0, 16)]
)
def test_workload_matches_replanning_from_scratch(backend, load, replan_every):
    # 1,500 requests of the benchmark's workload: the waiting set grows to hundreds under
    # overload, the first-batch samples repeat (cache hits) and batches continue
    inst = generate("conversation", 1500, 16492, seed=3, arrival_rate=load * 0.0629)
    _same(inst, "auto", replan_every)


def test_draw_cache_eviction_changes_nothing(backend, monkeypatch):
    monkeypatch.setattr(planners, "_DRAW_CACHE", 2)
    inst = generate("conversation", 600, 16492, seed=4, arrival_rate=0.12)
    _same(inst, "quantile")


@settings(max_examples=40, **PATCHED)
@given(arrival_instances(), st.integers(21, 30))
def test_large_memory_uses_exact_best_prefix(backend, inst, shift):
    # M >= 2^21: sum(o) k^2 may exceed 2^63, so the batch runs interpreted (Python integers);
    # prefills and M scaled (decode lengths, hence rounds, kept small)
    big = Instance.from_arrays(
        inst.prefill << shift, inst.decode, inst.memory << shift, inst.arrival
    )
    assert big.memory >= planners._EXACT_MEMORY
    _same(big, "quantile", sample_size=4)


@settings(max_examples=40, **PATCHED)
@given(arrival_instances(), st.sampled_from(["quantile", "swap"]), st.booleans())
def test_sorted_f_amin_matches_replanning_from_scratch(backend, inst, solver, online):
    # Sorted-F+Amin re-adds evicted requests with raised estimates: keys change between adds
    lo = np.maximum(1, inst.decode // 3)
    inst = Instance.from_arrays(
        inst.prefill, inst.decode, inst.memory, inst.arrival, decode_lo=lo, decode_hi=inst.decode
    )
    sched = sorted_f_amin(inst, solver, online=online, sample_size=3)
    e = lo.tolist()
    planner = ReferencePlanner(inst.prefill.tolist(), e, inst.memory, solver, sample_size=3)
    ref = run_blind(inst, AMinPolicy(BlindView.of(inst, "interval"), planner, e, online=online))
    assert sched.start.tolist() == ref.start.tolist()
    assert sched.runs.tolist() == ref.runs.tolist()
    assert sched.info["replans"] == planner.replans


@settings(max_examples=300, **PATCHED)
@given(
    st.lists(st.integers(-(2**40), 2**40), min_size=1, max_size=300),
    st.floats(0.0, 1.0, exclude_min=True),
)
def test_linear_quantile_is_numpys(backend, values, q):
    v = np.sort(np.asarray(values, dtype=np.int64))
    lo, hi, gamma = planners._order_statistics(v.size, q)
    assert planners.lerp(v[lo], v[hi], gamma) == np.quantile(v, q)


@settings(max_examples=200, **PATCHED)
@given(st.data())
def test_merge_sorted_is_a_sorted_union(backend, data):
    # brute force: drop the gone positions, add the joined requests, sort by (key, index)
    n = data.draw(st.integers(1, 40))
    key_by = np.asarray(data.draw(st.lists(st.integers(0, 5), min_size=n, max_size=n)))
    perm = data.draw(st.permutations(range(n)))
    m = data.draw(st.integers(0, n))
    present = sorted(perm[:m], key=lambda i: (key_by[i], i))
    gone = sorted(data.draw(st.sets(st.integers(0, m - 1), max_size=m)) if m else [])
    joined = list(perm[m:][: data.draw(st.integers(0, n - m))])
    key = np.zeros(n, dtype=np.int64)
    idx = np.zeros(n, dtype=np.int64)
    key[:m] = key_by[present]
    idx[:m] = present
    out_key = np.full(n, -1, dtype=np.int64)
    out_idx = np.full(n, -1, dtype=np.int64)
    w = planners._merge_sorted(
        key,
        idx,
        m,
        np.asarray(gone, dtype=np.int64),
        np.asarray(joined, dtype=np.int64),
        key_by.astype(np.int64),
        out_key,
        out_idx,
    )
    want = sorted(
        [present[p] for p in range(m) if p not in set(gone)] + joined,
        key=lambda i: (key_by[i], i),
    )
    assert out_idx[:w].tolist() == want
    assert out_key[:w].tolist() == key_by[want].tolist()
