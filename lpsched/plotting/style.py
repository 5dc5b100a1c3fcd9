"""Shared plotting style: one colour per policy, new axes, saving a figure.

No module of :mod:`lpsched.plotting` selects a matplotlib backend; headless runs (tests, CI)
set ``MPLBACKEND=Agg`` or get Agg by default without a display. Source: ours.
"""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure

__all__ = ["POLICY_COLORS", "policy_color", "axes", "save_figure"]

#: One colour per policy, shared by every plot.
POLICY_COLORS: dict[str, str] = {
    "fcfs": "#d62728",
    "mcsf": "#ff7f0e",
    "size": "#9467bd",
    "sorted-f": "#1f77b4",
    "sorted-lp": "#2ca02c",
    "optimal": "#000000",
    "good": "#7f7f7f",
}


def policy_color(policy: str) -> str:
    """The colour of ``policy`` (its ``+backfill`` variant shares it); brown for others."""
    return POLICY_COLORS.get(policy.partition("+")[0], "#8c564b")


def axes(ax: Axes | None, figsize: tuple[float, float] = (8, 4)) -> tuple[Figure, Axes]:
    """``(figure, ax)``: a new constrained-layout figure of ``figsize`` inches when ``ax`` is
    None, else ``ax`` and its figure."""
    if ax is None:
        fig, ax = plt.subplots(figsize=figsize, layout="constrained")
        return fig, ax
    return ax.figure, ax  # type: ignore[return-value]


def save_figure(fig: Figure, path: str | os.PathLike[str], dpi: int = 130) -> Path:
    """Save ``fig`` at ``path`` (format from the suffix, folders created) and close it.

    Returns the path. Source: ours.
    """
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(p, dpi=dpi)
    plt.close(fig)
    return p
