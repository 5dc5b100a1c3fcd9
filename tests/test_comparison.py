"""``compare_policies``: the comparison ``lpsched run`` prints, as a library function.

Checked: each row is the policy's own schedule (TEL from run_policy), the ratio to the best,
the paper's ratios and when they compare with the paper, the seconds read under the ``unit``
model equal the rounds, and a documented refusal is reported as skipped.
"""

from __future__ import annotations

import pytest

from lpsched.comparison import compare_policies
from lpsched.generators.workloads import generate
from lpsched.io import read_instance
from lpsched.policies.registry import run_policy
from lpsched.timing import parse_time_model

MIX12 = "instances/exact/mix12-s1.json"


def test_rows_are_the_policies_own_schedules():
    inst = read_instance(MIX12)
    names = ["fcfs", "mcsf", "sorted-f", "volume+backfill"]
    c = compare_policies(inst, names)
    assert [r["policy"] for r in c.results] == names and c.skipped == []
    tel = {r["policy"]: r["tel"] for r in c.results}
    assert tel == {name: run_policy(inst, name).tel for name in names}
    best = min(tel.values())
    assert [r["ratio_to_best"] for r in c.results] == [tel[n] / best for n in names]
    assert [(p["ratio"], p["value"]) for p in c.paper_ratios] == [
        ("FCFS / Sorted-F", tel["fcfs"] / tel["sorted-f"]),
        ("MC-SF / Sorted-F", tel["mcsf"] / tel["sorted-f"]),
    ]
    assert not c.papers_setting and not c.clocked and c.time_model is None


def test_seconds_under_the_unit_model_are_the_rounds():
    c = compare_policies(
        read_instance(MIX12), ["fcfs", "sorted-f"], time_model=parse_time_model("unit")
    )
    for r in c.results:
        assert r["tel_s"] == r["tel"] and r["mean_latency_s"] == r["mean_latency"]
    assert all(p["value_s"] == p["value"] for p in c.paper_ratios)


def test_the_papers_setting_needs_the_papers_mix_n_and_memory():
    assert compare_policies(generate("paper-mix", 2000, 16492, seed=1), ["fcfs"]).papers_setting
    assert not compare_policies(generate("code", 2000, 16492, seed=1), ["fcfs"]).papers_setting
    assert not compare_policies(generate("paper-mix", 200, 16492, seed=1), ["fcfs"]).papers_setting


def test_a_documented_refusal_is_skipped_and_an_unknown_name_raises():
    inst = read_instance(MIX12)
    c = compare_policies(inst, ["sorted-lp", "mcsf"], options={"lp": "full", "max_nonzeros": 10})
    assert [r["policy"] for r in c.results] == ["mcsf"] and c.results[0]["ratio_to_best"] == 1
    assert c.skipped[0]["policy"] == "sorted-lp" and "non-zeros" in c.skipped[0]["error"]
    with pytest.raises(KeyError, match="unknown policy"):
        compare_policies(inst, ["nosuch"])
