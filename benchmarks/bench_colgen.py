"""The time-indexed LP by column generation (:mod:`lpsched.certify.methods.colgen`)
against the full LP.

Not a test. Prints, with ``threads=1``:

1. ``small``: scaled-mix n = 50, 100, 200 (seed 0): the full LP (``lp_bound``, matrix build +
   HiGHS) and column generation at the same horizon and windows, seconds and values, with
   Wentges smoothing ``alpha`` = 0 (plain) and 0.5 (the default), without and with the
   subgradient ascent first (``+asc``, the default).
2. ``large`` (``--large``): the instance of ``--instance`` (default ``instances/default.json``,
   n = 2000, M = 16,492; the README's issue-11 figures were measured on the earlier Azure
   default, ``lpsched generate --workload mix-80-20 -n 2000 --memory 16492 --seed 0``,
   ``sum o = 437,947``), where the full LP has hundreds of millions of columns: the best
   Lagrangian bound after each checkpoint (60, 300, 600 s by default), whether it converged,
   the last master value, the iterations and columns, beside the combinatorial bound and
   Sorted-F's TEL. The ascent runs for ``--ascent-share`` of the time (no step cap), the master
   gets the rest.

Run::

    .venv/bin/python benchmarks/bench_colgen.py
    .venv/bin/python benchmarks/bench_colgen.py --sizes --large --time-limit 600
"""

from __future__ import annotations

import argparse
import time

from lpsched.bounds import combinatorial_bound
from lpsched.certify import lp_bound
from lpsched.certify.methods.colgen import colgen_lp_bound
from lpsched.generators.small import scaled_mix
from lpsched.io import read_instance
from lpsched.kernels import BACKEND
from lpsched.policies.local_search import best_heuristic
from lpsched.solvers.progress import Observer


def small(sizes: list[int], alphas: list[float]) -> None:
    print(f"small (kernels: {BACKEND}, threads=1)")
    print(f"{'n':>5} {'method':>14} {'value':>14} {'seconds':>8} {'iters':>6} {'columns':>8}")
    for n in sizes:
        inst = scaled_mix(n, 0)
        sched = best_heuristic(inst)  # what lp_bound uses for its horizon and windows
        t = time.perf_counter()
        full = lp_bound(inst)
        print(
            f"{n:>5} {'full LP':>14} {full.bound:>14.4f} {time.perf_counter() - t:>8.2f} "
            f"{'':>6} {full.info['columns']:>8}"
        )
        for alpha in alphas:
            for ascent in (0, 2000):
                r = colgen_lp_bound(
                    inst, sched, time_limit=None, threads=1, alpha=alpha, ascent=ascent
                )
                value = r.info.get("lp_value", r.bound)
                label = f"cg a={alpha:g}" + (" +asc" if ascent else "")
                print(
                    f"{n:>5} {label:>14} {value:>14.4f} {r.runtime_s:>8.2f} "
                    f"{r.info['iterations']:>6} {r.info['columns']:>8}"
                )


def large(
    path: str,
    time_limit: float,
    checkpoints: list[float],
    alpha: float,
    share: float,
    deflect: float,
    master_solver: str,
) -> None:
    inst = read_instance(path)
    sched = best_heuristic(inst)
    comb = combinatorial_bound(inst)
    print(f"large: {path} n = {inst.n}, M = {inst.memory}, sum o = {int(inst.decode.sum()):,}")
    print(f"  combinatorial bound {comb:,}; best list policy {sched.policy} TEL {sched.tel:,}")
    found: list[tuple[float, float]] = []
    t0 = time.perf_counter()

    def on_bound(value: float) -> None:
        found.append((time.perf_counter() - t0, value))

    r = colgen_lp_bound(
        inst,
        sched,
        time_limit=time_limit,
        threads=1,
        observer=Observer(on_bound=on_bound),
        alpha=alpha,
        ascent=10**6,
        ascent_share=share,
        deflect=deflect,
        master_solver=master_solver,
    )
    for cp in checkpoints:
        best = max((v for s, v in found if s <= cp), default=float("nan"))
        print(f"  after {cp:>5g} s: Lagrangian bound {best:,.0f} ({best / comb:.3f} x comb.)")
    info = r.info
    z = info["master_value"]
    print(
        f"  converged {info['converged']}; LP value {info.get('lp_value')}; last master "
        f"{'-' if z is None else f'{z:,.0f}'}; iterations {info['iterations']}; columns "
        f"{info['columns']:,}; non-zeros {info['nonzeros']:,}; master {info['master_s']:.0f} s, "
        f"pricing {info['pricing_s']:.1f} s; ascent {info.get('ascent_steps', 0)} steps in "
        f"{info.get('ascent_s', 0):.0f} s to "
        f"{info.get('ascent_bound', float('nan')):,.0f}; alpha {alpha:g}, deflect {deflect:g}, "
        f"master {master_solver}"
    )
    if z is not None:  # a restricted master's optimum is above the LP: the LP is bracketed
        print(f"  LP value in [{r.bound:,.0f}, {z:,.0f}] (gap {(z - r.bound) / z:.2%})")
    for s, b, z in info["history"][:: max(1, len(info["history"]) // 20)]:
        print(f"    {s:8.1f} s  bound {b:14,.0f}  master {z:14,.0f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[50, 100, 200])
    ap.add_argument("--alphas", type=float, nargs="*", default=[0.0, 0.5])
    ap.add_argument("--large", action="store_true", help="the default instance (n = 2000)")
    ap.add_argument("--instance", default="instances/default.json")
    ap.add_argument("--time-limit", type=float, default=600.0)
    ap.add_argument("--checkpoints", type=float, nargs="*", default=[60.0, 300.0, 600.0])
    ap.add_argument("--alpha", type=float, default=0.5)
    ap.add_argument("--ascent-share", type=float, default=1.0, help="share of the ascent")
    ap.add_argument("--deflect", type=float, default=1.5, help="ascent deflection (0: plain)")
    ap.add_argument("--master-solver", default="auto", help="auto, primal, dual, ipm, pdlp")
    args = ap.parse_args()
    if args.sizes:
        small(args.sizes, args.alphas)
    if args.large:
        large(
            args.instance,
            args.time_limit,
            args.checkpoints,
            args.alpha,
            args.ascent_share,
            args.deflect,
            args.master_solver,
        )


if __name__ == "__main__":
    main()
