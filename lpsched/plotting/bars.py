"""Grouped bar charts: one group per scenario, one bar per policy. Source: ours."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from .style import axes, policy_color

__all__ = ["plot_grouped_bars"]


def plot_grouped_bars(
    table: Mapping[str, Mapping[str, float]],
    ax: Axes | None = None,
    *,
    ylabel: str,
    title: str,
    hline: float | None = None,
    hline_label: str | None = None,
    log: bool = False,
) -> Figure:
    """Grouped bar chart: one group per scenario, one bar per policy.

    Parameters
    ----------
    table : mapping of str to mapping of str to float
        ``table[group][policy] = value``.
    ax : Axes, optional
    ylabel, title : str
        Axis label (give units) and title.
    hline : float, optional
        A reference line (e.g. 1 for ratios).
    hline_label : str, optional
        Its legend label.
    log : bool
        Log scale on the value axis.

    Returns
    -------
    Figure
        The group labels under the bars, turned (45, then 90 degrees) when they would
        overlap side by side. Source: ours.
    """
    fig, ax = axes(ax, (8, 4))
    groups = list(table)
    policies = list(dict.fromkeys(p for g in groups for p in table[g]))
    width = 0.8 / max(1, len(policies))
    for k, p in enumerate(policies):
        xs = [j + (k - (len(policies) - 1) / 2) * width for j in range(len(groups))]
        ys = [table[g].get(p, np.nan) for g in groups]
        ax.bar(
            xs, ys, width=width, color=policy_color(p), label=p, edgecolor="black", linewidth=0.4
        )
    if hline is not None:
        ax.axhline(hline, color="black", linestyle="--", linewidth=1, label=hline_label)
    ax.set_xticks(range(len(groups)), groups, fontsize=9)
    _separate_labels(ax)
    if log:
        ax.set_yscale("log")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=8, ncols=min(len(policies) + 1, 6))
    ax.grid(axis="y", alpha=0.3)
    return fig


def _separate_labels(ax: Axes) -> None:
    """Turn the x tick labels of ``ax`` by 45 degrees, then 90, until no two of their boxes
    (as the renderer lays the figure out) overlap."""
    fig = ax.get_figure(root=True)
    assert isinstance(fig, Figure)
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    labels = ax.get_xticklabels()
    for rotation in (0, 45, 90):
        for label in labels:
            label.set_rotation(rotation)
            label.set_horizontalalignment("center" if rotation in (0, 90) else "right")
            label.set_rotation_mode("anchor" if rotation == 45 else "default")
        fig.draw_without_rendering()  # the layout that the saved figure gets
        boxes = [label.get_window_extent(renderer) for label in labels]
        if not any(a.overlaps(b) for a, b in zip(boxes, boxes[1:], strict=False)):
            return
