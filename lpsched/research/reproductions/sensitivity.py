"""Reproduction ``sensitivity``: how the headline ratios move with the conversation workload
(the paper's LMSYS-style mix against the Azure, ShareGPT and code traces) and ``M``.

Source: ours, to explain the gap between our headline ratios and the paper's
(arXiv 2508.06133, section 6).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from ...sweeps.tables import reproduction_run, write_report
from .headline import HEADLINE_RATIOS, policy_comparison, ratio_table

__all__ = ["NAME", "DESCRIPTION", "run"]

NAME = "sensitivity"
DESCRIPTION = "the headline ratios against the conversation workload and the KV-cache budget M"


@reproduction_run
def run(
    out_dir: str | os.PathLike[str],
    *,
    seeds: Sequence[int] = (0, 1),
    n: int = 2000,
    memories: Sequence[int] = (16492, 65536),
    workloads: Sequence[str] = (
        "paper-mix",
        "mix-80-20",
        "sharegpt:0.8,summarization:0.2",
        "code:0.8,summarization:0.2",
    ),
    solver: str = "swap",
    **engine: Any,
) -> str:
    """How the headline ratios move with the conversation workload and the budget ``M``.

    Writes ``sensitivity.csv`` and ``sensitivity.md`` under ``out_dir`` and returns the
    Markdown (strict-order policies). Source: ours, to explain the gap to the paper's figures.
    """
    rows = policy_comparison(
        out_dir,
        NAME,
        workloads,
        memories,
        seeds,
        n=n,
        policies=("fcfs", "mcsf", "size", "sorted-f"),
        solver=solver,
        **engine,
    )
    table = ratio_table(rows, ("source", "memory"), ratios=HEADLINE_RATIOS[:3])
    return write_report(out_dir, NAME, table)
