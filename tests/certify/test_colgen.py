"""Column generation for the time-indexed LP (lpsched.certify.methods.colgen): the pricing
kernel against a direct sum, the converged value against the full LP at the same horizon and
windows, every Lagrangian bound below the LP and below a brute-force optimum."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference.brute_force import brute_force_tel, tiny_instances
from reference.shipped import EXACT as EXACT_DIR

from lpsched.certify import lp_bound
from lpsched.certify.methods.colgen import colgen_lp_bound
from lpsched.formulations.horizon import horizon_t1
from lpsched.generators.small import scaled_mix
from lpsched.instance import Instance
from lpsched.io import read_instance
from lpsched.policies.local_search import best_heuristic
from lpsched.schedule import Schedule
from lpsched.solvers.colgen import _second_differences
from lpsched.solvers.pricing import compress_idle, memory_use, price_starts
from lpsched.solvers.progress import Observer

EXACT = sorted(EXACT_DIR.glob("*.json"))
REL = 1e-6


def _direct_price(lo, hi, s, o, a, lam):
    """min_k and argmin_k of c_k + sum_{t=k+1}^{k+o} lam_t (s + t - k), written from SPEC
    section 3 (one sum per start, lam_t = 0 beyond the array)."""
    out_k, out_v = [], []
    for u in range(lo.size):
        vals = []
        for k in range(int(lo[u]), int(hi[u]) + 1):
            mem = sum(lam[t] * (s[u] + t - k) for t in range(k + 1, k + o[u] + 1) if t < lam.size)
            vals.append(k + o[u] - a[u] + mem)
        j = int(np.argmin(vals))
        out_k.append(int(lo[u]) + j)
        out_v.append(vals[j])
    return np.array(out_k), np.array(out_v)


def _kernel_args(rng, units: int, rounds: int, negative: bool):
    o = rng.integers(1, 8, units)
    s = rng.integers(0, 10, units)
    a = rng.integers(0, 5, units)
    lo = a.copy()
    hi = lo + rng.integers(0, rounds, units)
    lam = np.zeros(rounds + 1)
    lam[1:] = rng.random(rounds) * rng.integers(0, 2, rounds)
    if negative:
        lam[1:] -= 0.05 * rng.random(rounds)
    p0 = np.cumsum(lam)
    p1 = np.cumsum(np.arange(lam.size) * lam)
    nz = np.flatnonzero(lam)
    last = int(nz[-1]) if nz.size else 0
    return (lo, hi, s, o, a, p0, p1, last, float(np.minimum(lam, 0.0).sum())), lam


@pytest.mark.parametrize("seed", range(6))
def test_price_starts_equals_the_direct_sum_compiled_and_interpreted(seed):
    rng = np.random.default_rng(seed)
    args, lam = _kernel_args(rng, 12, 30, negative=seed % 2 == 1)
    k_ref, v_ref = _direct_price(*args[:5], lam)
    kernel_k, kernel_v = price_starts(*args)
    plain = getattr(price_starts, "py_func", price_starts)
    plain_k, plain_v = plain(*args)
    np.testing.assert_allclose(kernel_v, v_ref, rtol=1e-12, atol=1e-9)
    np.testing.assert_array_equal(kernel_k, plain_k)  # identical both ways, bit for bit
    np.testing.assert_array_equal(kernel_v, plain_v)
    # the argmin is a true minimiser (ties may pick another start of the same value)
    np.testing.assert_allclose(v_ref, _direct_price(*args[:5], lam)[1])
    assert (kernel_k >= args[0]).all() and (kernel_k <= args[1]).all()


def test_price_starts_stops_at_the_last_price():
    # one unit, s = 0, o = 2, window 0..10, price 5 in round 2 only: start 0 costs 2 + 5*2,
    # start 1 costs 3 + 5*1, start 2 (after the price) costs 4, later starts cost more
    lam = np.array([0.0, 0.0, 5.0])
    args = (
        np.array([0]),
        np.array([10]),
        np.array([0]),
        np.array([2]),
        np.array([0]),
        np.cumsum(lam),
        np.cumsum(np.arange(3) * lam),
        2,
    )
    k, v = price_starts(*args)
    assert k.tolist() == [2] and v.tolist() == [4.0]


@pytest.mark.parametrize("seed", range(3))
def test_memory_use_is_the_schedule_memory_compiled_and_interpreted(seed):
    inst = scaled_mix(40, seed)
    sched = best_heuristic(inst)
    rounds = sched.makespan - 3  # later rounds dropped
    args = (
        sched.start.astype(np.int64),
        inst.prefill.astype(np.int64),
        inst.decode.astype(np.int64),
        np.ones(inst.n, dtype=np.int64),
        rounds,
    )
    use = memory_use(*args)
    np.testing.assert_array_equal(use[1:], sched.memory_at(np.arange(1, rounds + 1)))
    assert use[0] == 0.0 and use.size == rounds + 1
    np.testing.assert_array_equal(use, getattr(memory_use, "py_func", memory_use)(*args))


def _check_against_lp(instance: Instance, **kw) -> None:
    seen: list[float] = []
    res = colgen_lp_bound(
        instance, time_limit=None, threads=1, observer=Observer(on_bound=seen.append), **kw
    )
    horizon = kw.get("horizon")
    full = lp_bound(instance, horizon, windows=kw.get("windows", True) if horizon else None)
    lp = full.bound
    assert res.info["converged"]
    assert res.horizon == full.horizon
    assert res.info["lp_value"] == pytest.approx(lp, rel=REL)
    assert res.bound <= lp * (1 + REL) + 1e-9
    assert res.bound == pytest.approx(lp, rel=1e-5)
    assert seen and all(b <= lp * (1 + REL) + 1e-9 for b in seen)
    assert all(x < y for x, y in zip(seen, seen[1:], strict=False))  # strictly better each time
    assert res.bound == seen[-1]


@pytest.mark.parametrize("n,seed", [(30, 0), (30, 1), (30, 2), (80, 0)])
def test_converged_value_is_the_full_lp_on_scaled_mix(n, seed):
    _check_against_lp(scaled_mix(n, seed))


@pytest.mark.parametrize("path", EXACT, ids=[p.stem for p in EXACT])
def test_converged_value_is_the_full_lp_on_shipped_instances(path):
    _check_against_lp(read_instance(path))


def test_converged_value_at_t1_without_windows():
    inst = scaled_mix(30, 1)
    _check_against_lp(inst, horizon=horizon_t1(inst), windows=False)


@pytest.mark.parametrize("solver", ["primal", "ipm"])
def test_difference_form_master_converges_to_the_full_lp(solver):
    # memory variables tied to the columns by second differences: the same LP, solved by the
    # primal simplex or the interior point method (the choice at n = 2000)
    _check_against_lp(scaled_mix(30, 2), difference=True, master_solver=solver)
    _check_against_lp(read_instance(EXACT[0]), difference=True, master_solver=solver)


def test_second_differences_sum_twice_to_the_memory_of_the_column():
    # columns (k, s, o) including o = 1 (rounds k+2 and k+o+1 coincide) and s = 0
    k = np.array([0, 3, 5, 2, 0])
    s = np.array([4, 0, 7, 1, 0])
    o = np.array([3, 1, 1, 5, 2])
    rounds, value = _second_differences(k, s, o)
    for j in range(k.size):
        second = np.zeros(20)
        np.add.at(second, rounds[j], value[j])
        memory = np.cumsum(np.cumsum(second))  # m_t = sum_{r<=t} sum_{q<=r} second_q
        expected = [s[j] + t - k[j] if k[j] < t <= k[j] + o[j] else 0 for t in range(20)]
        np.testing.assert_array_equal(memory, expected)
        used = rounds[j][value[j] != 0]
        assert used.size == np.unique(used).size  # no round twice in a column


def test_plain_column_generation_converges_to_the_same_value():
    inst = scaled_mix(30, 0)
    a = colgen_lp_bound(inst, time_limit=None, alpha=0.0, seed_policies=(), deflect=0.0)
    b = colgen_lp_bound(inst, time_limit=None, alpha=0.5)
    assert a.info["lp_value"] == pytest.approx(b.info["lp_value"], rel=REL)


def test_arrivals_on_the_instance_axis():
    base = read_instance(EXACT[0])
    late = base.replace(arrival=base.arrival + 1000)
    sched = best_heuristic(late)
    res = colgen_lp_bound(late, sched, time_limit=None)
    ref = colgen_lp_bound(base, Schedule(base, sched.start - 1000), time_limit=None)
    assert res.info["time_shift"] == 1000
    assert res.info["lp_value"] == pytest.approx(ref.info["lp_value"], rel=1e-9)


def test_stopped_early_the_bound_is_still_below_the_lp():
    inst = scaled_mix(80, 1)
    full = lp_bound(inst).bound
    res = colgen_lp_bound(inst, time_limit=None, max_iterations=2)
    assert not res.info["converged"]
    assert "lp_value" not in res.info
    assert int(inst.decode.sum()) <= res.bound <= full
    assert res.info["master_value"] >= full * (1 - REL)  # a restricted master is above the LP


@pytest.mark.parametrize("n,seed", [(80, 0), (100, 1)])
def test_the_ascent_alone_comes_close_to_the_lp(n, seed):
    inst = scaled_mix(n, seed)
    full = lp_bound(inst).bound
    res = colgen_lp_bound(inst, time_limit=None, max_iterations=0)
    assert res.info["iterations"] == 0 and not res.info["converged"]
    assert 0.999 * full <= res.bound <= full * (1 + REL)


def test_time_limit_is_honoured():
    res = colgen_lp_bound(scaled_mix(200, 0), time_limit=0.5)
    assert res.runtime_s < 0.5 + 30  # a hang guard
    # wherever the limit stopped it: a valid bound, between sum o and the LP value (17,288.59
    # at this horizon, reached in about 1.3 s without a limit)
    assert int(scaled_mix(200, 0).decode.sum()) <= res.bound <= 17288.5915


def test_compress_idle_removes_idle_rounds_after_the_last_arrival():
    inst = Instance.from_arrays([1, 2, 0], [2, 3, 1], 10, [0, 0, 4], name="gaps")
    # request 0 in rounds 1-2; idle 3..5; request 2 (arrives 4) in round 7; request 1 in 11-13
    start = np.array([0, 10, 6])
    out = compress_idle(inst, start)
    # rounds 3-4 are before the last arrival (kept); 5-6 idle -> request 2 starts at 4; 8-10
    # idle -> request 1 starts at 5
    assert out.tolist() == [0, 5, 4]
    assert Schedule(inst, out).feasible
    assert (out + inst.decode).max() <= horizon_t1(inst)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
@given(inst=tiny_instances(), alpha=st.sampled_from([0.0, 0.5, 0.9]))
def test_bound_below_brute_force_and_equal_to_the_lp(inst, alpha):
    seen: list[float] = []
    res = colgen_lp_bound(
        inst, time_limit=None, observer=Observer(on_bound=seen.append), alpha=alpha
    )
    opt = brute_force_tel(inst)
    lp = lp_bound(inst).bound
    assert all(b <= opt + 1e-6 for b in seen)
    assert res.bound <= lp + 1e-6 * max(1.0, lp)
    assert res.info["converged"]
    assert res.info["lp_value"] == pytest.approx(lp, rel=REL, abs=1e-7)


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(alpha=1.0), "alpha"),
        (dict(alpha=-0.1), "alpha"),
        (dict(seed_policies=("nope",)), "seed policy"),
        (dict(ascent=-1), "ascent"),
        (dict(ascent=2.5), "ascent"),
        (dict(ascent_share=0.0), "ascent_share"),
        (dict(master_solver="simplex"), "master_solver"),
        (dict(deflect=-1.0), "deflect"),
        (dict(time_limit=0), "time_limit"),
        (dict(threads=0), "threads"),
    ],
)
def test_bad_options_are_refused(kw, match):
    with pytest.raises(ValueError, match=match):
        colgen_lp_bound(scaled_mix(5, 0), **kw)
