"""Schedules drawn: Gantt chart, memory profile, round-by-round KV-cache occupancy.

Source: ours (SPEC section 2's memory convention: ``s_i + j`` tokens in the ``j``-th round).
"""

from __future__ import annotations

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ..schedule import Schedule
from .style import axes, policy_color

__all__ = ["plot_gantt", "plot_memory", "plot_schedule", "plot_rounds"]


def plot_gantt(
    schedule: Schedule,
    ax: Axes | None = None,
    *,
    title: str | None = None,
    max_requests: int = 60,
    label_requests: bool = True,
) -> Figure:
    """Gantt chart: one bar per request over the rounds it runs.

    Parameters
    ----------
    schedule : Schedule
        Starts ``p_i``; request ``i`` runs in rounds ``p_i + 1 .. C_i`` (bar from ``p_i`` to
        ``C_i`` on the round axis).
    ax : Axes, optional
        Draw here; default a new figure.
    title : str, optional
        Default ``"<policy> on <instance>: TEL = ..."``.
    max_requests : int
        Draw at most this many requests (the first by start); the title says when cut.
    label_requests : bool
        Write each request's id on the y axis.

    Returns
    -------
    Figure

    Notes
    -----
    Bar shading: the darker the bar, the larger the prefill ``s_i`` relative to ``M`` (a
    colour bar gives the scale in tokens). Source: ours.
    """
    fig, ax = axes(ax)
    inst = schedule.instance
    order = np.lexsort((np.arange(inst.n), schedule.start))[:max_requests]
    cmap = plt.get_cmap("Blues")
    norm = matplotlib.colors.Normalize(vmin=0, vmax=max(1, inst.memory))
    for row, i in enumerate(order.tolist()):
        p, o = int(schedule.start[i]), int(inst.decode[i])
        ax.barh(
            row,
            o,
            left=p,
            height=0.8,
            color=cmap(0.25 + 0.75 * norm(inst.prefill[i])),
            edgecolor="black",
            linewidth=0.5,
        )
    ax.set_ylim(len(order) - 0.5, -0.5)
    if label_requests and len(order) <= 25:
        ax.set_yticks(range(len(order)), [inst.ids[i] for i in order.tolist()], fontsize=8)
    else:
        ax.set_yticks([])
    ax.set_xlabel("round")
    ax.set_ylabel("request (by start)")
    cut = f" (first {len(order)} of {inst.n})" if len(order) < inst.n else ""
    ax.set_title(
        title or f"{schedule.policy or 'schedule'} on {inst.name}: TEL = {schedule.tel} rounds{cut}"
    )
    sm = matplotlib.cm.ScalarMappable(
        norm=norm, cmap=matplotlib.colors.ListedColormap(cmap(np.linspace(0.25, 1.0, 256)))
    )
    fig.colorbar(sm, ax=ax, label="prefill s_i (tokens)", pad=0.01)
    ax.grid(axis="x", alpha=0.3)
    return fig


def plot_memory(
    schedule: Schedule,
    ax: Axes | None = None,
    *,
    title: str | None = None,
    label: str | None = None,
    color: str | None = None,
) -> Figure:
    """Memory profile ``m(t)`` of a schedule with the budget ``M`` as a line.

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

    Returns
    -------
    Figure
        ``m(t)`` in tokens for rounds ``1 .. max C_i`` as a step line, ``M`` dashed.

    Notes
    -----
    Source: SPEC section 2 (``m(t) = sum_{p_i < t <= C_i} (s_i + t - p_i)``).
    """
    fig, ax = axes(ax)
    rounds, mem = schedule.memory_profile()
    policy = schedule.policy or "schedule"
    ax.step(
        rounds,
        mem,
        where="mid",
        color=color or policy_color(policy),
        label=label or f"{policy} (TEL {schedule.tel})",
    )
    M = schedule.instance.memory
    if not any(getattr(line, "_lpsched_M", False) for line in ax.lines):
        line = ax.axhline(M, color="black", linestyle="--", linewidth=1, label=f"M = {M}")
        line._lpsched_M = True  # type: ignore[attr-defined]
    ax.set_xlabel("round")
    ax.set_ylabel("KV cache in use (tokens)")
    ax.set_ylim(0, M * 1.1)
    ax.set_title(title or f"KV-cache memory of {policy}")
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(alpha=0.3)
    return fig


def plot_schedule(
    schedule: Schedule, *, title: str | None = None, figsize: tuple[float, float] = (9, 6)
) -> Figure:
    """Gantt chart above the memory profile, on a shared round axis.

    Returns
    -------
    Figure
        Two axes: :func:`plot_gantt` and :func:`plot_memory`. Source: ours.
    """
    fig, (a1, a2) = plt.subplots(
        2,
        1,
        figsize=figsize,
        sharex=True,
        layout="constrained",
        gridspec_kw={"height_ratios": [3, 2]},
    )
    plot_gantt(schedule, a1, title=title)
    plot_memory(schedule, a2, title="KV-cache memory per round")
    a1.set_xlabel("")
    return fig


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
        labelled with its id when it fits; ``M`` dashed. For the 3-Partition gadget (every
        ``o_j = 1``) each bar is one triple and ``M = B + 3``.

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
        for i in running.tolist():
            h = int(inst.prefill[i]) + t - int(schedule.start[i])
            ax.bar(
                t, h, bottom=bottom, color=cmap(i % 20), edgecolor="black", linewidth=0.5, width=0.8
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
