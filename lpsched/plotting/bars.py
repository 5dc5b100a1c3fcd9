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
        Source: ours.
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
    if log:
        ax.set_yscale("log")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=8, ncols=min(len(policies) + 1, 6))
    ax.grid(axis="y", alpha=0.3)
    return fig
