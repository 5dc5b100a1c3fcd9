"""Every plot draws with labels in the model's units, headless."""

from __future__ import annotations

import json

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402

from lpsched.certify import solve_exact  # noqa: E402
from lpsched.generators.families import family_good_schedule, family_instance  # noqa: E402
from lpsched.generators.small import small_instance  # noqa: E402
from lpsched.generators.three_partition import gadget  # noqa: E402
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
