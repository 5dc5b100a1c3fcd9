"""Online arrivals (SPEC section 5): receding-horizon Sorted-F, online FCFS / MC-SF, metrics.

The fast online executor skips re-plans whose list is never read and computes Phase 1 lazily;
it is checked against a literal round-by-round reference written from SPEC section 5 alone, and
against the offline executors where they must agree (all arrivals at 0; FCFS).
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import instances
from hypothesis import given, settings
from hypothesis import strategies as st

from lpsched.executor import execute
from lpsched.generators.arrivals import nominal_capacity, trace_arrival_rounds, trace_window
from lpsched.generators.workloads import generate
from lpsched.instance import Instance
from lpsched.policies.baselines import fcfs_order
from lpsched.policies.online import effective_arrivals, online_fcfs, online_mcsf, online_sorted_f
from lpsched.policies.registry import run_policy
from lpsched.policies.sorted_f import phase1_batches
from lpsched.schedule import Schedule, latency_stats
from lpsched.timing import to_seconds


def reference_online(inst: Instance, policy: str, replan_every: int | None = None) -> list[int]:
    """SPEC section 5 literally: every round t, requests visible by t (arrived, or at the last
    multiple of H) that have not started form the waiting set; when new ones became visible,
    re-plan (Sorted-F Phase 1 with ``dp`` over the waiting set, or sort by o / arrival); walk the
    current list and admit while the brute-force memory check passes, stopping at the first
    failure."""
    s, o, a = inst.prefill.tolist(), inst.decode.tolist(), inst.arrival.tolist()
    M, n = inst.memory, inst.n
    H = replan_every
    vis = [a[i] if H is None else -(-a[i] // H) * H for i in range(n)]
    start: list[int | None] = [None] * n
    plan: list[int] = []
    seen: set[int] = set()
    t = 0
    while None in start:
        waiting = [i for i in range(n) if start[i] is None and vis[i] <= t]
        if set(waiting) - seen:
            seen |= set(waiting)
            if policy == "sorted-f":
                sub = inst.subset(waiting)
                plan = [waiting[j] for b in phase1_batches(sub, "dp") for j in b.tolist()]
            elif policy == "mcsf":
                plan = sorted(waiting, key=lambda i: (o[i], i))
            else:
                plan = sorted(waiting, key=lambda i: (a[i], i))
        for h in [i for i in plan if start[i] is None]:
            ok = all(
                sum(
                    s[j] + r - start[j]
                    for j in range(n)
                    if start[j] is not None and start[j] < r <= start[j] + o[j]
                )
                + s[h]
                + r
                - t
                <= M
                for r in range(t + 1, t + o[h] + 1)
            )
            if not ok:
                break
            start[h] = t
        t += 1
    return [int(x) for x in start]  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(instances(max_n=7, max_arrival=8), st.sampled_from([None, 1, 2, 3]))
def test_matches_round_by_round_reference(inst, replan_every):
    for policy, fn, opts in (
        ("sorted-f", online_sorted_f, {"solver": "dp"}),
        ("mcsf", online_mcsf, {}),
        ("fcfs", online_fcfs, {}),
    ):
        sched = fn(inst, replan_every=replan_every, **opts)
        assert sched.start.tolist() == reference_online(inst, policy, replan_every), policy
        assert sched.feasible
        assert np.all(sched.start >= inst.arrival)


@settings(max_examples=100, deadline=None)
@given(instances(max_n=8))
def test_online_fcfs_is_the_fcfs_executor(inst):
    assert online_fcfs(inst).start.tolist() == execute(inst, fcfs_order(inst)).start.tolist()


@pytest.mark.parametrize("solver", ["swap", "quantile"])
def test_offline_arrivals_give_offline_sorted_f(solver):
    inst = generate("mix-80-20", 400 if solver == "swap" else 1200, 16492, seed=5)
    assert np.array_equal(
        online_sorted_f(inst, solver=solver).start,
        run_policy(inst, "sorted-f", solver=solver).start,
    )
    assert np.array_equal(online_mcsf(inst).start, run_policy(inst, "mcsf").start)


def test_online_runs_and_registry():
    inst = generate("conversation", 1500, 16492, seed=1, arrival_rate=0.06)
    for policy in ("online-fcfs", "online-mcsf", "online-sorted-f"):
        sched = run_policy(inst, policy, replan_every=None)
        assert sched.feasible
    h4 = run_policy(inst, "online-sorted-f", replan_every=4).check()
    assert np.all(h4.start >= effective_arrivals(inst.arrival, 4))
    with pytest.raises(ValueError):
        effective_arrivals(inst.arrival, 0)
    with pytest.raises(KeyError, match="strict"):
        run_policy(inst, "online-mcsf+backfill")


def test_effective_arrivals_hand_case():
    assert effective_arrivals(np.array([0, 1, 3, 4, 5]), 4).tolist() == [0, 4, 4, 4, 8]
    assert effective_arrivals(np.array([0, 7]), None).tolist() == [0, 7]


def test_latency_stats_hand_case():
    # o = [1, 2, 3, 4], M large, all start at arrival 0 -> latencies 1, 2, 3, 4
    inst = Instance.from_arrays([0, 0, 0, 0], [1, 2, 3, 4], 100)
    sched = Schedule(inst, [0, 0, 0, 0])
    st_ = latency_stats(sched)
    assert st_["mean_latency"] == 2.5 and st_["p50_latency"] == 2.5
    assert st_["p90_latency"] == pytest.approx(3.7) and st_["p99_latency"] == pytest.approx(3.97)
    assert st_["throughput"] == 1.0 and st_["token_throughput"] == 2.5
    assert st_["tel"] == 10 and st_["makespan"] == 4
    # a fixed round of 0.5 s (the former round_s) is the time model linear with base_s alone
    fixed = "linear:base_s=0.5,prefill_token_s=0,prefill_token2_s=0,decode_request_s=0,kv_token_s=0"
    sec = to_seconds(sched, fixed).stats()
    assert sec["mean_latency_s"] == 1.25 and sec["p99_latency_s"] == pytest.approx(0.5 * 3.97)


def test_trace_arrivals_and_window(tmp_path):
    assert trace_arrival_rounds(np.array([10.0, 10.05, 10.12, 11.0]), 0.05).tolist() == [
        0,
        1,
        2,
        20,
    ]
    with pytest.raises(ValueError):
        trace_arrival_rounds(np.array([0.0]), 0)
    p = tmp_path / "t.csv"
    p.write_text(
        "arrived_at,num_prefill_tokens,num_decode_tokens\n0.0,4,2\n1.0,3,1\n3.0,1,5\n4.0,2,2\n"
    )
    inst = trace_window(p, 3, 10, offset=1, round_s=0.5)
    assert inst.arrival.tolist() == [0, 4, 6] and inst.decode.tolist() == [1, 5, 2]
    # rate 1 request per round: span 3 s over 2 gaps -> round_s = 1.5 s
    inst = trace_window(p, 3, 10, offset=1, rate=1.0)
    assert inst.metadata["round_s"] == 1.5 and inst.arrival.tolist() == [0, 1, 2]
    with pytest.raises(ValueError):
        trace_window(p, 3, 10)


def test_nominal_capacity_hand_case():
    # A = o s + o (o+1)/2: (s=2, o=2) -> 4 + 3 = 7; (s=0, o=1) -> 1; mean 4; M = 20 -> 5
    assert nominal_capacity(np.array([2, 0]), np.array([2, 1]), 20) == 5.0


@pytest.mark.parametrize("bad", [1.7, 1.0, "3", 0, -2, True, 2**41, float("nan")])
def test_replan_every_is_validated_not_coerced(bad):
    # replan_every=1.7 was truncated to 1 and "3" was parsed; now each is a ValueError
    inst = Instance.from_arrays([1, 2, 3], [2, 2, 2], 10, [0, 1, 4])
    for policy in (online_fcfs, online_mcsf, online_sorted_f):
        with pytest.raises(
            ValueError, match=r"replan_every must be None .* integer .* \[1, 2\^40\]"
        ):
            policy(inst, replan_every=bad)
    with pytest.raises(ValueError, match="replan_every"):
        effective_arrivals(inst.arrival, bad)
    with pytest.raises(ValueError, match="replan_every"):
        run_policy(inst, "online-sorted-f", replan_every=bad)


def test_replan_every_accepts_numpy_integers():
    inst = Instance.from_arrays([1, 2, 3], [2, 2, 2], 10, [0, 1, 4])
    a = online_mcsf(inst, replan_every=np.int64(3))
    b = online_mcsf(inst, replan_every=3)
    assert a.start.tolist() == b.start.tolist() and a.info["replan_every"] == 3
    assert type(a.info["replan_every"]) is int
