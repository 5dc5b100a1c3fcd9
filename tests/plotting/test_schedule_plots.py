"""Schedule figures (lpsched.plotting.schedule): bars where the schedule says, the exact memory
profile, classes and batches, and the waterfall of large instances."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from matplotlib.collections import LineCollection  # noqa: E402

from lpsched.generators.families import family_instance  # noqa: E402
from lpsched.generators.workloads import generate, sample_lengths  # noqa: E402
from lpsched.instance import Instance  # noqa: E402
from lpsched.plotting import plot_gantt, plot_memory, plot_schedule  # noqa: E402
from lpsched.plotting.schedule import batch_labels, request_classes  # noqa: E402
from lpsched.policies.registry import run_policy  # noqa: E402
from lpsched.policies.sorted_f import phase1_batches  # noqa: E402
from lpsched.schedule import Schedule  # noqa: E402
from tests.conftest import instances  # noqa: E402

HAND = Instance.from_arrays([2, 1, 0], [3, 2, 1], 10, [0, 1, 2], ids=["A", "B", "C"], name="h")


def _bars(ax):
    """(left, width, row) of every bar of a Gantt axes, hatched ones apart."""
    plain, hatched = [], []
    for p in ax.patches:
        row = (p.get_x(), p.get_width(), p.get_y() + p.get_height() / 2)
        (hatched if p.get_hatch() else plain).append(row)
    return sorted(plain), sorted(hatched)


def test_gantt_bars_are_the_runs():
    # A evicted after one round (run 0 -> 1), restarted at 1; B at 1; C at 4 (rows by start)
    runs = [[0, 0, 1, 0], [0, 1, 4, 1], [1, 1, 3, 1], [2, 4, 5, 1]]
    fig = plot_gantt(Schedule(HAND, [1, 1, 4], policy="hand", runs=runs))
    plain, hatched = _bars(fig.axes[0])
    assert plain == [(1, 2, 1), (1, 3, 0), (4, 1, 2)]  # B: row 1; A: row 0 (tie by index)
    assert hatched == [(0, 1, 0)]
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels == ["A", "B", "C"]
    assert "evicted runs (1)" in [t.get_text() for t in fig.axes[0].get_legend().get_texts()]


def test_waterfall_above_max_requests_draws_every_request():
    inst = generate("mix-80-20", 300, 16492, seed=1)
    sched = run_policy(inst, "sorted-f")
    ax = plot_gantt(sched, max_requests=40).axes[0]
    assert "all 300 requests" in ax.get_title()
    running = ax.collections[-1]
    assert isinstance(running, LineCollection)
    seg = np.asarray(running.get_segments())
    order = np.lexsort((np.arange(inst.n), sched.start))
    assert np.array_equal(seg[:, 0, 1], np.arange(inst.n)[np.argsort(order)])  # row = rank
    assert np.array_equal(seg[:, 0, 0], sched.start)
    assert np.array_equal(seg[:, 1, 0], sched.completion)
    assert not ax.patches


@settings(max_examples=30, deadline=None)
@given(instances(max_n=6, max_memory=20, max_arrival=5))
def test_memory_lines_are_the_exact_profile(inst):
    """The plotted total, read inside each round ``(t - 1, t)``, is m(t) (SPEC section 2)."""
    sched = run_policy(inst, "fcfs" if inst.offline else "online-fcfs")
    for fig in (plot_memory(sched), plot_memory(sched, groups=[str(i % 2) for i in range(inst.n)])):
        line = next(ln for ln in fig.axes[0].lines if not getattr(ln, "_lpsched_M", False))
        x, y = line.get_data()
        rounds, mem = sched.memory_profile()
        assert np.array_equal(np.interp(rounds - 0.5, x, y), mem)
        matplotlib.pyplot.close(fig)


def test_stacked_groups_add_up_to_the_total():
    inst = generate("mix-80-20", 40, 16492, seed=2)
    sched = run_policy(inst, "mcsf")
    ax = plot_memory(sched, groups=request_classes(inst)).axes[0]
    layer = ax.collections[-1].get_paths()[0].vertices  # the last layer: its upper edge
    line = next(ln for ln in ax.lines if not getattr(ln, "_lpsched_M", False))
    x, y = line.get_data()
    corners = {(float(a), float(b)) for a, b in layer}
    assert all((float(a), float(b)) in corners for a, b in zip(x, y, strict=True))


def test_request_classes_from_the_generator_seed():
    inst = generate("mix-80-20", 50, 16492, seed=3)
    comp = sample_lengths("mix-80-20", 50, np.random.default_rng(3))[2]
    classes = request_classes(inst)
    assert classes.tolist() == [["conversation", "summarization"][c] for c in comp]
    edited = inst.replace(prefill=inst.prefill + 1, memory=inst.memory + 1)
    assert set(request_classes(edited).tolist()) == {"request"}  # no longer the generator's


def test_request_classes_from_ids_and_trace_rows():
    fam = family_instance("mcsf", 16)
    assert set(request_classes(fam).tolist()) == {"light", "heavy"}
    rows = Instance.from_arrays(
        [1, 1], [1, 1], 4, ids=["x", "y"], metadata={"rows": [["conv.csv", 2], ["code.csv", 9]]}
    )
    assert request_classes(rows).tolist() == ["conv", "code"]


def test_batch_labels_are_the_phase1_batches():
    inst = generate("mix-80-20", 120, 16492, seed=4)
    labels = batch_labels(inst, "swap")
    for k, batch in enumerate(phase1_batches(inst, "swap"), start=1):
        assert set(labels[batch].tolist()) == {f"batch {k}"}
    fig = plot_schedule(run_policy(inst, "sorted-f", solver="swap"), groups=labels)
    assert "colours cycle over" in fig.axes[0].get_title()


def test_groups_of_the_wrong_length_are_refused():
    with pytest.raises(ValueError, match=r"one label per request \(3\), got 2"):
        plot_gantt(Schedule(HAND, [0, 1, 3]), groups=["a", "b"])
