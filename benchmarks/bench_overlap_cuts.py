"""Overlap cuts (SPEC section 3.1) on memory-bound instances: how far they lift the LP, and
what ``mip-overlap`` proves against ``mip`` in the same time.

Not a test. Per instance (``jaillet-synthetic`` draws by default; or instance files) it measures

* ``LP``: the time-indexed LP relaxation at the tight horizon of the best list schedule;
* ``LP + cuts``: the same LP after the cut loop of ``mip-overlap`` (up to 30 rounds of overlap
  cuts, no time limit);
* ``mip`` and ``mip-overlap`` (plans ``("local-search", METHOD)`` of :func:`lpsched.solve`,
  ``--time-limit`` seconds each): status, bound and seconds.

Prints one Markdown table (docs/results/memory-bound.md). Wall-clock limits: run on an idle
machine and say how loaded it was.

Run::

    .venv/bin/python benchmarks/bench_overlap_cuts.py --sizes 10,12,15,20 --time-limit 60
    .venv/bin/python benchmarks/bench_overlap_cuts.py --files instances/exact/mix12-s1.json
"""

from __future__ import annotations

import argparse
import time

from lpsched.certify import solve, solve_lp
from lpsched.generators.jaillet import jaillet_synthetic
from lpsched.io import read_instance
from lpsched.solvers.backends.highs import add_cover_cuts, build_highs
from lpsched.solvers.options import SolveOptions


def lifted_lp(instance) -> tuple[float, float, int]:
    """``(LP, LP after the overlap-cut loop, cuts added)`` at the tight horizon."""
    sol = solve_lp(instance)
    h = build_highs(sol.matrix)
    info = add_cover_cuts(h, sol.matrix, rounds=0, overlap=30)
    return sol.value, info["lp_after"], info["cuts"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10,12,15,20", help="n of the jaillet-synthetic draws")
    ap.add_argument("--seeds", default="1,2", help="seeds of the draws")
    ap.add_argument("--files", nargs="*", default=[], help="instance files instead of draws")
    ap.add_argument("--time-limit", type=float, default=60.0, help="seconds per solve")
    args = ap.parse_args()
    if args.files:
        cases = [(f, read_instance(f)) for f in args.files]
    else:
        cases = [
            (f"jaillet n={n} seed={seed}", jaillet_synthetic(n=n, seed=seed))
            for n in map(int, args.sizes.split(","))
            for seed in map(int, args.seeds.split(","))
        ]
    print(
        "| instance | M | LP | LP + cuts (cuts) | mip: status, bound, s | mip-overlap: status, "
        "bound, s | best TEL |"
    )
    print("|---|---:|---:|---:|---|---|---:|")
    for name, inst in cases:
        lp, lifted, cuts = lifted_lp(inst)
        cells, best = [], None
        for method in ("mip", "mip-overlap"):
            t0 = time.perf_counter()
            res = solve(inst, ("local-search", method), SolveOptions(time_limit=args.time_limit))
            cells.append(f"{res.status}, {res.bound:,.0f}, {time.perf_counter() - t0:.1f}")
            best = res.objective if best is None else min(best, res.objective)
        print(
            f"| {name} | {inst.memory} | {lp:,.1f} | {lifted:,.1f} ({cuts}) | {cells[0]} | "
            f"{cells[1]} | {best:,} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
