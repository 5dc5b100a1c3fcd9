"""Plots: Gantt charts and memory profiles of schedules, ratio plots, and the two README figures.

Every function draws on a matplotlib ``Axes`` (a new figure when none is given) and returns the
``Figure``, with axis labels in the model's units (rounds, tokens), a title and a legend. The
module never selects a backend; headless runs (tests, CI) set ``MPLBACKEND=Agg`` or get Agg by
default without a display.

The README figures: ``python -m lpsched.plotting [OUT_DIR]`` or :func:`readme_figures`.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from .schedule import Schedule

__all__ = [
    "POLICY_COLORS",
    "plot_gantt",
    "plot_memory",
    "plot_schedule",
    "plot_rounds",
    "plot_ratio_distribution",
    "plot_families",
    "plot_search_history",
    "plot_grouped_bars",
    "save_figure",
    "readme_figures",
]

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
_FAMILY_LABEL = {"fcfs": "FCFS family", "mcsf": "MC-SF family", "size": "size family"}


def _color(policy: str) -> str:
    return POLICY_COLORS.get(policy.partition("+")[0], "#8c564b")


def _axes(ax: Axes | None, figsize: tuple[float, float] = (8, 4)) -> tuple[Figure, Axes]:
    if ax is None:
        fig, ax = plt.subplots(figsize=figsize, layout="constrained")
        return fig, ax
    return ax.figure, ax  # type: ignore[return-value]


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
    fig, ax = _axes(ax)
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
    fig, ax = _axes(ax)
    rounds, mem = schedule.memory_profile()
    policy = schedule.policy or "schedule"
    ax.step(
        rounds,
        mem,
        where="mid",
        color=color or _color(policy),
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
    fig, ax = _axes(ax)
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
        Rows of :func:`lpsched.ratios.ratio_sweep` (``policy`` and ``column`` needed).
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
    fig, ax = _axes(ax, (8, 4.5))
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
            k + rng.uniform(-0.18, 0.18, v.size), v, s=9, alpha=0.5, color=_color(p), zorder=3
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
                color=_color(p),
                edgecolor="black",
                zorder=4,
                label=f"worst {p} found by adversarial search: {value:.2f}",
            )
    ax.legend(loc="upper left", fontsize=8)
    ax.grid(axis="y", alpha=0.3, which="both")
    return fig


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
        Rows of :func:`lpsched.ratios.family_sweep` (executor runs), drawn as markers: each
        family's own policy, and Sorted-F. None: closed forms only.
    ax : Axes, optional
    closed_form_to : int
        Largest ``M`` of the closed-form lines (:func:`lpsched.gadgets.family_ratio`).
    title : str, optional

    Returns
    -------
    Figure
        One line per family (its policy's ratio, closed form), markers where the executor ran,
        Sorted-F's ratio (1 on every family), and a ``sqrt(M)`` guide. Source: ours.
    """
    from .gadgets import FAMILIES, family_ratio

    fig, ax = _axes(ax, (7.5, 4.5))
    Ms = np.unique(np.round(np.logspace(np.log10(4), np.log10(closed_form_to), 80)).astype(int))
    for name, fam in FAMILIES.items():
        xs = Ms[Ms >= fam.min_memory]
        ys = [float(family_ratio(name, int(M))) for M in xs]
        ax.plot(
            xs, ys, color=_color(fam.policy), label=f"{fam.policy} on the {_FAMILY_LABEL[name]}"
        )
        if rows:
            pts = [
                (int(r["memory"]), float(r["ratio"]))
                for r in rows
                if r["family"] == name and r["policy"] == fam.policy
            ]
            if pts:
                ax.plot(*zip(*sorted(pts), strict=True), "o", color=_color(fam.policy), ms=5)
    if rows:
        sf = sorted(
            (int(r["memory"]), float(r["ratio"])) for r in rows if r["policy"] == "sorted-f"
        )
        if sf:
            ax.plot(
                [m for m, _ in sf],
                [v for _, v in sf],
                "s",
                color=_color("sorted-f"),
                ms=5,
                label="sorted-f on all three families (executor runs)",
            )
    else:
        ax.axhline(1, color=_color("sorted-f"), label="sorted-f on all three families")
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
        :attr:`lpsched.ratios.SearchResult.history`.
    ax : Axes, optional
    title : str, optional
    policy : str
        Name in the labels.

    Returns
    -------
    Figure
        Source: ours.
    """
    fig, ax = _axes(ax, (7, 3.5))
    ax.plot(np.arange(1, len(history) + 1), history, color=_color(policy), label=policy)
    ax.set_xlabel("search step (all restarts)")
    ax.set_ylabel(f"best TEL({policy}) / OPT so far")
    ax.set_title(title or f"Adversarial local search against {policy}")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return fig


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
    fig, ax = _axes(ax, (8, 4))
    groups = list(table)
    policies = list(dict.fromkeys(p for g in groups for p in table[g]))
    width = 0.8 / max(1, len(policies))
    for k, p in enumerate(policies):
        xs = [j + (k - (len(policies) - 1) / 2) * width for j in range(len(groups))]
        ys = [table[g].get(p, np.nan) for g in groups]
        ax.bar(xs, ys, width=width, color=_color(p), label=p, edgecolor="black", linewidth=0.4)
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


def save_figure(fig: Figure, path: str | os.PathLike[str], dpi: int = 130) -> Path:
    """Save ``fig`` as PNG at ``path`` (folders created) and close it; returns the path."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(p, dpi=dpi)
    plt.close(fig)
    return p


def readme_figures(
    out_dir: str | os.PathLike[str] = "docs/figures",
    *,
    work_dir: str | os.PathLike[str] | None = None,
    seeds: Sequence[int] = tuple(range(10)),
    family_memories: Sequence[int] = (16, 64, 256, 1024, 4096, 16384),
    adversarial_dir: str | os.PathLike[str] | None = "instances/adversarial",
    progress: bool = True,
) -> list[Path]:
    """The two README figures: ``families.png`` and ``ratios.png``.

    Parameters
    ----------
    out_dir : path-like
        Where the PNGs go (default ``docs/figures``).
    work_dir : path-like, optional
        Where the sweeps' CSVs go (resumed on a rerun); default a temporary folder, deleted
        afterwards (so only the two PNGs are written).
    seeds : sequence of int
        Seeds of the ratio sweep (:func:`lpsched.ratios.ratio_sweep` with its other
        defaults: 4 workloads, ``n`` in {5, 7}, ``M`` in {16, 32}, so ``16 * len(seeds)``
        instances, each solved exactly; about a minute for 10 seeds on 2 cores).
    family_memories : sequence of int
        ``M`` values run through the executor for the family plot.
    adversarial_dir : path-like, optional
        Folder of saved adversarial instances; the largest Sorted-F ratio among them
        (``metadata["ratio"]``) is drawn as a star. None or a missing folder: no star.
    progress : bool
        Progress bars.

    Returns
    -------
    list of Path
        ``[out_dir/families.png, out_dir/ratios.png]``.

    Notes
    -----
    Command: ``python -m lpsched.plotting docs/figures``. Source: ours.
    """
    from .ratios import catalogue_rows, family_sweep, ratio_sweep

    if work_dir is None:
        with tempfile.TemporaryDirectory() as tmp:
            return readme_figures(
                out_dir,
                work_dir=tmp,
                seeds=seeds,
                family_memories=family_memories,
                adversarial_dir=adversarial_dir,
                progress=progress,
            )
    out = Path(out_dir)
    work = Path(work_dir)
    rows_f = family_sweep(work / "families.csv", memories=family_memories, progress=progress)
    p1 = save_figure(plot_families(rows_f), out / "families.png")
    rows_r = ratio_sweep(work / "ratios.csv", seeds=seeds, progress=progress)
    worst = None
    if adversarial_dir is not None and Path(adversarial_dir).is_dir():
        ratios = [
            row["ratio"]
            for row in catalogue_rows(adversarial_dir)
            if row.get("policy") == "sorted-f" and row.get("ratio") is not None
        ]
        worst = {"sorted-f": max(ratios)} if ratios else None
    p2 = save_figure(plot_ratio_distribution(rows_r, worst=worst), out / "ratios.png")
    return [p1, p2]


def _main(argv: Sequence[str]) -> int:
    out = argv[0] if argv else "docs/figures"
    for p in readme_figures(out):
        print(p)
    return 0


if __name__ == "__main__":  # pragma: no cover
    matplotlib.use("Agg")
    raise SystemExit(_main(sys.argv[1:]))
