"""Line plots of a measure against a parameter (interval width, load), one line per policy.

Source: ours.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from .style import axes

__all__ = ["plot_curves", "plot_panels"]

Series = Mapping[str, tuple[Sequence[float], Sequence[float]]]


def plot_curves(
    series: Series,
    ax: Axes | None = None,
    *,
    xlabel: str,
    ylabel: str,
    title: str,
    logx: bool = False,
    logy: bool = False,
    hlines: Mapping[str, float] | None = None,
) -> Figure:
    """One line with markers per entry of ``series``, plus labelled horizontal reference lines.

    Parameters
    ----------
    series : mapping of str to (xs, ys)
        Label -> x and y values.
    ax : Axes, optional
    xlabel, ylabel, title : str
        Axis labels (give units) and title.
    logx : bool
        Symmetric-log x axis (linear below 0.1), for parameters that start at 0.
    logy : bool
        Log y axis.
    hlines : mapping of str to float, optional
        Label -> y of a dashed reference line.

    Returns
    -------
    Figure
    """
    fig, ax = axes(ax, (6, 4))
    for label, (x, y) in series.items():
        ax.plot(x, y, marker="o", label=label)
    for k, (label, level) in enumerate((hlines or {}).items()):
        ax.axhline(level, linestyle="--", color=f"C{len(series) + k}", label=label)
    if logx:
        ax.set_xscale("symlog", linthresh=0.1)
        ax.set_xlim(left=-0.01)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def plot_panels(
    panels: Sequence[tuple[Series, str]], *, xlabel: str, title: str, logy: bool = False
) -> Figure:
    """Side-by-side :func:`plot_curves` panels sharing an x label, under one title.

    Parameters
    ----------
    panels : sequence of (series, ylabel)
    xlabel, title : str
    logy : bool
        Log y axes.

    Returns
    -------
    Figure
    """
    fig, axs = plt.subplots(1, len(panels), figsize=(5 * len(panels), 4), layout="constrained")
    for ax, (series, ylabel) in zip(list(axs), panels, strict=True):
        for label, (x, y) in series.items():
            ax.plot(x, y, marker="o", label=label)
        if logy:
            ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(title)
    return fig
