"""The blind policies under their theorems' assumptions: the regime workloads of arXiv
2607.09248, the theorem entries (GSA, GSA-Spec, 1-bit SVF, Rect, Response, Route), and the
worst-ratio search that never leaves a theorem's assumption."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lpsched.generators.small import REGIME_WORKLOADS, prompt_heavy, small_instance
from lpsched.policies.registry import POLICIES
from lpsched.research import adversarial
from lpsched.research.reproductions.ratios import run as reproduce_ratios
from lpsched.research.reproductions.theorems import (
    BLIND_THEOREM_POLICIES,
    THEOREMS,
    applies,
)

#: The regime each workload is drawn in, and the theorem it meets.
REGIME_THEOREM = {"large-prompts": "rect", "prompt-heavy": "rect", "response-heavy": "response"}


@settings(max_examples=150, deadline=None)
@given(
    workload=st.sampled_from(sorted(REGIME_WORKLOADS)),
    n=st.integers(1, 40),
    memory=st.integers(4, 500),
    seed=st.integers(0, 2**32 - 1),
)
def test_regime_workloads_meet_their_regimes(workload, n, memory, seed):
    inst = small_instance(workload, n, memory, seed=seed)
    again = REGIME_WORKLOADS[workload](n, seed=seed, memory=memory)
    assert inst.prefill.tolist() == again.prefill.tolist()
    assert inst.decode.tolist() == again.decode.tolist()
    s, o = inst.prefill.tolist(), inst.decode.tolist()
    assert inst.n == n and inst.memory == memory and inst.offline
    assert all(si >= 0 and oi >= 1 and si + oi <= memory for si, oi in zip(s, o, strict=True))
    if workload == "large-prompts":
        assert all(4 * si > memory for si in s)
    else:
        assert all(4 * si <= memory for si in s)
        heavy = workload == "prompt-heavy"
        assert all((oi <= si) == heavy for si, oi in zip(s, o, strict=True))
    assert THEOREMS[REGIME_THEOREM[workload]].meets(inst)
    other = "response" if REGIME_THEOREM[workload] == "rect" else "rect"
    assert not THEOREMS[other].meets(inst)


def test_prompt_heavy_needs_four_tokens():
    for memory in (2, 3):
        with pytest.raises(ValueError, match="M >= 4"):
            prompt_heavy(3, memory=memory)
    assert small_instance("large-prompts", 3, 2).prefill.tolist() == [1, 1, 1]


def test_blind_theorems():
    inst = small_instance("common-prompt", 5, 16, seed=0)
    assert set(BLIND_THEOREM_POLICIES) <= set(THEOREMS)
    for p in ("gsa", "gsa-spec"):
        assert THEOREMS[p].bound(inst) == pytest.approx(61.92)
        for w in ("common-prompt", "identical", "uniform", "response-heavy"):
            assert applies(p, w) == (w in ("common-prompt", "identical"))
    assert THEOREMS["rect"].bound(inst) == 36
    assert THEOREMS["response"].bound(inst) == pytest.approx(78.67, abs=0.01)
    assert THEOREMS["svf-1bit"].bound is None and THEOREMS["route"].bound is None
    for w in REGIME_WORKLOADS:
        assert applies("rect", w) == (w != "response-heavy")
        assert applies("response", w) == (w == "response-heavy")
        assert applies("route", w) and applies("svf-1bit", w)
    assert not THEOREMS["rect"].meets(small_instance("uniform", 6, 16, seed=2))


@pytest.mark.parametrize(
    ("theorem", "policy"),
    [("gsa", "gsa"), ("rect", "fcfs"), ("response", "fcfs"), ("sps", "sps")],
)
def test_the_search_never_leaves_the_assumption(theorem, policy, monkeypatch):
    if policy not in POLICIES:
        pytest.skip(f"{policy} is not registered")
    meets = THEOREMS[theorem].meets
    seen = []
    run = adversarial.run_policy

    def checked(inst, spec, **kwargs):
        assert meets(inst), inst
        seen.append(inst)
        return run(inst, spec, **kwargs)

    monkeypatch.setattr(adversarial, "run_policy", checked)
    res = adversarial.adversarial_search(
        policy,
        n=4,
        steps=12,
        restarts=2,
        seed=1,
        workload=THEOREMS[theorem].workloads,
        meets=meets,
        time_limit=5.0,
    )
    assert meets(res.instance) and res.ratio >= 1
    assert len(seen) == res.evaluations > 2  # the moves that meet the assumption were taken


def test_a_start_outside_the_assumption_is_refused():
    with pytest.raises(ValueError, match="does not meet"):
        adversarial.adversarial_search(
            "fcfs", n=4, steps=1, restarts=1, workload="uniform", meets=THEOREMS["rect"].meets
        )


def test_ratios_searches_each_blind_theorem(tmp_path):
    text = reproduce_ratios(
        tmp_path,
        workloads=["common-prompt", "response-heavy"],
        sizes=[4],
        memories=[12],
        seeds=[0],
        search_restarts=0,
        theorem_search_steps=3,
        theorem_search_restarts=1,
        plot=False,
        progress=False,
    )
    searched = [p for p in BLIND_THEOREM_POLICIES if p in POLICIES]
    rows = (tmp_path / "theorem-search.csv").read_text().splitlines()
    assert len(rows) == 1 + len(searched)
    for p in searched:
        assert f"| {p} " in text
        found = json.loads((tmp_path / f"theorem-search-{p}.json").read_text())
        assert found["metadata"]["policy"] == p
    absent = [p for p in BLIND_THEOREM_POLICIES if p not in POLICIES]
    if absent:
        skipped = "Blind policies not registered in this lpsched, skipped: "
        assert skipped + ", ".join(absent) in text
    assert "Not registered, left out" not in text
    blind_rows = (tmp_path / "theorems-blind.csv").read_text()
    assert "response-heavy" in blind_rows and "| response-heavy " in text
    if "gsa" in POLICIES:  # gsa only where its theorem holds
        assert all(
            line.split(",")[0] == "common-prompt"
            for line in blind_rows.splitlines()
            if ",gsa," in line
        )
