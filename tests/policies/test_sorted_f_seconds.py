"""Sorted-F in seconds (``sorted-f-seconds``, ours): Sorted-F (swap) under ``unit`` and under any
constant round duration, a local minimum of F_s, a feasible schedule by an independent check."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from conftest import instances
from hypothesis import given, settings
from hypothesis import strategies as st

from lpsched.generators.workloads import generate
from lpsched.instance import Instance
from lpsched.policies.registry import POLICIES, run_policy
from lpsched.policies.sorted_f import F, sorted_f_order
from lpsched.policies.sorted_f_seconds import (
    DEFAULT_TIME_MODEL,
    batch_seconds_ratio,
    select_seconds,
    sorted_f_seconds_order,
)
from lpsched.timing import TimeModel, TimeModelError, parse_time_model, time_model
from lpsched.timing.builtin import linear

#: A constant round duration (50 ms, whatever the load): F_s = 0.05 F, the same batches.
CONSTANT = "linear:base_s=0.05,prefill_token_s=0,prefill_token2_s=0,decode_request_s=0,kv_token_s=0"


def independent_violations(inst: Instance, start: np.ndarray) -> list[str]:
    """SPEC section 2 from scratch, round by round: ``p_i >= a_i`` and, in every round ``t``,
    the tokens held ``sum over p_i < t <= p_i + o_i of (s_i + t - p_i)`` at most ``M``."""
    s, o, a = inst.prefill.tolist(), inst.decode.tolist(), inst.arrival.tolist()
    p = [int(x) for x in start]
    bad = [f"request {i} starts before its arrival" for i in range(inst.n) if p[i] < a[i]]
    for t in range(1, max(pi + oi for pi, oi in zip(p, o, strict=True)) + 1):
        held = sum(s[i] + t - p[i] for i in range(inst.n) if p[i] < t <= p[i] + o[i])
        if held > inst.memory:
            bad.append(f"round {t}: {held} tokens > M = {inst.memory}")
    return bad


def f_s_exact(model: str, o: list[int], s: list[int]) -> float:
    """``F_s`` of a ``linear`` profile in closed form, exactly: ``T(X) / k`` with ``T = R base_s
    + decode_request_s sum o + kv_token_s A + sum (prefill_token_s s + prefill_token2_s s^2)``,
    ``R = sum o / k`` and ``A = sum (o s + o (o + 1) / 2)``."""
    c = time_model(model).values
    k = len(o)
    area = sum(oi * si + oi * (oi + 1) // 2 for oi, si in zip(o, s, strict=True))
    T = (
        Fraction(sum(o), k) * Fraction(c["base_s"])
        + Fraction(c["decode_request_s"]) * sum(o)
        + Fraction(c["kv_token_s"]) * area
        + sum(
            Fraction(c["prefill_token_s"]) * si + Fraction(c["prefill_token2_s"]) * si * si
            for si in s
        )
    )
    return float(T / k)


def test_registered_with_its_time_model_option():
    pol = POLICIES["sorted-f-seconds"]
    assert pol.options == ("time_model",) and pol.backfill
    assert DEFAULT_TIME_MODEL == "llama2-70b-a100x2"


@pytest.mark.parametrize("model", ["unit", CONSTANT])
@settings(max_examples=150, deadline=None)
@given(inst=instances(max_n=14, max_memory=40, max_decode=12))
def test_a_constant_round_duration_gives_sorted_f(model, inst):
    """Under ``unit`` rho = 1 and F_s = F; under any constant duration F_s is F times it:
    the same batches, so the list of Sorted-F with the swap solver, and its schedule."""
    assert sorted_f_seconds_order(inst, model).tolist() == sorted_f_order(inst, "swap").tolist()


def test_unit_gives_sorted_f_on_the_paper_workload():
    inst = generate("paper-mix", 300, 16492, seed=3)
    mine = run_policy(inst, "sorted-f-seconds", time_model="unit")
    ref = run_policy(inst, "sorted-f", solver="swap")
    assert mine.start.tolist() == ref.start.tolist() and mine.tel == ref.tel


@pytest.mark.parametrize("model", ["llama2-70b-a100x2", "llama2-7b-a100x1"])
@pytest.mark.parametrize(
    "o, s", [([1], [0]), ([3, 1, 7], [5, 2000, 30]), ([200] * 12, list(range(0, 1200, 100)))]
)
def test_batch_ratio_is_the_closed_form(model, o, s):
    assert batch_seconds_ratio(np.array(o), np.array(s), model) == pytest.approx(
        f_s_exact(model, o, s), rel=1e-12
    )
    assert batch_seconds_ratio(np.array(o), np.array(s), "unit") == F(np.array(o))


@settings(max_examples=100, deadline=None)
@given(
    data=st.lists(st.tuples(st.integers(0, 3000), st.integers(1, 400)), min_size=1, max_size=12),
    slack=st.integers(0, 6000),
    model=st.sampled_from(["llama2-70b-a100x2", "llama2-7b-a100x1", "linear"]),
)
def test_the_batch_is_feasible_and_no_single_move_improves_it(data, slack, model):
    """The chosen batch fits M and is a local minimum of F_s: no add, remove or swap of one
    request that keeps it within M lowers F_s (checked one candidate at a time)."""
    s = np.array([x for x, _ in data])
    o = np.array([y for _, y in data])
    z = s + o
    memory = int(z.max()) + slack
    pos = select_seconds(o, z, memory, model)
    chosen = set(pos.tolist())
    assert pos.size and z[pos].sum() <= memory and pos.tolist() == sorted(chosen)

    def value(batch):
        b = sorted(batch)
        return batch_seconds_ratio(o[b], s[b], model)

    here = value(chosen)
    out = [j for j in range(o.size) if j not in chosen]
    moves = [chosen | {j} for j in out]
    moves += [chosen - {i} for i in chosen if len(chosen) > 1]
    moves += [(chosen - {i}) | {j} for i in chosen for j in out]
    for batch in moves:
        if z[sorted(batch)].sum() <= memory:
            assert value(batch) >= here * (1 - 1e-12), sorted(batch)


@pytest.mark.parametrize("model", ["llama2-70b-a100x2", "llama2-7b-a100x1"])
def test_schedule_is_feasible_by_an_independent_check(model):
    inst = generate("paper-mix", 120, 16492, seed=1)
    sched = run_policy(inst, "sorted-f-seconds", time_model=model).check()
    assert sorted(sched.info["order"].tolist()) == list(range(inst.n))
    assert independent_violations(inst, sched.start) == []
    assert (sched.completion == sched.start + inst.decode).all()
    assert run_policy(inst, "sorted-f-seconds+backfill", time_model=model).check().tel > 0


@settings(max_examples=60, deadline=None)
@given(inst=instances(max_n=10, max_memory=30, max_decode=8))
def test_feasible_on_small_instances(inst):
    sched = run_policy(inst, "sorted-f-seconds", time_model="llama2-7b-a100x1")
    assert independent_violations(inst, sched.start) == []


def test_an_unknown_or_malformed_time_model_is_refused():
    inst = generate("paper-mix", 20, 16492, seed=0)
    with pytest.raises(KeyError, match="unknown time model"):
        sorted_f_seconds_order(inst, "nope")
    with pytest.raises(TimeModelError):
        run_policy(inst, "sorted-f-seconds", time_model="linear:base_s=-1")


def _generic(spec: str):
    """The model ``spec`` behind a function that is not :func:`linear`: the general search."""
    model = parse_time_model(spec)
    return TimeModel(
        f"{model.name}-generic",
        lambda P, D, K, **c: linear(P, D, K, **c),
        parameters=model.parameters,
    )


@pytest.mark.parametrize("spec", ["llama2-70b-a100x2", "llama2-7b-a100x1", CONSTANT])
@settings(max_examples=80, deadline=None)
@given(inst=instances(max_n=14, max_memory=60, max_decode=12))
def test_the_affine_swap_search_is_the_general_one(spec, inst):
    """For a ``linear`` model the swap neighbourhood is pre-selected in O((k + r) log k) and only
    the sub-grid that can hold the best swap is evaluated; the batches are those of the whole
    grid, move for move."""
    fast = sorted_f_seconds_order(inst, spec)
    assert fast.tolist() == sorted_f_seconds_order(inst, _generic(spec)).tolist()


@pytest.mark.parametrize("spec", ["llama2-70b-a100x2", "llama2-7b-a100x1"])
def test_the_affine_swap_search_is_the_general_one_on_the_paper_workload(spec):
    inst = generate("paper-mix-subset", 300, 16492, seed=2)  # short prompts: large batches
    fast = sorted_f_seconds_order(inst, spec)
    assert fast.tolist() == sorted_f_seconds_order(inst, _generic(spec)).tolist()
