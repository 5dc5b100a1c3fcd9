"""Empirical ratios, adversarial search, reproductions and plots (ratios.py, plotting.py)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from lpsched.experiments.adversarial import (  # noqa: E402
    adversarial_search,
    catalogue_rows,
    save_adversarial,
)
from lpsched.experiments.families import family_sweep  # noqa: E402
from lpsched.experiments.families import run as reproduce_families  # noqa: E402
from lpsched.experiments.ratios import ratio_summary, ratio_sweep  # noqa: E402
from lpsched.experiments.ratios import run as reproduce_ratios  # noqa: E402
from lpsched.generators.families import family_good_schedule, family_instance  # noqa: E402
from lpsched.generators.small import RATIO_WORKLOADS, small_instance  # noqa: E402
from lpsched.generators.three_partition import gadget  # noqa: E402
from lpsched.instance import Instance  # noqa: E402
from lpsched.io import read_instance  # noqa: E402
from lpsched.plotting import (  # noqa: E402
    plot_families,
    plot_gantt,
    plot_grouped_bars,
    plot_memory,
    plot_ratio_distribution,
    plot_rounds,
    plot_schedule,
    plot_search_history,
    save_figure,
)
from lpsched.policies.registry import run_policy  # noqa: E402
from lpsched.solvers.cache import OptimumCache  # noqa: E402
from lpsched.solvers.solve import solve_exact  # noqa: E402

ADVERSARIAL = Path(__file__).resolve().parents[2] / "instances" / "adversarial"


@pytest.mark.parametrize("workload", RATIO_WORKLOADS)
@pytest.mark.parametrize("memory", [8, 16, 40])
def test_small_instances(workload, memory):
    a = small_instance(workload, 7, memory, seed=3)
    b = small_instance(workload, 7, memory, seed=3)
    assert a.n == 7 and a.memory == memory and a.offline
    assert (a.prefill + a.decode <= memory).all() and (a.decode >= 1).all()
    assert (a.prefill >= 0).all()
    assert a.prefill.tolist() == b.prefill.tolist() and a.decode.tolist() == b.decode.tolist()
    assert a.metadata["workload"] == workload


def test_small_instance_shapes_of_workloads():
    hp = small_instance("heavy-prefill", 50, 32, seed=0)
    hd = small_instance("heavy-decode", 50, 32, seed=0)
    assert hp.prefill.mean() > 4 * hp.decode.mean()
    assert hd.decode.mean() > 4 * hd.prefill.mean()
    assert (hd.decode >= 8).all() and (hp.decode <= 4).all()


@pytest.mark.parametrize(
    "bad",
    [
        dict(workload="nope", n=3, memory=10),
        dict(workload="uniform", n=0, memory=10),
        dict(workload="mix", n=3, memory=1),
    ],
)
def test_small_instance_errors(bad):
    with pytest.raises(ValueError):
        small_instance(**bad)


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


def test_adversarial_search_small():
    res = adversarial_search(n=4, memory=10, steps=15, restarts=2, seed=1)
    assert res.ratio >= 1 and res.evaluations == 2 * 16
    assert all(b >= a for a, b in zip(res.history[:-1], res.history[1:], strict=True))
    md = res.instance.metadata
    assert (
        md["ratio"] == res.ratio
        and md["opt"] == res.opt
        and "adversarial_search(" in md["found_by"]
    )
    # the ratio is reproducible from the instance alone
    assert run_policy(res.instance, "sorted-f").tel == res.tel
    assert solve_exact(res.instance).objective == res.opt
    again = adversarial_search(n=4, memory=10, steps=15, restarts=2, seed=1)
    assert (
        again.ratio == res.ratio
        and again.instance.prefill.tolist() == res.instance.prefill.tolist()
    )


def test_adversarial_search_errors():
    with pytest.raises(KeyError, match="unknown policy"):
        adversarial_search("nope", steps=1)
    with pytest.raises(ValueError):
        adversarial_search(restarts=0)


def test_save_and_catalogue(tmp_path):
    res = adversarial_search(n=3, memory=8, steps=5, restarts=1, seed=0)
    path = save_adversarial(res, tmp_path, name="x")
    assert read_instance(path).metadata["opt"] == res.opt
    rows = catalogue_rows(tmp_path)
    assert rows[0]["name"] == "x" and rows[0]["best known TEL"] == res.opt
    assert rows[0]["proven optimal"] == "yes"


@pytest.mark.skipif(not ADVERSARIAL.is_dir(), reason="no shipped adversarial instances")
def test_shipped_adversarial_instances_reproduce():
    files = sorted(ADVERSARIAL.glob("*.json"))
    assert files
    for f in files:
        inst = read_instance(f)
        md = inst.metadata
        tel = run_policy(inst, md["policy"]).check().tel
        assert tel == md["tel"]
        res = solve_exact(inst, time_limit=30)
        assert res.objective == md["opt"]
        assert md["ratio"] == pytest.approx(tel / md["opt"])
        assert (str(res.status) == "optimal") == md["optimal"]


def test_family_sweep_and_reproduction(tmp_path):
    rows = family_sweep(tmp_path / "f", memories=(16, 100), progress=False)
    assert len(rows) == 3 * 2 * 4
    byk = {(r["family"], r["memory"], r["policy"]): r for r in rows}
    assert byk[("fcfs", "100", "fcfs")]["tel"] == "120"
    assert byk[("fcfs", "100", "fcfs")]["good_tel"] == "21"
    assert all(float(r["ratio"]) == 1.0 for r in rows if r["policy"] == "sorted-f")
    text = reproduce_families(tmp_path / "out", memories=(16, 64), progress=False)
    assert "fcfs" in text and (tmp_path / "out" / "families.png").stat().st_size > 10_000
    assert (tmp_path / "out" / "families.md").read_text() == text


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


def test_plots_have_labels(tmp_path):
    inst = gadget(3, 20, yes=True, seed=0)
    res = solve_exact(inst)
    figs = [
        plot_schedule(run_policy(inst, "fcfs")),
        plot_rounds(res.schedule),
        plot_gantt(family_good_schedule(family_instance("fcfs", 16))),
        plot_memory(run_policy(small_instance("uniform", 6, 16), "sorted-f")),
        plot_families(),
        plot_search_history([1.0, 1.2, 1.2, 1.5]),
        plot_grouped_bars(
            {"a": {"fcfs": 1.2, "sorted-f": 1.0}}, ylabel="ratio", title="t", hline=1
        ),
    ]
    rows = [
        {"policy": p, "ratio_opt": v, "ratio_lp": v * 1.1}
        for p, v in [("fcfs", 1.5), ("fcfs", 1.0), ("sorted-f", 1.1)]
    ]
    figs.append(plot_ratio_distribution(rows, worst={"sorted-f": 1.6}))
    for k, fig in enumerate(figs):
        for ax in fig.axes:
            if ax.get_label() == "<colorbar>":
                continue
            assert ax.get_title() or ax.get_xlabel() == "", k
            assert ax.get_ylabel(), k
        save_figure(fig, tmp_path / f"{k}.png")
    assert "round" in figs[0].axes[1].get_xlabel()
    assert "tokens" in figs[0].axes[1].get_ylabel()
    assert "tokens" in figs[4].axes[0].get_xlabel()
    ax = figs[-1].axes[0]
    assert ax.get_yscale() == "log"
    assert any(np.allclose(line.get_ydata(), 48) for line in ax.lines)
    assert len(list(tmp_path.glob("*.png"))) == len(figs)
    json.dumps([str(p) for p in tmp_path.iterdir()])
