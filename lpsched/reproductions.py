"""The registry of paper reproductions run by ``lpsched reproduce NAME``.

Each entry is a function ``run(out_dir, **options) -> str`` that writes ``NAME.csv`` (one row per
finished task, resumed on a rerun) and ``NAME.md`` (plus PNG figures for some) into ``out_dir``
and returns the Markdown table. Options the command line can pass: ``seeds`` and ``trace_dir``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass

from . import experiments, ratios, reproduce_gaps, reproduce_uncertainty

__all__ = ["Reproduction", "REPRODUCTIONS", "accepts"]


@dataclass(frozen=True)
class Reproduction:
    """A named reproduction: ``run(out_dir, **options) -> Markdown text``."""

    name: str
    description: str
    run: Callable[..., str]


def accepts(reproduction: Reproduction, option: str) -> bool:
    """Whether the reproduction's function takes the keyword ``option``."""
    return option in inspect.signature(reproduction.run).parameters


REPRODUCTIONS: dict[str, Reproduction] = {
    r.name: r
    for r in (
        Reproduction(
            "headline",
            "mean latency of FCFS, MC-SF, size and Sorted-F on the 80/20 "
            "mix (arXiv 2508.06133, section 6)",
            experiments.headline,
        ),
        Reproduction(
            "sensitivity",
            "the headline ratios against the conversation workload and the KV-cache budget M",
            experiments.sensitivity,
        ),
        Reproduction(
            "optimality-gaps",
            "policies against the proven optimum and the LP bound "
            "on small instances (arXiv 2508.06133, section 6)",
            reproduce_gaps.optimality_gaps,
        ),
        Reproduction(
            "ratios",
            "empirical TEL / optimum of every policy on random small "
            "instances against the bound 48, and an adversarial search for Sorted-F",
            ratios.reproduce_ratios,
        ),
        Reproduction(
            "families",
            "adversarial families: FCFS, MC-SF and size ratios growing "
            "with M while Sorted-F stays at 1",
            ratios.reproduce_families,
        ),
        Reproduction(
            "intervals",
            "TEL against prediction-interval width: amax, amin, sorted-f-amin, hindsight sorted-f",
            reproduce_uncertainty.intervals,
        ),
        Reproduction(
            "online-load",
            "online load sweep: receding-horizon Sorted-F against "
            "MC-SF and FCFS, Poisson and trace arrivals",
            reproduce_uncertainty.online_load,
        ),
    )
}
