"""The algorithms reproduction with the blind policies: their rows at a tiny size, the
two-point table, what knowing the decode lengths is worth, and the blind names that are not
registered yet left out cleanly."""

from __future__ import annotations

import csv
from pathlib import Path

from lpsched.policies.registry import POLICIES
from lpsched.research.reproductions import algorithms as alg
from lpsched.research.reproductions.algorithm_claims import PROVEN, TOLD, knows
from lpsched.research.reproductions.knowing import knowing_table

BLIND = ("gsa", "gsa-spec", "svf-1bit", "rect", "response", "route")


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def test_every_blind_policy_has_a_row_with_what_it_is_told_and_its_ratio():
    for name in BLIND:
        assert name in alg.ALGORITHM_POLICIES
        assert knows(name) in ("nothing", "class") and name in PROVEN
    assert TOLD["svf-1bit"] == "its class o_i > T" and knows("svf") == "lengths"
    assert knows("amin") == "intervals" and knows("no-such") == "unknown"


def test_blind_rows_two_point_table_and_the_worth_of_knowing(tmp_path):
    registered = [p for p in BLIND if p in POLICIES]
    policies = ["mcsf", "fcfs", "vllm", *BLIND]
    text = alg.run(
        tmp_path,
        seeds=[0],
        sizes=[12],
        time_limits=1,
        policies=policies,
        burst=False,
        progress=False,
    )
    rows = _rows(tmp_path / "algorithms.csv")
    tp_rows = _rows(tmp_path / "algorithms-two-point.csv")
    tp_bounds = _rows(tmp_path / "algorithms-two-point-bounds.csv")
    assert {r["policy"] for r in rows} == {"mcsf", "fcfs", "vllm", *registered}
    assert len(rows) == 3 * (3 + len(registered))  # paper and two common-prompt budgets
    assert sorted(b["workload"] for b in tp_bounds) == sorted(alg.TWO_POINT)
    assert len(tp_rows) == len(alg.TWO_POINT) * (3 + len(registered))
    bound = {b["workload"]: float(b["bound"]) for b in tp_bounds}
    tel = {(r["workload"], r["policy"]): int(r["tel"]) for r in tp_rows}
    for (w, _), t in tel.items():
        assert t >= bound[w] - 1e-6
    # the numbers the two-point module documents
    assert tel[("two-point", "fcfs")] == tel[("two-point", "vllm")] == 185_892
    assert tel[("two-point", "mcsf")] == 13_448
    assert tel[("two-point-s8", "fcfs")] == 81_011 and tel[("two-point-s8", "vllm")] == 3_903
    if "gsa" in POLICIES:
        assert tel[("two-point", "gsa")] < tel[("two-point", "fcfs")]
    for p in registered:
        assert f"| {p} " in text
    assert "## The two-point instance" in text and "two-point s=8 M=256 n=200" in text
    assert "## What knowing the decode lengths is worth" in text
    absent = [p for p in BLIND if p not in POLICIES]
    if absent:
        assert "left out: " + ", ".join(absent) in text


def test_knowing_table_takes_the_best_of_each_side():
    def row(seed, policy, tel):
        return {"seed": seed, "policy": policy, "tel": tel}

    rows = [
        row("0", "mcsf", "100"),
        row("0", "sorted-f", "90"),
        row("0", "fcfs", "300"),
        row("0", "svf-1bit", "180"),
        row("0", "amin", "10"),  # told intervals: neither side
        row("1", "mcsf", "50"),
        row("1", "gsa", "75"),
        row("1", "vllm", ""),  # a refusal
        row("2", "fcfs", "7"),  # no clairvoyant TEL: left out
    ]
    text = knowing_table(rows, lambda r: ((0, 0, 0), "g"), lambda r: (r["seed"],))
    line = next(x for x in text.splitlines() if x.startswith("| g "))
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[1] == "2"
    assert cells[2] == "128 (svf-1bit 1, gsa 1)"  # (180 + 75) / 2
    assert cells[3] == "1.750 / 2.000"  # 180/90, 75/50
    assert cells[4] == "188 (fcfs 1, gsa 1)" and cells[5] == "2.417 / 3.333"
    assert cells[6] == "70 (sorted-f 1, mcsf 1)"
    assert knowing_table([], lambda r: ((0, 0, 0), ""), lambda r: ()).startswith("No instance")
