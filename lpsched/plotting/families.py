"""The adversarial families drawn: ratio against ``M``, closed forms and executor runs.

Source: ours (:mod:`lpsched.generators.families`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ..generators.families import FAMILIES, family_ratio
from .style import axes, policy_color

__all__ = ["plot_families"]

_FAMILY_LABEL = {"fcfs": "FCFS family", "mcsf": "MC-SF family", "size": "size family"}


def plot_families(
    rows: Sequence[Mapping[str, Any]] | None = None,
    ax: Axes | None = None,
    *,
    closed_form_to: int = 10**6,
    title: str | None = None,
) -> Figure:
    """Ratio ``TEL(policy) / TEL(good)`` against ``M`` on the adversarial families, log-log.

    Parameters
    ----------
    rows : sequence of dict, optional
        Rows of :func:`lpsched.research.reproductions.families.family_sweep` (executor runs),
        drawn as markers: each family's own policy, and Sorted-F. None: closed forms only.
    ax : Axes, optional
    closed_form_to : int
        Largest ``M`` of the closed-form lines (:func:`lpsched.generators.families.family_ratio`).
    title : str, optional

    Returns
    -------
    Figure
        One line per family (its policy's ratio, closed form), markers where the executor ran,
        Sorted-F's ratio (1 on every family), and a ``sqrt(M)`` guide. Source: ours.
    """
    fig, ax = axes(ax, (7.5, 4.5))
    Ms = np.unique(np.round(np.logspace(np.log10(4), np.log10(closed_form_to), 80)).astype(int))
    for name, fam in FAMILIES.items():
        xs = Ms[Ms >= fam.min_memory]
        ys = [float(family_ratio(name, int(M))) for M in xs]
        ax.plot(
            xs,
            ys,
            color=policy_color(fam.policy),
            label=f"{fam.policy} on the {_FAMILY_LABEL[name]}",
        )
        if rows:
            pts = [
                (int(r["memory"]), float(r["ratio"]))
                for r in rows
                if r["family"] == name and r["policy"] == fam.policy
            ]
            if pts:
                ax.plot(*zip(*sorted(pts), strict=True), "o", color=policy_color(fam.policy), ms=5)
    if rows:
        sf = sorted(
            (int(r["memory"]), float(r["ratio"])) for r in rows if r["policy"] == "sorted-f"
        )
        if sf:
            ax.plot(
                [m for m, _ in sf],
                [v for _, v in sf],
                "s",
                color=policy_color("sorted-f"),
                ms=5,
                label="sorted-f on all three families (executor runs)",
            )
    else:
        ax.axhline(1, color=policy_color("sorted-f"), label="sorted-f on all three families")
    guide = np.sqrt(Ms.astype(float)) / 2
    ax.plot(Ms, guide, ":", color="gray", label="sqrt(M) / 2 (guide)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("KV-cache budget M (tokens)")
    ax.set_ylabel("TEL(policy) / TEL(good schedule)")
    ax.set_title(title or "Baselines have unbounded ratios: adversarial families")
    ax.legend(fontsize=8, loc="upper left")
    ax.grid(alpha=0.3, which="both")
    return fig
