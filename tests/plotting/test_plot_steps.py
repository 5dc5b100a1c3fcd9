"""Pictures that read right: the memory panel is a step function over rounds (round ``t``
holds ``m(t)`` over ``(t - 1, t]``), the round-by-round view is offered by ``lpsched plot``,
and the group labels of a grouped bar chart (``optimality-gaps.png``) do not overlap."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from click.testing import CliRunner  # noqa: E402

from lpsched.cli import main  # noqa: E402
from lpsched.generators.three_partition import gadget  # noqa: E402
from lpsched.io import write_instance, write_schedule  # noqa: E402
from lpsched.plotting import plot_grouped_bars, plot_memory, plot_schedule  # noqa: E402
from lpsched.plotting import schedule as schedule_plots  # noqa: E402
from lpsched.policies.registry import run_policy  # noqa: E402


def _total(ax):
    return next(ln for ln in ax.lines if not getattr(ln, "_lpsched_M", False))


def test_memory_is_a_step_function_with_jumps_at_round_boundaries():
    sched = run_policy(gadget(3, 20, yes=True, seed=1), "fcfs")
    x, y = _total(plot_memory(sched).axes[0]).get_data()
    x, y = np.asarray(x, float), np.asarray(y, float)
    rounds, mem = sched.memory_profile()
    # a vertex pair per round: (t - 1, m(t)) and (t, m(t)), the jumps vertical at integers
    assert np.array_equal(x, np.repeat(np.arange(sched.makespan + 1), 2)[1:-1])
    assert np.array_equal(y, np.repeat(mem, 2))
    flat = y[0::2] == y[1::2]
    assert flat.all()  # no slope inside a round
    assert np.all(x[1:-1:2] == x[2::2])  # a jump only at a round boundary


def test_the_first_batch_holds_memory_over_the_first_round():
    sched = run_policy(gadget(3, 20, yes=True, seed=1), "fcfs")
    fig = plot_schedule(sched)
    x, y = _total(fig.axes[1]).get_data()
    x, y = np.asarray(x, float), np.asarray(y, float)
    assert x.min() == 0  # drawn from the start of round 1, not from its end
    inside = (x > 0) & (x <= 1)
    assert inside.any() and np.all(y[inside] > 0)
    assert np.interp(0.5, x, y) == sched.memory_at([1])[0] > 0


def test_stacked_groups_are_steps_too():
    sched = run_policy(gadget(3, 20, yes=True, seed=1), "fcfs")
    labels = [f"g{i % 3}" for i in range(sched.instance.n)]
    ax = plot_memory(sched, groups=labels).axes[0]
    x, y = _total(ax).get_data()
    top = ax.collections[-1].get_paths()[0].vertices
    assert top[:, 0].min() == 0 and top[:, 0].max() == sched.makespan
    for t in range(1, sched.makespan + 1):  # the top layer's edge is m(t) inside round t
        inside = top[(top[:, 0] > t - 1) & (top[:, 0] < t)]
        mid = np.interp(t - 0.5, np.asarray(x, float), np.asarray(y, float))
        assert mid == sched.memory_at([t])[0]
        assert inside.size == 0 or np.all(inside[:, 1] <= mid)


@pytest.fixture
def gadget_files(tmp_path):
    inst = gadget(3, 20, yes=True, seed=1)
    write_instance(inst, tmp_path / "g.json")
    write_schedule(run_policy(inst, "fcfs"), tmp_path / "s.json")
    return tmp_path


def test_plot_offers_the_round_by_round_view(gadget_files, monkeypatch):
    drawn = []
    real = schedule_plots.save_figure
    monkeypatch.setattr(
        schedule_plots, "save_figure", lambda fig, path: drawn.append(fig) or real(fig, path)
    )
    out = gadget_files / "r.png"
    args = ["plot", str(gadget_files / "g.json"), str(gadget_files / "s.json"), "-o", str(out)]
    r = CliRunner().invoke(main, [*args, "--view", "rounds", "--max-rounds", "2"])
    assert r.exit_code == 0, r.output
    assert out.stat().st_size > 0
    (ax,) = drawn[0].axes
    assert ax.get_xlabel() == "round" and "KV cache held" in ax.get_ylabel()
    assert [int(t) for t in ax.get_xticks()] == [1, 2]
    r = CliRunner().invoke(main, [*args, "--view", "rounds", "--time-model", "unit"])
    assert r.exit_code == 2 and "--view rounds" in r.output


def test_grouped_bar_labels_do_not_overlap():
    groups = [f"{w} n={n}" for w in ("paper-scaled", "scaled-mix") for n in (6, 8, 10, 30, 40, 60)]
    table = {g: {"fcfs": 30.0, "mcsf": 12.0, "sorted-f": 5.0, "sorted-lp": 3.0} for g in groups}
    fig = plot_grouped_bars(table, ylabel="mean gap (%)", title="gaps")
    renderer = fig.canvas.get_renderer()
    fig.draw(renderer)
    boxes = [t.get_window_extent(renderer) for t in fig.axes[0].get_xticklabels()]
    assert len(boxes) == 12
    for a, b in zip(boxes, boxes[1:], strict=False):
        assert not a.overlaps(b), (a, b)
