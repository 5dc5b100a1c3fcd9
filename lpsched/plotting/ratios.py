"""Empirical approximation ratios drawn: their distribution per policy against the bound 48,
and the history of an adversarial search.

Source: ours (bound 48 from arXiv 2508.06133, section 4).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib.ticker
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from .style import axes, policy_color

__all__ = ["plot_ratio_distribution", "plot_search_history"]


def _rows_by_policy(rows: Sequence[Mapping[str, Any]], column: str) -> dict[str, np.ndarray]:
    out: dict[str, list[float]] = {}
    for r in rows:
        out.setdefault(str(r["policy"]), []).append(float(r[column]))
    return {k: np.asarray(v) for k, v in out.items()}


def plot_ratio_distribution(
    rows: Sequence[Mapping[str, Any]],
    ax: Axes | None = None,
    *,
    column: str = "ratio_opt",
    bound: float | None = 48,
    title: str | None = None,
    seed: int = 0,
    worst: Mapping[str, float] | None = None,
) -> Figure:
    """Distribution of empirical ratios per policy (log scale) with the proven bound as a line.

    Parameters
    ----------
    rows : sequence of dict
        Rows of :func:`lpsched.research.reproductions.ratios.ratio_sweep` (``policy`` and
        ``column`` needed).
    ax : Axes, optional
    column : str
        ``"ratio_opt"`` (``TEL / OPT``) or ``"ratio_lp"`` (``TEL / LP bound``).
    bound : float or None
        Horizontal line (Sorted-F's proven ratio 48, arXiv 2508.06133 section 4).
    title : str, optional
    seed : int
        Seed of the horizontal jitter of the points.
    worst : mapping of str to float, optional
        Extra ratios drawn as stars per policy (e.g. the adversarial search's worst case).

    Returns
    -------
    Figure
        Per policy a box plot with the instances as jittered points; the largest ratio is
        written above each box. Source: ours.
    """
    fig, ax = axes(ax, (8, 4.5))
    data = _rows_by_policy(rows, column)
    names = list(data)
    rng = np.random.default_rng(seed)
    ax.boxplot(
        [data[p] for p in names],
        positions=range(len(names)),
        widths=0.5,
        showfliers=False,
        medianprops={"color": "black"},
    )
    for k, p in enumerate(names):
        v = data[p]
        ax.scatter(
            k + rng.uniform(-0.18, 0.18, v.size), v, s=9, alpha=0.5, color=policy_color(p), zorder=3
        )
        ax.annotate(
            f"max {v.max():.2f}",
            (k, v.max()),
            textcoords="offset points",
            xytext=(0, 6),
            ha="center",
            fontsize=8,
        )
    ax.set_yscale("log")
    top = max([float(v.max()) for v in data.values()] + list((worst or {}).values()) + [1.0])
    if bound is not None:
        ax.axhline(
            bound,
            color="black",
            linestyle="--",
            linewidth=1,
            label=f"proven bound of Sorted-F: {bound:g}",
        )
        top = max(top, bound)
    ax.set_ylim(0.95, top * 1.6)
    ax.set_xticks(range(len(names)), names)
    what = "optimum" if column == "ratio_opt" else "LP lower bound"
    ax.set_ylabel(f"TEL(policy) / {what}  (log scale)")
    ax.set_xlabel("policy")
    n_inst = len(next(iter(data.values()))) if data else 0
    ax.set_title(title or f"Empirical ratio to the {what} on {n_inst} small instances")
    ticks = [t for t in (1, 1.25, 1.5, 2, 3, 5, 10, 20, 48, 100) if t <= top * 1.6]
    ax.set_yticks(ticks, [f"{t:g}" for t in ticks])
    ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    for p, value in (worst or {}).items():
        if p in names:
            k = names.index(p)
            ax.scatter(
                [k + 0.32],
                [value],
                marker="*",
                s=160,
                color=policy_color(p),
                edgecolor="black",
                zorder=4,
                label=f"worst {p} found by adversarial search: {value:.2f}",
            )
    ax.legend(loc="upper left", fontsize=8)
    ax.grid(axis="y", alpha=0.3, which="both")
    return fig


def plot_search_history(
    history: Sequence[float],
    ax: Axes | None = None,
    *,
    title: str | None = None,
    policy: str = "sorted-f",
) -> Figure:
    """Best ``TEL(policy) / OPT`` found so far against the step of an adversarial search.

    Parameters
    ----------
    history : sequence of float
        :attr:`lpsched.research.adversarial.SearchResult.history`.
    ax : Axes, optional
    title : str, optional
    policy : str
        Name in the labels.

    Returns
    -------
    Figure
        Source: ours.
    """
    fig, ax = axes(ax, (7, 3.5))
    ax.plot(np.arange(1, len(history) + 1), history, color=policy_color(policy), label=policy)
    ax.set_xlabel("search step (all restarts)")
    ax.set_ylabel(f"best TEL({policy}) / OPT so far")
    ax.set_title(title or f"Adversarial local search against {policy}")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return fig
