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
   Lagrangian bound at the same limits; ``--master-solver ipm|pdlp`` for the other masters;
   ``--cap SECONDS``: the round-level restricted master over the columns found, whose value is
   an upper bracket on the LP (``--checkpoints 300 --cap 600``: the LP of the default instance
   lies in [5,421,694, 5,466,399]).

Run::

    .venv/bin/python benchmarks/bench_aggregated.py
    .venv/bin/python benchmarks/bench_aggregated.py --no-small --large --checkpoints 60 300
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from lpsched.bounds import combinatorial_bound
from lpsched.certify.methods.aggregated import (
    MASTER_SOLVERS,
    aggregated_lp_bound,
    lp_order_schedule,
)
from lpsched.certify.methods.colgen import _Master, colgen_lp_bound
from lpsched.formulations.time_indexed import _units
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


def lp_cap(inst, pool: tuple[np.ndarray, np.ndarray], limit: float) -> str:
    """An upper bracket on the LP value: the round-level restricted master over ``pool``
    (every memory row; a feasible LP solution, so its value is at least the LP's)."""
    members = _units(inst, aggregate=True)
    unit_of = np.empty(inst.n, dtype=np.int64)
    for u, mem in enumerate(members):
        unit_of[mem] = u
    first = np.array([m[0] for m in members])
    count = np.array([m.size for m in members])
    s, o, a = (v[first].astype(np.int64) for v in (inst.prefill, inst.decode, inst.arrival))
    master = _Master(count, s, o, a, inst.memory, 1, True, "ipm")
    master.add(unit_of[pool[0]], pool[1].astype(np.int64))
    t = time.perf_counter()
    ok = master.solve(time.perf_counter() + limit)
    secs = time.perf_counter() - t
    status = master.h.modelStatusToString(master.h.getModelStatus())
    value = f"{master.value():,.0f}" if ok else "-"
    cols = pool[0].size
    return (
        f"restricted round-level master ({cols:,} columns, IPM): {value} ({status}, {secs:.0f} s)"
    )


def large(
    path: str | None, checkpoints: list[float], colgen: bool, solver: str, cap: float | None
) -> None:
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
        if cap is not None:
            print("    " + lp_cap(inst, ag.info["column_pool"], cap))
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
    parser.add_argument(
        "--cap",
        type=float,
        default=None,
        metavar="SECONDS",
        help="also solve the round-level master over the columns found (an upper bracket)",
    )
    args = parser.parse_args()
    if not args.no_small:
        small(args.sizes, args.seeds)
    if args.large:
        large(args.instance, args.checkpoints, args.colgen, args.master_solver, args.cap)


if __name__ == "__main__":
    main()
