"""The figures of the results pages whose reproduction draws none, drawn from the pages' own
tables, so that a figure shows exactly the numbers of its page.

Run from the repository's root (a few seconds; matplotlib)::

    python docs/figures/page_figures.py            # every figure below
    python docs/figures/page_figures.py headline   # one of them

Each figure is ``docs/figures/NAME.png`` and reads the first table of ``docs/results/PAGE.md``
that has the columns it names; a page whose table changes is redrawn by running this again.
``optimality-gaps.png`` is drawn as ``lpsched reproduce optimality-gaps`` draws it (the mean
TEL / OPT - 1 over the instances proven optimal, :func:`lpsched.plotting.bars.plot_grouped_bars`),
from the page's parenthesised means. ``online-load-*.png`` come from the reproduction itself, not
from here.

Source: ours.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from lpsched.plotting.bars import plot_grouped_bars  # noqa: E402
from lpsched.plotting.style import POLICY_COLORS, policy_color, save_figure  # noqa: E402

RESULTS = ROOT / "docs" / "results"
FIGURES = ROOT / "docs" / "figures"
_NUMBER = re.compile(r"-?\d[\d,]*\.?\d*(?:e-?\d+)?")
#: Colours of series that are not policies.
_SERIES = [matplotlib.colors.to_hex(c) for c in plt.get_cmap("tab10").colors]


def tables(page: str) -> list[list[dict[str, str]]]:
    """The pipe tables of ``docs/results/PAGE.md``, each a list of ``{header: cell}`` rows."""
    found, block = [], []
    for line in [*(RESULTS / f"{page}.md").read_text(encoding="utf-8").splitlines(), ""]:
        if line.startswith("|"):
            block.append([c.strip() for c in line.strip().strip("|").split("|")])
            continue
        if len(block) > 2:
            found.append([dict(zip(block[0], row, strict=True)) for row in block[2:]])
        block = []
    return found


def table_with(page: str, *columns: str) -> list[dict[str, str]]:
    """The first table of ``page`` holding every one of ``columns``."""
    for rows in tables(page):
        if all(c in rows[0] for c in columns):
            return rows
    raise LookupError(f"docs/results/{page}.md has no table with the columns {columns}")


def number(cell: str, anywhere: bool = False) -> float:
    """The number a cell starts with (``"1.155 / 1.373"`` -> 1.155, ``"28.0%"`` -> 28.0), or
    its first number anywhere; NaN if none (``"- (LP too large: 1/1)"``)."""
    text = cell.replace("**", "").strip()
    found = _NUMBER.search(text) if anywhere else _NUMBER.match(text)
    return float(found.group().replace(",", "")) if found else float("nan")


def bars(
    groups: Mapping[str, Mapping[str, float]],
    *,
    ylabel: str,
    title: str,
    hline: float | None = None,
    log: bool = False,
    size: tuple[float, float] = (9, 4.2),
) -> Figure:
    """Grouped bars, ``groups[group][series]``; a series named like a policy gets its colour."""
    fig, ax = plt.subplots(figsize=size, layout="constrained")
    series = list(dict.fromkeys(s for g in groups.values() for s in g))
    width = 0.8 / len(series)
    # series that are not policies: the tab10 colours, those of the policies drawn left out
    taken = {POLICY_COLORS[s] for s in series if s in POLICY_COLORS}
    others = iter([c for c in _SERIES if c not in taken] * 2)
    for k, name in enumerate(series):
        xs = np.arange(len(groups)) + (k - (len(series) - 1) / 2) * width
        ys = [groups[g].get(name, np.nan) for g in groups]
        color = policy_color(name) if name in POLICY_COLORS else next(others)
        ax.bar(xs, ys, width=width, label=name, color=color, edgecolor="black", linewidth=0.4)
    if hline is not None:
        ax.axhline(hline, color="black", linestyle="--", linewidth=0.8)
    ax.set_xticks(
        range(len(groups)),
        list(groups),
        rotation=20 if len(groups) > 4 else 0,
        ha="right" if len(groups) > 4 else "center",
    )
    ax.set(ylabel=ylabel, title=title)
    if log:
        ax.set_yscale("log")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    return fig


def optimality_gaps() -> Figure:
    """As ``lpsched reproduce optimality-gaps`` draws it: mean TEL / OPT - 1 (%)."""
    rows = table_with("optimality-gaps", "workload", "proven optimal")
    policies = ["fcfs", "mcsf", "size", "sorted-f", "sorted-lp"]
    gaps = {
        f"{r['workload']} n={r['n']}": {
            p: 100 * (float(re.search(r"\(([\d.]+) /", r[p]).group(1)) - 1) for p in policies
        }
        for r in rows
        if not r["proven optimal"].startswith("0/")
    }
    return plot_grouped_bars(
        gaps,
        ylabel="mean gap TEL / OPT - 1 (%)",
        title="Optimality gap per workload and size (proven optima)",
    )


def headline() -> Figure:
    """Mean-latency ratios over Sorted-F per workload reading (n = 2000, 5 seeds)."""
    rows = table_with("headline", "ratio of mean latency", "paper-mix")
    workloads = [c for c in rows[0] if c not in ("ratio of mean latency", "paper")]
    shown = [
        r for r in rows if r["ratio of mean latency"].split(" /")[0] in ("FCFS", "MC-SF", "size")
    ]
    groups = {w: {r["ratio of mean latency"]: number(r[w]) for r in shown} for w in workloads}
    groups["paper"] = {r["ratio of mean latency"]: number(r["paper"]) for r in shown}
    return bars(
        groups,
        ylabel="mean latency / Sorted-F's",
        hline=1,
        title="Mean latency over Sorted-F's, n = 2000, M = 16,492 (mean of seeds 0-4)",
    )


def certified_gaps() -> Figure:
    """Each policy's TEL over the best certified bound, and the best schedule's."""
    rows = table_with("certified-gaps", "best / bound", "bound by")
    policies = ["fcfs", "mcsf", "size", "sorted-f", "sorted-lp"]
    groups = {
        f"{r['workload']} n={r['n']}": {
            **{p: number(r[p]) for p in policies if number(r[p]) == number(r[p])},
            "best found": number(r["best / bound"]),
        }
        for r in rows
    }
    return bars(
        groups,
        ylabel="TEL / certified lower bound",
        hline=1,
        title="Distance from optimal, certified: TEL / best bound (mean over instances)",
    )


def sensitivity() -> Figure:
    """The headline ratios under other workloads and a larger M."""
    rows = table_with("sensitivity", "ratio of mean latency")
    columns = [c for c in rows[0] if c != "ratio of mean latency"]
    groups = {
        c.replace("summarization", "summ.").replace(",", ",\n").replace(" M=", "\nM="): {
            r["ratio of mean latency"]: number(r[c]) for r in rows
        }
        for c in columns
    }
    fig = bars(
        groups,
        ylabel="mean latency / Sorted-F's",
        hline=1,
        size=(10, 4.6),
        title="Mean latency over Sorted-F's by workload and KV cache M (n = 2000)",
    )
    for label in fig.axes[0].get_xticklabels():
        label.set(rotation=0, ha="center", fontsize=7)
    return fig


def algorithms() -> Figure:
    """Every policy's TEL / certified bound on the paper's mix at n = 2000 (log scale)."""
    column = "paper n=2000 (M=16492)"
    rows = sorted(table_with("algorithms", "policy", column), key=lambda r: number(r[column]))
    fig, ax = plt.subplots(figsize=(8, 5), layout="constrained")
    values = [number(r[column]) for r in rows]
    names = [r["policy"] for r in rows]
    ax.barh(names, values, color=[policy_color(n) for n in names], edgecolor="black", linewidth=0.4)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.axvline(1, color="black", linestyle="--", linewidth=0.8)
    for y, v in enumerate(values):
        ax.text(v * 1.05, y, f"{v:.3f}" if v < 10 else f"{v:.1f}", va="center", fontsize=7)
    ax.set(
        xlabel="TEL / certified lower bound (mean of 3 seeds; log scale)",
        title="The algorithms after Sorted-F on the paper's mix, n = 2000, M = 16,492",
    )
    ax.grid(axis="x", alpha=0.3)
    return fig


def jaillet_synthetic() -> Figure:
    """Certified gap per trial under both round conventions."""
    rows = table_with("jaillet-synthetic", "trial", "convention", "gap")
    groups: dict[str, dict[str, float]] = {}
    for r in rows:
        groups.setdefault(f"trial {r['trial']}\nn = {r['n']}\nM = {r['M']}", {})[
            f"{r['convention']} convention"
        ] = number(r["gap"])
    fig = bars(
        groups,
        ylabel="certified gap of the best schedule (%)",
        title="Jaillet et al.'s synthetic trials: best found against the bound (30 s)",
    )
    for label in fig.axes[0].get_xticklabels():
        label.set(rotation=0, ha="center", fontsize=7)
    return fig


def memory_bound() -> Figure:
    """The LP and the overlap cuts against the optimum (or best known)."""
    rows = table_with("memory-bound", "draw", "+ late sets", "+ conflict cliques")
    groups = {}
    for r in rows:
        top = number(r["optimum or best known"], anywhere=True)
        groups[r["draw"].replace("`", "").replace(" n", "\nn").replace(", seed", "\nseed")] = {
            "LP": number(r["LP"]) / top,
            "+ late sets": number(r["+ late sets"]) / top,
            "+ conflict cliques": number(r["+ conflict cliques"]) / top,
        }
    return bars(
        groups,
        ylabel="bound / optimum (or best known)",
        hline=1,
        title="The LP and its overlap cuts when a few requests fill the KV cache",
    )


def sorted_f_readings() -> Figure:
    """Mean TEL / OPT of the four Sorted-F readings and three list policies per n."""
    rows = table_with("sorted-f-readings", "n", "sf a+c (lpsched)")
    series = ["sf a+c (lpsched)", "sf b+c", "sf a+d", "sf b+d", "sorted-lp", "volume", "size"]
    groups = {f"n = {r['n']}": {s: number(r[s]) for s in series} for r in rows}
    return bars(
        groups,
        ylabel="TEL / OPT (mean over proven instances)",
        hline=1,
        title="Four readings of Sorted-F against the optimum (paper-scaled, M = 825)",
    )


def mcsf_fidelity() -> Figure:
    """Mean and worst ratio to the best schedule found, per reading of MC-SF (30 draws)."""
    rows = [
        r for r in table_with("mcsf-fidelity", "reading", "mean ratio") if number(r["feasible"]) > 0
    ]
    labels = [re.sub(r"[`*]", "", r["reading"]) for r in rows]
    groups = {
        re.sub(r"\s+", " ", label).replace(" (", "\n("): {
            "mean": number(r["mean ratio"]),
            "worst": number(r["worst"]),
        }
        for label, r in zip(labels, rows, strict=True)
    }
    fig = bars(
        groups,
        ylabel="TEL / best schedule found",
        hline=1,
        size=(10, 4.4),
        title="Readings of MC-SF on the paper's distribution (30 draws)",
    )
    fig.axes[0].set_ylim(0.95, None)
    for label in fig.axes[0].get_xticklabels():
        label.set(rotation=0, ha="center", fontsize=7)
    return fig


def time_profile() -> Figure:
    """Round duration of the fitted profiles against prefill tokens and running requests."""
    rows = table_with("time-profile", "profile", "base_s", "kv_token_s")
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4), layout="constrained")
    prompt = np.linspace(0, 4096, 200)
    running = np.arange(0, 257)
    for k, r in enumerate(rows):
        c = {
            key: number(r[key])
            for key in (
                "base_s",
                "prefill_token_s",
                "prefill_token2_s",
                "decode_request_s",
                "kv_token_s",
            )
        }
        name = re.sub(r"`([^`]+)`.*", r"\1", r["profile"])
        fixed = c["base_s"] + c["decode_request_s"] * 64 + c["kv_token_s"] * 8000
        left.plot(
            prompt,
            1e3 * (fixed + c["prefill_token_s"] * prompt + c["prefill_token2_s"] * prompt**2),
            color=_SERIES[k],
            label=name,
        )
        right.plot(
            running,
            1e3
            * (c["base_s"] + c["decode_request_s"] * running + c["kv_token_s"] * 1000 * running),
            color=_SERIES[k],
            label=name,
        )
    left.set(
        xlabel="prompt tokens prefilled in the round, P",
        ylabel="round duration (ms)",
        title="with 64 requests decoding, 8,000 KV tokens",
    )
    right.set(
        xlabel="requests decoding, D (1,000 KV tokens each)",
        ylabel="round duration (ms)",
        title="decode-only rounds",
    )
    for ax in (left, right):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, frameon=False)
    fig.suptitle("The fitted linear time models: d = f(P, D, K)")
    return fig


#: Figure name -> (its page, the function drawing it).
FIGURES_OF_PAGES: dict[str, tuple[str, Callable[[], Figure]]] = {
    "optimality-gaps": ("optimality-gaps", optimality_gaps),
    "headline": ("headline", headline),
    "certified-gaps": ("certified-gaps", certified_gaps),
    "sensitivity": ("sensitivity", sensitivity),
    "algorithms": ("algorithms", algorithms),
    "jaillet-synthetic": ("jaillet-synthetic", jaillet_synthetic),
    "memory-bound": ("memory-bound", memory_bound),
    "sorted-f-readings": ("sorted-f-readings", sorted_f_readings),
    "mcsf-fidelity": ("mcsf-fidelity", mcsf_fidelity),
    "time-profile": ("time-profile", time_profile),
}


def main(names: Sequence[str]) -> None:
    """Draw the figures ``names`` (default all) into ``docs/figures/``."""
    for name in names or FIGURES_OF_PAGES:
        _, draw = FIGURES_OF_PAGES[name]
        print(save_figure(draw(), FIGURES / f"{name}.png", dpi=110))
        plt.close("all")


if __name__ == "__main__":
    main(sys.argv[1:])
