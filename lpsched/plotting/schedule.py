"""Schedules drawn: Gantt chart, memory profile, round-by-round KV-cache occupancy.

:func:`plot_schedule` puts a Gantt chart (one row per request, from its start ``p_i`` to its
completion ``C_i``, evicted runs hatched) over the memory profile ``m(t)`` with ``M`` drawn, on
one round axis. It stays readable at thousands of requests: above ``max_requests`` rows the
Gantt chart becomes a waterfall (every request one thin line at its rank by start, no labels;
the title says so). The memory panel stacks the KV cache held by each group; groups colour both:
the workload class of each request (:func:`request_classes`) or any labels given, such as the
Sorted-F Phase-1 batches (:func:`batch_labels`).

With ``seconds`` (a schedule read under a time model, :func:`lpsched.timing.seconds.to_seconds`)
both panels are drawn against seconds instead of rounds: round ``t`` ends at ``tau(t)``.

Source: ours (SPEC section 2's memory convention: ``s_i + j`` tokens in the ``j``-th round;
runs: SPEC section 6; seconds: SPEC section 10).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from ..generators.workloads import parse_mixture, sample_lengths
from ..instance import Instance
from ..policies.sorted_f import phase1_batches, resolve_phase1
from ..schedule import Schedule, memory_at
from ..timing.model import TimeModel
from ..timing.seconds import ScheduleSeconds, to_seconds
from .style import axes, policy_color, save_figure

__all__ = [
    "request_classes",
    "batch_labels",
    "plot_gantt",
    "plot_memory",
    "plot_schedule",
    "plot_rounds",
]

#: Colours of groups (classes or batches; matplotlib's tab10), cycled when there are more groups.
GROUP_COLORS = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)
#: Most groups named in a legend; with more, the colours cycle and the legend is left out.
MAX_LEGEND = 10
#: Most segments of a bar of :func:`plot_rounds` drawn with outlines.
MAX_OUTLINED = 60


def request_classes(instance: Instance) -> np.ndarray:
    """The workload class of each request, as far as the instance records it.

    Parameters
    ----------
    instance : Instance
        Read: its ``metadata`` (the generator, workload and seed, or the trace rows) and ids.

    Returns
    -------
    ndarray of str, shape (n,)
        In this order of preference: the component of the mixture each request was drawn from,
        for an instance of :func:`lpsched.generators.workloads.generate` (redrawn from the
        seed in ``metadata`` and used only when the redrawn lengths ``s_i, o_i`` are the
        instance's); the trace file of each row (``metadata["rows"]`` of
        :func:`~lpsched.generators.workloads.from_traces`); the id without its trailing number
        (``short3`` -> ``short``) when that gives 2 to 10 classes; else ``"request"`` for all.

    Notes
    -----
    Source: ours (the generators record the workload and seed, not the class of each request).
    """
    meta, n = instance.metadata, instance.n
    if meta.get("generator") == "lpsched.generators.workloads.generate":
        try:
            names = list(parse_mixture(meta["workload"]))
            s, o, comp = sample_lengths(meta["workload"], n, np.random.default_rng(meta["seed"]))
        except (KeyError, TypeError, ValueError):
            pass
        else:
            if np.array_equal(s, instance.prefill) and np.array_equal(o, instance.decode):
                return np.asarray(names, dtype=object)[comp].astype(str)
    rows = meta.get("rows")
    if (
        isinstance(rows, list)
        and len(rows) == n
        and all(isinstance(r, list) and r and isinstance(r[0], str) for r in rows)
    ):
        return np.asarray([re.sub(r"\.csv$", "", r[0]) for r in rows])
    prefix = np.asarray([re.sub(r"[-_.:]?\d+$", "", rid) or "request" for rid in instance.ids])
    if 2 <= len(set(prefix.tolist())) <= MAX_LEGEND:
        return prefix
    return np.full(n, "request")


def batch_labels(instance: Instance, solver: str = "auto") -> np.ndarray:
    """The Sorted-F Phase-1 batch of each request: ``"batch 1"``, ``"batch 2"``, ...

    Parameters
    ----------
    instance : Instance
    solver : str
        The Phase-1 solver (:data:`lpsched.policies.sorted_f.PHASE1_SOLVERS`); use the one the
        schedule was made with.

    Returns
    -------
    ndarray of str, shape (n,)

    Notes
    -----
    Source: SPEC section 4 (the batches ``X_1, X_2, ...`` minimising ``F(X)``).
    """
    out = np.empty(instance.n, dtype=object)
    for k, batch in enumerate(phase1_batches(instance, solver), start=1):
        out[batch] = f"batch {k}"
    return out.astype(str)


def _groups(schedule: Schedule, groups: Sequence[str] | np.ndarray | None) -> np.ndarray:
    """Labels per request (``groups``, or :func:`request_classes`), checked for length."""
    n = schedule.instance.n
    labels = request_classes(schedule.instance) if groups is None else np.asarray(groups, str)
    if labels.shape != (n,):
        raise ValueError(f"groups must give one label per request ({n}), got {labels.size}")
    return labels


def _group_colors(labels: np.ndarray, start: np.ndarray) -> dict[str, str]:
    """One colour per distinct label, labels ordered by their first start (so that batches
    started one after the other get different colours)."""
    names = list(dict.fromkeys(labels[np.lexsort((np.arange(labels.size), start))].tolist()))
    return {g: GROUP_COLORS[k % len(GROUP_COLORS)] for k, g in enumerate(names)}


def _legend(ax: Axes, colors: dict[str, str], extra: Sequence[Patch] = ()) -> None:
    """A legend right of ``ax``: the groups (when 2 to 10) and the ``extra`` entries."""
    handles = list(extra)
    if 1 < len(colors) <= MAX_LEGEND:
        handles = [Patch(color=c, label=g) for g, c in colors.items()] + handles
    if handles:
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)


def _run_rows(schedule: Schedule) -> np.ndarray:
    """Every run as rows ``(request, start, end, completed)``, shape (R, 4); one completed run
    per request without a run record."""
    if schedule.runs is not None:
        runs = schedule.runs
        return runs[(runs[:, 0] >= 0) & (runs[:, 0] < schedule.instance.n)]
    n = schedule.instance.n
    return np.column_stack(
        (np.arange(n), schedule.start, schedule.completion, np.ones(n, dtype=np.int64))
    )


def _clock(schedule: Schedule, seconds: ScheduleSeconds | None):
    """The x coordinate of the end of round ``t``: ``t`` itself, or ``tau(t)`` seconds; and the
    axis label. Raises ``ValueError`` for seconds of another schedule's size."""
    if seconds is None:
        return (lambda t: np.asarray(t)), "round"
    if seconds.latency_s.shape != (schedule.instance.n,) or seconds.makespan != schedule.makespan:
        raise ValueError("seconds must be those of this schedule (to_seconds(schedule, model))")
    return seconds.tau_at, f"time (s), time model {seconds.model.name}"


def _group_suffix(colors: dict[str, str]) -> str:
    """What the title says when the legend is left out (too many groups)."""
    return f"; colours cycle over {len(colors)} groups" if len(colors) > MAX_LEGEND else ""


def plot_gantt(
    schedule: Schedule,
    ax: Axes | None = None,
    *,
    title: str | None = None,
    max_requests: int = 40,
    label_requests: bool = True,
    groups: Sequence[str] | np.ndarray | None = None,
    seconds: ScheduleSeconds | None = None,
) -> Figure:
    """Gantt chart: one row per request, ordered by start, from ``p_i`` to ``C_i``.

    Parameters
    ----------
    schedule : Schedule
        Starts ``p_i``; request ``i`` runs in rounds ``p_i + 1 .. C_i`` (a bar from ``p_i`` to
        ``C_i`` on the round axis). Runs cut short by an eviction (``schedule.runs``, SPEC
        section 6) are drawn hatched on the request's row.
    ax : Axes, optional
        Draw here; default a new figure.
    title : str, optional
        Default ``"<policy> on <instance>: TEL = ..."``, with how the requests are drawn.
    max_requests : int, default 40
        Up to this many requests, one bar each, and a grey line from the arrival ``a_i`` to
        the start when the request waits. Above, a waterfall: every request one thin line at
        its rank by start (row 0 = first started), its waiting in light grey, so that the
        chart shows all ``n`` requests at any size; the title says so.
    label_requests : bool
        Write each request's id on the y axis (up to 25 bars).
    groups : sequence of str, shape (n,), optional
        A label per request, one colour per label; default :func:`request_classes`. With more
        than 10 labels the colours cycle and no legend is drawn.
    seconds : ScheduleSeconds, optional
        ``schedule`` read under a time model: the axis is seconds, a bar from ``tau(p_i)``
        to ``tau(C_i)``, the waiting from the arrival ``alpha_i``; the title gives TEL in
        seconds. Default: rounds.

    Returns
    -------
    Figure

    Raises
    ------
    ValueError
        ``groups`` without one label per request, or ``seconds`` not read from this schedule
        (as ``to_seconds(schedule, model)`` reads it).

    Notes
    -----
    Source: ours (seconds: SPEC section 10).
    """
    fig, ax = axes(ax)
    inst = schedule.instance
    x, xlabel = _clock(schedule, seconds)
    arrival = inst.arrival if seconds is None else seconds.arrival_s
    x_start, x_end = x(schedule.start), x(schedule.completion)
    labels = _groups(schedule, groups)
    colors = _group_colors(labels, schedule.start)
    order = np.lexsort((np.arange(inst.n), schedule.start))
    rank = np.empty(inst.n, dtype=np.int64)
    rank[order] = np.arange(inst.n)
    rows = _run_rows(schedule)
    cut = rows[rows[:, 3] == 0]
    few = inst.n <= max_requests
    if few:
        for i in order.tolist():
            p, end = x_start[i].item(), x_end[i].item()
            ax.barh(
                rank[i],
                end - p,
                left=p,
                height=0.8,
                color=colors[labels[i]],
                edgecolor="black",
                linewidth=0.5,
            )
            if inst.arrival[i] < schedule.start[i]:
                ax.plot([arrival[i], p], [rank[i], rank[i]], color="0.6", linewidth=0.8, zorder=0)
        for req, p, end, _ in cut.tolist():
            p, end = x(p).item(), x(end).item()
            ax.barh(
                rank[req],
                end - p,
                left=p,
                height=0.8,
                color="white",
                hatch="xxx",
                edgecolor=colors[labels[req]],
                linewidth=0.5,
            )
        ax.set_ylim(inst.n - 0.5, -0.5)
        if label_requests and inst.n <= 25:
            ax.set_yticks(range(inst.n), [inst.ids[i] for i in order.tolist()], fontsize=8)
        else:
            ax.set_yticks([])
        how = ""
    else:
        # rows of about a point high at the default sizes, each line twice its row
        row_pt = ax.get_position().height * fig.get_figheight() * 72 / inst.n
        width = float(np.clip(2 * row_pt, 0.4, 3.0))
        y = rank.astype(float)

        def lines(left: np.ndarray, right: np.ndarray, at: np.ndarray) -> np.ndarray:
            return np.stack((np.column_stack((left, at)), np.column_stack((right, at))), axis=1)

        waiting = inst.arrival < schedule.start
        for seg, col in (
            (lines(arrival[waiting], x_start[waiting], y[waiting]), "0.85"),
            (lines(x(cut[:, 1]), x(cut[:, 2]), y[cut[:, 0]]), "0.45"),
            (lines(x_start, x_end, y), [colors[g] for g in labels]),
        ):
            if len(seg):
                ax.add_collection(
                    LineCollection(
                        list(seg.astype(float)), colors=col, linewidths=width, rasterized=True
                    )
                )
        ax.set_ylim(inst.n, -1)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # ranks are whole numbers
        ax.set_xlim(0, float(x(schedule.makespan)) * 1.01)
        how = f"\nall {inst.n} requests, one line each from start to completion, ordered by start"
    ax.set_xlabel(xlabel)
    ax.set_ylabel("request (by start)")
    tel = f"{schedule.tel:,} rounds" if seconds is None else f"{seconds.tel_s:,.1f} s"
    ax.set_title(
        title
        or f"{schedule.policy or 'schedule'} on {inst.name}: TEL = {tel}{how}"
        + _group_suffix(colors)
    )
    extra = []
    if np.any(inst.arrival < schedule.start):
        extra.append(Patch(color="0.6" if few else "0.85", label="waiting (arrival to start)"))
    if cut.size:
        extra.append(
            Patch(
                facecolor="white" if few else "0.45",
                hatch="xxx" if few else None,
                edgecolor="black",
                label=f"evicted runs ({len(cut)})",
            )
        )
    _legend(ax, colors, extra)
    ax.grid(axis="x", alpha=0.3)
    return fig


def _steps(edges: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A step function as a polyline: ``values[..., t - 1]`` held over ``(edges[t - 1],
    edges[t]]`` for rounds ``t = 1 .. T`` (``edges`` shape (T + 1,), ``values`` shape
    (..., T)); vertices ``(edges[t - 1], v_t), (edges[t], v_t)``, so every jump is vertical at
    a round boundary."""
    return np.repeat(edges, 2)[1:-1], np.repeat(values, 2, axis=-1)


def plot_memory(
    schedule: Schedule,
    ax: Axes | None = None,
    *,
    title: str | None = None,
    label: str | None = None,
    color: str | None = None,
    groups: Sequence[str] | np.ndarray | None = None,
    seconds: ScheduleSeconds | None = None,
) -> Figure:
    """Memory profile ``m(t)`` of a schedule with the budget ``M`` as a line.

    Exact and in steps: round ``t`` holds ``m(t)`` tokens over ``(t - 1, t]`` (the round's
    own interval on the axis), so the line is flat inside a round and jumps only at round
    boundaries; the first round's memory is drawn from 0.

    Parameters
    ----------
    schedule : Schedule
    ax : Axes, optional
        Draw here (several schedules can share one axes: call again with the same ``ax``).
    title : str, optional
        Default ``"KV-cache memory of <policy>"``.
    label : str, optional
        Legend label; default the policy name and TEL.
    color : str, optional
        Line colour; default the policy's colour.
    groups : sequence of str, shape (n,), optional
        Stack the memory held by each group (a label per request, one colour per label, as in
        :func:`plot_gantt`) under the total line. Default: the total alone.
    seconds : ScheduleSeconds, optional
        ``schedule`` read under a time model: ``m(t)`` held over ``(tau(t - 1), tau(t)]``
        seconds, the round's interval on the clock. Default: rounds.

    Returns
    -------
    Figure
        ``m(t)`` in tokens for rounds ``1 .. max C_i`` (every run included), one flat segment
        a round (``2 max C_i`` vertices); ``M`` dashed.

    Raises
    ------
    ValueError
        ``groups`` of the wrong length, or ``seconds`` of another schedule.

    Notes
    -----
    Source: SPEC section 2 (``m(t) = sum_{p_i < t <= C_i} (s_i + t - p_i)``; seconds: SPEC
    section 10).
    """
    fig, ax = axes(ax)
    x, xlabel = _clock(schedule, seconds)
    rows = _run_rows(schedule)
    rounds = np.arange(1, schedule.makespan + 1, dtype=np.int64)
    edges = x(np.arange(schedule.makespan + 1, dtype=np.int64))
    policy = schedule.policy or "schedule"
    inst = schedule.instance
    if groups is not None:
        labels = _groups(schedule, groups)
        colors = _group_colors(labels, schedule.start)
        of_run = labels[rows[:, 0]]
        layers = [
            memory_at(
                inst.prefill[rows[of_run == g, 0]],
                rows[of_run == g, 1],
                rows[of_run == g, 2],
                rounds,
            )
            for g in colors
        ]
        at, stacked = _steps(edges, np.asarray(layers).reshape(len(layers), rounds.size))
        ax.stackplot(
            at,
            stacked,
            colors=list(colors.values()),
            alpha=0.8,
            labels=list(colors) if len(colors) <= MAX_LEGEND else (),
            rasterized=len(rounds) > 1000,  # keeps a PDF or SVG of thousands of requests small
        )
    ax.plot(
        *_steps(edges, schedule.memory_at(rounds)),
        color=color or ("black" if groups is not None else policy_color(policy)),
        linewidth=0.8 if groups is not None else 1.2,
        label=label or f"{policy} (TEL {schedule.tel})",
    )
    M = inst.memory
    if not any(getattr(line, "_lpsched_M", False) for line in ax.lines):
        line = ax.axhline(M, color="black", linestyle="--", linewidth=1, label=f"M = {M}")
        line._lpsched_M = True  # type: ignore[attr-defined]
    ax.set_xlabel(xlabel)
    ax.set_ylabel("KV cache in use (tokens)")
    ax.set_ylim(0, M * 1.1)
    ax.set_title(title or f"KV-cache memory of {policy}")
    if groups is None:
        ax.legend(loc="lower right", fontsize=8)
    else:  # the stacked areas fill the panel: the legend goes to the right of it
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
    ax.grid(alpha=0.3)
    return fig


def plot_schedule(
    schedule: Schedule,
    *,
    title: str | None = None,
    figsize: tuple[float, float] = (10, 7),
    groups: Sequence[str] | np.ndarray | None = None,
    max_requests: int = 40,
    seconds: ScheduleSeconds | None = None,
) -> Figure:
    """Gantt chart above the memory profile, on a shared round axis, coloured by group.

    Parameters
    ----------
    schedule : Schedule
    title : str, optional
        Title of the Gantt panel (default: see :func:`plot_gantt`).
    figsize : (float, float)
        Inches.
    groups : sequence of str, shape (n,), optional
        A label per request (default :func:`request_classes`); both panels use its colours,
        the memory panel stacks the memory of each group.
    max_requests : int, default 40
        Above this many requests the Gantt panel is a waterfall (:func:`plot_gantt`).
    seconds : ScheduleSeconds, optional
        ``schedule`` read under a time model: the shared axis is seconds (SPEC section 10).

    Returns
    -------
    Figure
        Two axes: :func:`plot_gantt` and :func:`plot_memory`. Source: ours.
    """
    labels = _groups(schedule, groups)
    fig, (a1, a2) = plt.subplots(
        2,
        1,
        figsize=figsize,
        sharex=True,
        layout="constrained",
        gridspec_kw={"height_ratios": [3, 2]},
    )
    plot_gantt(schedule, a1, title=title, groups=labels, max_requests=max_requests, seconds=seconds)
    plot_memory(
        schedule,
        a2,
        seconds=seconds,
        title=f"KV-cache memory per round (peak {schedule.peak_memory:,} of M = "
        f"{schedule.instance.memory:,} tokens)",
        groups=labels,
        label="total",
    )
    a1.set_xlabel("")
    return fig


def save_schedule_plot(
    schedule: Schedule,
    path: str | os.PathLike[str],
    *,
    color: str = "class",
    phase1: str | None = None,
    max_requests: int = 40,
    time_model: TimeModel | None = None,
    view: str = "schedule",
    max_rounds: int = 40,
) -> Path:
    """Draw ``schedule`` with :func:`plot_schedule` (or :func:`plot_rounds`) and save it at
    ``path`` (what ``lpsched plot`` runs); an infeasible schedule is drawn too.

    Parameters
    ----------
    schedule : Schedule
    path : str or PathLike
        The figure file; its suffix (``.png``, ``.pdf``, ``.svg``) gives the format.
    color : {"class", "batch"}
        ``class``: each request's workload class (:func:`request_classes`); ``batch``: its
        Sorted-F Phase-1 batch (:func:`batch_labels`).
    phase1 : str, optional
        The Phase-1 solver of ``batch`` (default: ``auto`` at the instance's size,
        :func:`lpsched.policies.sorted_f.resolve_phase1`).
    max_requests : int, default 40
        Above this many requests the Gantt panel is a waterfall (:func:`plot_gantt`).
    time_model : TimeModel, optional
        Draw against seconds under this model (SPEC section 10) instead of rounds.
    view : {"schedule", "rounds"}
        ``schedule``: :func:`plot_schedule`; ``rounds``: :func:`plot_rounds`, one stacked bar
        per round (in rounds only; ``color``, ``max_requests`` and ``time_model`` are the
        schedule view's).
    max_rounds : int, default 40
        Rounds drawn by the ``rounds`` view (from round 1).

    Returns
    -------
    Path
        The file written.

    Raises
    ------
    ValueError
        An unknown ``color`` or ``view``, or ``view="rounds"`` with a ``time_model``.

    Notes
    -----
    Source: ours.
    """
    if color not in ("class", "batch"):
        raise ValueError(f"color must be 'class' or 'batch', got {color!r}")
    if view not in ("schedule", "rounds"):
        raise ValueError(f"view must be 'schedule' or 'rounds', got {view!r}")
    if view == "rounds":
        if time_model is not None:
            raise ValueError("the rounds view is drawn in rounds only: no time model")
        return save_figure(plot_rounds(schedule, max_rounds=max_rounds), path)
    inst = schedule.instance
    groups = None
    if color == "batch":
        groups = batch_labels(inst, resolve_phase1(phase1 or "auto", inst.n, inst.memory))
    secs = None if time_model is None else to_seconds(schedule, time_model)
    fig = plot_schedule(schedule, groups=groups, max_requests=max_requests, seconds=secs)
    return save_figure(fig, path)


def plot_rounds(
    schedule: Schedule,
    ax: Axes | None = None,
    *,
    title: str | None = None,
    max_rounds: int = 40,
) -> Figure:
    """Memory drawn round by round: one stacked bar per round, one segment per running request.

    Parameters
    ----------
    schedule : Schedule
    ax : Axes, optional
    title : str, optional
    max_rounds : int
        Rounds drawn (from round 1).

    Returns
    -------
    Figure
        Bar of round ``t`` stacks ``s_i + t - p_i`` tokens for each request running in ``t``,
        labelled with its id when it fits (outlined up to :data:`MAX_OUTLINED` segments a
        bar); ``M`` dashed. For the 3-Partition gadget (every ``o_j = 1``) each bar is one
        triple and ``M = B + 3``. Meant for small instances: one patch per segment.

    Notes
    -----
    Source: SPEC section 2 and 8.
    """
    fig, ax = axes(ax)
    inst = schedule.instance
    T = min(schedule.makespan, max_rounds)
    cmap = plt.get_cmap("tab20")
    for t in range(1, T + 1):
        running = np.flatnonzero((schedule.start < t) & (schedule.completion >= t))
        bottom = 0
        edge = 0.5 if running.size <= MAX_OUTLINED else 0.0  # outlines would blacken the bar
        for i in running.tolist():
            h = int(inst.prefill[i]) + t - int(schedule.start[i])
            ax.bar(
                t,
                h,
                bottom=bottom,
                color=cmap(i % 20),
                edgecolor="black",
                linewidth=edge,
                width=0.8,
            )
            if h >= 0.06 * inst.memory:
                ax.text(
                    t, bottom + h / 2, f"{inst.ids[i]}\n{h}", ha="center", va="center", fontsize=7
                )
            bottom += h
    ax.axhline(
        inst.memory, color="black", linestyle="--", linewidth=1, label=f"M = {inst.memory} tokens"
    )
    ax.set_xticks(range(1, T + 1))
    ax.set_xlabel("round")
    ax.set_ylabel("KV cache held (tokens)")
    ax.set_title(
        title or f"{schedule.policy or 'schedule'} on {inst.name}: TEL = {schedule.tel} rounds"
    )
    ax.legend(loc="upper right", fontsize=8)
    ax.set_ylim(0, inst.memory * 1.15)
    return fig
