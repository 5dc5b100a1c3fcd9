"""Empirical ratios against the bound 48: the sweep, its summary and the reproduction."""

from __future__ import annotations

import csv

import matplotlib

matplotlib.use("Agg")


from lpsched.certify import solve_exact  # noqa: E402
from lpsched.generators.small import RATIO_WORKLOADS  # noqa: E402
from lpsched.instance import Instance  # noqa: E402
from lpsched.policies.registry import run_policy  # noqa: E402
from lpsched.research.cache import OptimumCache  # noqa: E402
from lpsched.research.reproductions.ratios import ratio_summary, ratio_sweep  # noqa: E402
from lpsched.research.reproductions.ratios import run as reproduce_ratios  # noqa: E402


def test_hand_checked_sorted_f_ratio():
    # Sorted-F batches {0, 1} (F = 4/4 = 1, ties {0, 3} by index), then {2}, then {3};
    # strict order: 0, 1 at 0; 2 (8 tokens) waits for 1 (done at 3); 3 waits for 2: TEL 15.
    # OPT 10: 2 and 1 at round 0 (8 + 1 = 9 tokens), 0 and 3 at round 1.
    inst = Instance.from_arrays([3, 0, 7, 2], [1, 3, 1, 3], 9)
    assert run_policy(inst, "sorted-f").tel == 15
    res = solve_exact(inst)
    assert str(res.status) == "optimal" and res.objective == 10
    cache = OptimumCache()
    assert cache.get(inst) == (10, 10.0, True)
    assert cache.get(inst) == (10, 10.0, True) and cache.solves == 1


def test_ratio_sweep_and_resume(tmp_path):
    path = tmp_path / "r.csv"
    kw = dict(workloads=RATIO_WORKLOADS, sizes=(4,), memories=(12,), seeds=(0,), progress=False)
    rows = ratio_sweep(tmp_path, name="r", **kw)
    assert len(rows) == 4 * 5
    for r in rows:
        assert float(r["ratio_opt"]) >= 1 - 1e-12
        assert float(r["ratio_lp"]) >= float(r["ratio_opt"]) - 1e-9
        assert int(r["tel"]) >= int(r["opt"]) and r["opt_status"] == "optimal"
        assert float(r["lp_bound"]) <= int(r["opt"]) + 1e-6
    before = path.read_text()
    rows2 = ratio_sweep(tmp_path, name="r", **kw)
    assert path.read_text() == before and len(rows2) == len(rows)
    table = ratio_summary(rows)
    assert "sorted-f" in table and "| all" in table


def test_reproduce_ratios_small(tmp_path):
    out = tmp_path / "ratios"
    text = reproduce_ratios(
        out,
        workloads=("uniform", "mix"),
        sizes=(4,),
        memories=(12,),
        seeds=(0, 1),
        search_steps=5,
        search_restarts=1,
        save_to=tmp_path / "adv",
        progress=False,
    )
    assert "Worst TEL(sorted-f) / OPT" in text
    for name in (
        "ratios.csv",
        "ratios.md",
        "ratios.png",
        "adversarial.csv",
        "adversarial-sorted-f.json",
    ):
        assert (out / name).exists(), name
    with (out / "ratios.csv").open() as fh:
        assert len(list(csv.DictReader(fh))) == 2 * 2 * 5
    assert list((tmp_path / "adv").glob("*.json"))
    assert (
        reproduce_ratios(
            out,
            workloads=("uniform", "mix"),
            sizes=(4,),
            memories=(12,),
            seeds=(0, 1),
            search_steps=5,
            search_restarts=1,
            progress=False,
        )
        == text
    )  # resumed: nothing recomputed
