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
3. ``schedules`` (``--schedules SECONDS``): on the same instance, the TEL of the lists of
   Sorted-F and of the LP solution after SECONDS (by fractional completion, start and
   alpha-points), run by the executor (strict, with backfill) and by earliest fit, and the
   KV-cache use per range of rounds of the LP solution and of the LP list's schedule.

Run::

    .venv/bin/python benchmarks/bench_aggregated.py
    .venv/bin/python benchmarks/bench_aggregated.py --no-small --large --checkpoints 60 300
    .venv/bin/python benchmarks/bench_aggregated.py --no-small --schedules 60
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from lpsched.bounds import combinatorial_bound
from lpsched.certify import lp_bound
from lpsched.certify.methods.aggregated import aggregated_lp_bound, lp_order_schedule
from lpsched.certify.methods.colgen import colgen_lp_bound
from lpsched.certify.methods.lns import earliest_fit_schedule
from lpsched.executor import execute
from lpsched.formulations.time_indexed import units_of
from lpsched.generators.small import paper_scaled
from lpsched.io import default_instance, read_instance
from lpsched.policies.local_search import best_heuristic
from lpsched.policies.registry import run_policy
from lpsched.solvers.aggregated import MASTER_SOLVERS, _memory_of
from lpsched.solvers.colgen import _Master
from lpsched.solvers.progress import Observer


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
    members = units_of(inst, aggregate=True)
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


def schedules(path: str | None, limit: float) -> None:
    """The schedule table of issue 21: lists from Sorted-F and from the LP solution after
    ``limit`` seconds, run by the executor and by earliest fit; and the KV-cache use per range
    of rounds of the LP solution and of the LP list's schedule."""
    inst = default_instance() if path is None else read_instance(path)
    o = inst.decode
    sf = run_policy(inst, "sorted-f")
    rows = [("Sorted-F", sf.tel)]

    def by(key: np.ndarray) -> np.ndarray:
        return np.lexsort((np.arange(inst.n), o, np.round(key, 6)))

    rows.append(
        ("earliest fit on Sorted-F's start order", earliest_fit_schedule(inst, by(sf.start)).tel)
    )
    ag = aggregated_lp_bound(inst, best_heuristic(inst), time_limit=limit, threads=1)
    ms = ag.info["mean_start"]
    lp_list = by(ms + o)
    strict = execute(inst, lp_list)
    rows.append((f"the LP's list ({limit:.0f} s), executor", strict.tel))
    rows.append(("the same with backfill", execute(inst, lp_list, backfill=True).tel))
    members = units_of(inst, aggregate=True)
    req, start = ag.info["column_pool"]
    x = ag.info["column_values"]
    unit_of = np.empty(inst.n, dtype=np.int64)
    for u, mem in enumerate(members):
        unit_of[mem] = u
    count = np.array([m.size for m in members])
    units = unit_of[req]
    alphas = []
    for alpha in (0.05, 0.25, 0.5, 0.75, 0.95):
        point = np.empty(count.size)
        for u in range(count.size):
            mine = np.flatnonzero(units == u)
            mine = mine[np.argsort(start[mine], kind="stable")]
            frac = np.cumsum(x[mine]) / count[u]
            point[u] = start[mine[min(np.searchsorted(frac, alpha - 1e-12), mine.size - 1)]]
        alphas.append(execute(inst, by(point[unit_of])).tel)
    rows.append(("alpha-points 0.05, 0.25, 0.5, 0.75, 0.95, executor (best)", min(alphas)))
    placed = earliest_fit_schedule(inst, lp_list)
    rows.append(("the LP's list, earliest fit", placed.tel))
    rows.append(
        ("the LP's fractional starts, earliest fit", earliest_fit_schedule(inst, by(ms)).tel)
    )
    again = placed
    for _ in range(4):
        again = earliest_fit_schedule(inst, by(again.start))
        rows.append(("earliest fit again on its own start order", again.tel))
    print(f"schedules: {inst.name}")
    for label, tel in rows:
        print(f"  {label:<60} {tel:>12,}  {tel / sf.tel - 1:+.1%}")
    # KV-cache use per range of rounds: the LP solution and the LP list's schedule
    s = inst.prefill.astype(np.int64)
    horizon = int(max(strict.makespan, (start + o[req]).max()))
    lp_mem = _memory_of(start, s[req], o[req].astype(np.int64), x, horizon)
    sched_mem = strict.memory_at(np.arange(1, horizon + 1))
    edges = [0, 1000, 2000, 4000, 8000, 12000, 16000, 20000, 26000, horizon]
    print("  rounds            LP use   schedule use   long requests (s > 1000) running")
    cs = strict.start + o
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        if lo >= horizon:
            break
        longs = int(((strict.start < hi) & (cs > lo) & (inst.prefill > 1000)).sum())
        print(
            f"  {lo:>6}-{hi:<6} {lp_mem[lo + 1 : hi + 1].mean() / inst.memory:>10.2f} "
            f"{sched_mem[lo:hi].mean() / inst.memory:>14.2f} {longs:>10}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-small", action="store_true")
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 200])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--large", action="store_true")
    parser.add_argument("--instance", default=None)
    parser.add_argument("--checkpoints", type=float, nargs="+", default=[60.0, 300.0])
    parser.add_argument("--colgen", action="store_true")
    parser.add_argument(
        "--schedules",
        type=float,
        default=None,
        metavar="SECONDS",
        help="the schedule and memory-use tables from the LP solution after SECONDS",
    )
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
    if args.schedules is not None:
        schedules(args.instance, args.schedules)
    if args.large:
        large(args.instance, args.checkpoints, args.colgen, args.master_solver, args.cap)


if __name__ == "__main__":
    main()
