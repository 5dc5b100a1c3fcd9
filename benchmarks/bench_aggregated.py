"""The LP over aggregated rounds (:mod:`lpsched.certify.methods.aggregated`) against the column
generation over rounds and the full LP (issue 21).

Not a test. Prints, with ``threads=1``:

1. ``small``: the paper's copies (``paper-scaled``, lengths and M divided by 20, M = 825) at
   n = 100 and 200, seeds 0-2: the full LP (matrix build + HiGHS), ``lp-colgen`` and
   ``lp-aggregated`` (value, seconds, the aggregated method's levels), and the TEL of the
   schedule listed by the aggregated LP's completion times beside Sorted-F's.
2. ``large`` (``--large``): the instance of ``--instance`` (default: the shipped default, the
   paper's mix at n = 2000, M = 16,492): ``lp-aggregated``'s bound at each checkpoint
   (``--checkpoints``, seconds), its levels (windows and value), and the LP-order schedule's
   TEL beside Sorted-F's and the combinatorial bound; with ``--colgen``, ``lp-colgen``'s
   Lagrangian bound at the same limits; ``--master-solver ipm|pdlp`` for the other masters.

Run::

    .venv/bin/python benchmarks/bench_aggregated.py
    .venv/bin/python benchmarks/bench_aggregated.py --no-small --large --checkpoints 60 300
"""

from __future__ import annotations

import argparse
import time

from lpsched.bounds import combinatorial_bound
from lpsched.certify.methods.aggregated import (
    MASTER_SOLVERS,
    aggregated_lp_bound,
    lp_order_schedule,
)
from lpsched.certify.methods.colgen import colgen_lp_bound
from lpsched.generators.small import paper_scaled
from lpsched.io import default_instance, read_instance
from lpsched.policies.local_search import best_heuristic
from lpsched.policies.registry import run_policy
from lpsched.solvers.progress import Observer
from lpsched.solvers.solve import lp_bound


def small(sizes: list[int], seeds: list[int]) -> None:
    print("small: paper-scaled (M = 825), threads = 1")
    head = f"{'instance':>14} {'method':>14} {'value':>12} {'seconds':>8}  notes"
    print(head)
    for n in sizes:
        for seed in seeds:
            inst = paper_scaled(n, seed)
            sched = best_heuristic(inst)
            t = time.perf_counter()
            full = lp_bound(inst)
            secs = time.perf_counter() - t
            print(f"{inst.name:>14} {'full LP':>14} {full.bound:>12.3f} {secs:>8.2f}")
            cg = colgen_lp_bound(inst, sched, time_limit=None, threads=1)
            print(f"{'':>14} {'lp-colgen':>14} {cg.bound:>12.3f} {cg.runtime_s:>8.2f}")
            ag = aggregated_lp_bound(inst, sched, time_limit=None, threads=1)
            levels = ", ".join(f"{lv['windows']}: {lv['value']:.1f}" for lv in ag.info["levels"])
            print(
                f"{'':>14} {'lp-aggregated':>14} {ag.bound:>12.3f} {ag.runtime_s:>8.2f}  "
                f"levels (windows: value) {levels}"
            )
            lp_tel = lp_order_schedule(inst, ag.info["mean_start"]).tel
            sf = run_policy(inst, "sorted-f").tel
            print(f"{'':>14} {'LP order':>14} {lp_tel:>12,} {'':>8}  Sorted-F {sf:,}")


def _timed(seen: list[tuple[float, float]], t0: float):
    return lambda b: seen.append((time.perf_counter() - t0, b))


def large(path: str | None, checkpoints: list[float], colgen: bool, solver: str) -> None:
    inst = default_instance() if path is None else read_instance(path)
    sched = best_heuristic(inst)
    sf = run_policy(inst, "sorted-f").tel
    print(
        f"large: {inst.name}, n = {inst.n}, M = {inst.memory}; best list policy "
        f"{sched.tel:,}, Sorted-F {sf:,}, combinatorial {combinatorial_bound(inst):,.0f}"
    )
    for limit in checkpoints:
        seen: list[tuple[float, float]] = []
        obs = Observer(on_bound=_timed(seen, time.perf_counter()))
        ag = aggregated_lp_bound(
            inst, sched, time_limit=limit, threads=1, observer=obs, master_solver=solver
        )
        tel = lp_order_schedule(inst, ag.info["mean_start"]).tel
        levels = ", ".join(f"{lv['windows']}: {lv['value']:,.0f}" for lv in ag.info["levels"])
        print(
            f"lp-aggregated ({solver}) {limit:>5.0f} s: bound {ag.bound:,.0f}, converged "
            f"{ag.info['converged']}, iterations {ag.info['iterations']}, columns "
            f"{ag.info['columns']:,}, windows {ag.info['windows']:,}; LP order TEL {tel:,}"
        )
        print(f"    levels (windows: value) {levels}")
        marks = [b for b in seen if b[1] > 0.999 * ag.bound]
        if marks:
            print(f"    within 0.1% of its final bound after {marks[0][0]:.0f} s")
        if colgen:
            cg = colgen_lp_bound(inst, sched, time_limit=limit, threads=1)
            print(f"lp-colgen     {limit:>5.0f} s: bound {cg.bound:,.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-small", action="store_true")
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 200])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--large", action="store_true")
    parser.add_argument("--instance", default=None)
    parser.add_argument("--checkpoints", type=float, nargs="+", default=[60.0, 300.0])
    parser.add_argument("--colgen", action="store_true")
    parser.add_argument("--master-solver", default="simplex", choices=MASTER_SOLVERS)
    args = parser.parse_args()
    if not args.no_small:
        small(args.sizes, args.seeds)
    if args.large:
        large(args.instance, args.checkpoints, args.colgen, args.master_solver)


if __name__ == "__main__":
    main()
