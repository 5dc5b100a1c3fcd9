"""The two README figures, ``families.png`` and ``ratios.png``, from their sweeps.

Command: ``python -m lpsched.research.figures [OUT_DIR]`` (default ``docs/figures``).
Source: ours.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from ..plotting.families import plot_families
from ..plotting.ratios import plot_ratio_distribution
from ..plotting.style import save_figure
from .adversarial import catalogue_rows
from .reproductions.families import family_sweep
from .reproductions.ratios import ratio_sweep

__all__ = ["readme_figures"]


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
        Seeds of the ratio sweep
        (:func:`lpsched.research.reproductions.ratios.ratio_sweep` with its other
        defaults: 4 workloads, ``n`` in {5, 7}, ``M`` in {16, 32}, so ``16 * len(seeds)``
        instances, each solved exactly).
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
    Command: ``python -m lpsched.research.figures docs/figures``. Source: ours.
    """
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
    rows_f = family_sweep(work, memories=family_memories, progress=progress)
    p1 = save_figure(plot_families(rows_f), out / "families.png")
    rows_r = ratio_sweep(work, seeds=seeds, progress=progress)
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
    raise SystemExit(_main(sys.argv[1:]))
