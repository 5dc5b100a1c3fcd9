"""Each algorithm under its theorem's assumptions: the workloads that meet them, the
per-policy applicability, the sweep against proven optima and the per-algorithm summary."""

from __future__ import annotations

import csv
import dataclasses

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from lpsched.generators.small import (  # noqa: E402
    ASSUMPTION_WORKLOADS,
    RATIO_WORKLOADS,
    common_prompt,
    identical_requests,
    small_instance,
    small_peaks,
)
from lpsched.policies.registry import POLICIES  # noqa: E402
from lpsched.research.reproductions.ratios import ALL_WORKLOADS, theorem_sweep  # noqa: E402
from lpsched.research.reproductions.ratios import run as reproduce_ratios  # noqa: E402
from lpsched.research.reproductions.theorems import (  # noqa: E402
    THEOREM_POLICIES,
    THEOREMS,
    applies,
    peak_alpha,
    theorem_summary,
)

#: The theorem policies, all registered (sps, gba and gba-d of arXiv 2601.22996 included).
REGISTERED = tuple(p for p in THEOREM_POLICIES if p in POLICIES)


def test_every_theorem_policy_is_registered():
    assert REGISTERED == THEOREM_POLICIES == ("sorted-f", "svf", "sps", "gba", "gba-d", "volume")


@settings(max_examples=150, deadline=None)
@given(
    workload=st.sampled_from(sorted(ASSUMPTION_WORKLOADS)),
    n=st.integers(1, 40),
    memory=st.integers(2, 500),
    seed=st.integers(0, 2**32 - 1),
)
def test_assumption_workloads_meet_their_assumptions(workload, n, memory, seed):
    inst = small_instance(workload, n, memory, seed=seed)
    again = small_instance(workload, n, memory, seed=seed)
    direct = ASSUMPTION_WORKLOADS[workload](n, seed=seed, memory=memory)
    for other in (again, direct):  # deterministic per seed, one draw for both entry points
        assert other.prefill.tolist() == inst.prefill.tolist()
        assert other.decode.tolist() == inst.decode.tolist()
    s, o = inst.prefill.tolist(), inst.decode.tolist()
    assert inst.n == n and inst.memory == memory and inst.offline
    assert all(si >= 0 and oi >= 1 and si + oi <= memory for si, oi in zip(s, o, strict=True))
    assert inst.metadata["workload"] == workload and inst.metadata["seed"] == seed
    if workload == "small-peaks":
        assert 2 * max(si + oi for si, oi in zip(s, o, strict=True)) <= memory  # alpha <= 1/2
        assert peak_alpha(inst) <= 0.5
        assert THEOREMS["svf"].bound(inst) <= 5
    if workload in ("common-prompt", "identical"):
        assert len(set(s)) == 1
    if workload == "identical":
        assert len(set(o)) == 1
    # every theorem declared for this workload holds on its instances
    for theorem in THEOREMS.values():
        if theorem.workloads is None or workload in theorem.workloads:
            assert theorem.meets(inst), (theorem.policy, inst.name)


def test_assumption_generators_are_seeded():
    for gen in (small_peaks, common_prompt, identical_requests):
        draws = {tuple(gen(8, seed=k, memory=64).decode.tolist()) for k in range(8)}
        assert len(draws) > 1  # the seed matters
        assert gen(8, seed=3, memory=64).name == gen(8, seed=3, memory=64).name


@pytest.mark.parametrize("workload", sorted(ASSUMPTION_WORKLOADS))
@pytest.mark.parametrize("bad", [dict(n=0, memory=10), dict(n=3, memory=1)])
def test_assumption_workloads_refuse_bad_sizes(workload, bad):
    with pytest.raises(ValueError):
        small_instance(workload, **bad)
    with pytest.raises(ValueError):
        ASSUMPTION_WORKLOADS[workload](bad["n"], seed=0, memory=bad["memory"])


def test_ratio_workloads_are_unchanged():
    assert RATIO_WORKLOADS == ("uniform", "mix", "heavy-prefill", "heavy-decode")
    assert ALL_WORKLOADS == (*RATIO_WORKLOADS, *ASSUMPTION_WORKLOADS)


def test_applicability():
    for w in ALL_WORKLOADS:
        for p in ("sorted-f", "volume", "fcfs", "sorted-lp", "sorted-f+backfill"):
            assert applies(p, w)
        assert applies("svf", w) == (w == "small-peaks")
        assert applies("sps", w) == (w == "identical")
        for p in ("gba", "gba-d"):
            assert applies(p, w) == (w in ("common-prompt", "identical"))


def test_constants():
    inst = small_peaks(6, seed=1, memory=16)
    alpha = peak_alpha(inst)
    assert alpha == max(inst.size.tolist()) / 16
    assert THEOREMS["svf"].bound(inst) == pytest.approx(1 + 2 / (1 - alpha))
    assert THEOREMS["sorted-f"].bound(inst) == 48
    assert THEOREMS["sps"].bound(inst) == 2
    assert (
        THEOREMS["gba"].bound(inst)
        == THEOREMS["gba-d"].bound(inst)
        == pytest.approx(10.67, abs=0.01)
    )
    assert THEOREMS["volume"].bound is None
    varied = common_prompt(6, seed=0, memory=40)
    assert len(set(varied.decode.tolist())) > 1
    assert THEOREMS["gba"].meets(varied) and not THEOREMS["sps"].meets(varied)
    assert not THEOREMS["gba"].meets(small_instance("uniform", 6, 32, seed=0))


def test_theorem_sweep_against_proven_optima(tmp_path):
    rows = theorem_sweep(
        tmp_path,
        workloads=ALL_WORKLOADS,
        sizes=(4,),
        memories=(12,),
        seeds=(0,),
        policies=REGISTERED,
        progress=False,
    )
    seen = {(r["workload"], r["policy"]) for r in rows}
    assert seen == {(w, p) for w in ALL_WORKLOADS for p in REGISTERED if applies(p, w)}
    for r in rows:
        assert r["opt_status"] == "optimal"
        assert float(r["ratio_opt"]) >= 1 - 1e-12 and int(r["tel"]) >= int(r["opt"])
        alpha = float(r["alpha"])
        assert 0 < alpha <= 1
        if r["policy"] == "volume":
            assert r["constant"] == "" and r["ratio_constant"] == ""
            continue
        c = float(r["constant"])
        expected = {"sorted-f": 48, "svf": 1 + 2 / (1 - alpha), "sps": 2}.get(r["policy"], 32 / 3)
        assert c == pytest.approx(expected, rel=1e-5)
        assert float(r["ratio_constant"]) == pytest.approx(float(r["ratio_opt"]) / c, rel=1e-4)
        assert float(r["ratio_constant"]) <= 1  # each theorem holds on these instances
    text = theorem_summary(rows, REGISTERED)
    lines = {line.split("|")[1].strip(): line for line in text.splitlines()[2:]}
    assert set(lines) == set(REGISTERED)
    assert "| 48 " in lines["sorted-f"] and "| within" in lines["sorted-f"]
    assert "1 + 2/(1 - alpha)" in lines["svf"] and "| within" in lines["svf"]
    assert "small-peaks" in lines["svf"]
    assert "no proven constant" in lines["volume"]
    if "sps" in lines:
        assert "| 2 " in lines["sps"] and "| within" in lines["sps"]
    for p in ("gba", "gba-d"):
        if p in lines:
            assert "10.67" in lines[p] and "| within" in lines[p]
    assert "above the constant" not in text


def test_summary_flags_a_ratio_above_the_constant():
    row = dict(
        workload="small-peaks",
        n=4,
        memory=12,
        seed=0,
        opt_status="optimal",
        alpha=0.5,
    )
    rows = [
        {**row, "policy": "svf", "ratio_opt": 6.0, "constant": 5.0},
        {**row, "policy": "svf", "ratio_opt": 1.0, "constant": 5.0, "seed": 1},
        {**row, "policy": "volume", "ratio_opt": 1.2, "constant": ""},
    ]
    text = theorem_summary(rows, ("svf", "sps", "volume"))
    svf_line = next(line for line in text.splitlines() if line.startswith("| svf"))
    assert "above the constant: our reading is wrong" in svf_line
    assert "1.200" in svf_line and "seed=0" in svf_line  # worst ratio / constant, its instance
    sps_line = next(line for line in text.splitlines() if line.startswith("| sps"))
    assert "no instance meets its assumptions" in sps_line


def test_an_instance_outside_the_theorem_is_refused(tmp_path, monkeypatch):
    # declare (wrongly) that svf's theorem needs one prompt length and covers every workload
    wrong = dataclasses.replace(THEOREMS["gba"], policy="svf", workloads=None)
    monkeypatch.setitem(THEOREMS, "svf", wrong)
    with pytest.raises(ValueError, match="does not meet the assumption"):
        theorem_sweep(
            tmp_path,
            workloads=("uniform",),
            sizes=(4,),
            memories=(12,),
            seeds=(0,),
            policies=("svf",),
            progress=False,
        )


def test_reproduce_reuses_the_optima_and_resumes(tmp_path):
    out = tmp_path / "ratios"
    kw = dict(
        workloads=("small-peaks", "identical"),
        sizes=(4,),
        memories=(12,),
        seeds=(0, 1),
        search_restarts=0,
        plot=False,
        progress=False,
    )
    text = reproduce_ratios(out, **kw)
    assert "Each algorithm under its theorem's assumptions" in text
    assert "1 + 2/(1 - alpha)" in text and "| 48 " in text
    missing = [p for p in THEOREM_POLICIES if p not in POLICIES]
    assert ("Not registered, left out" in text) == bool(missing)
    with (out / "ratios.csv").open() as fh:
        first = {(r["workload"], r["seed"]): r["exact_s"] for r in csv.DictReader(fh)}
    with (out / "theorems.csv").open() as fh:
        second = list(csv.DictReader(fh))
    assert len(first) == 4 and second
    for r in second:  # the optimum of the first sweep, not a second solve
        assert r["exact_s"] == first[(r["workload"], r["seed"])]
    assert {r["policy"] for r in second if r["workload"] == "identical"} == {
        p for p in REGISTERED if applies(p, "identical")
    }
    assert reproduce_ratios(out, **kw) == text  # resumed: nothing recomputed
