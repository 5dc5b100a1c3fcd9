"""Exact TEL and LP bounds on the scaled 80/20 mix: what each modelling choice buys.

Not a test. Prints two tables:

1. ``exact``: for each size n and seed, each configuration of
   :func:`lpsched.certify.solve_exact`
   -- status, TEL, bound, gap, build and solve seconds. Configurations (cumulative, so each row
   measures one more idea):

   * ``plain``    horizon T1, no MIP start, no windows, no aggregation (SPEC section 3 as is);
   * ``tight``    horizon min(T1, T2);
   * ``start``    + the best heuristic schedule as MIP start;
   * ``windows``  + start windows ``p_i <= a_i + UB - sum o``;
   * ``agg``      + one integer column per class of identical requests;
   * ``ls``       + the list local search for the MIP start and ``UB`` (the default);
   * ``cuts``     + GUB-cover cuts on the memory rows in a cut loop before the MIP;
   * ``cpsat``    the default model solved by OR-Tools CP-SAT instead of HiGHS.

   The ``heur`` column is the TEL of the MIP start (the best list policy, or the local search).
   After the table, the largest n proven optimal per configuration and seed.

2. ``lp``: the LP relaxation at n = 50 .. 200 -- matrix build + HiGHS versus the Pyomo model,
   build time apart from solve time.

3. ``split`` (``--split-sizes``): where the gap between the LP and the best schedule lives.
   After the default solve, the model with windows from its best TEL is solved with
   integrality on one group of columns only -- the long requests (``s_i >= 15``), then the
   short ones -- and with the long requests fixed at their starts in the best schedule (LP
   and MIP), each with the time limit.

Instances: M = 50 tokens, prefill s_i uniform in 1..6 with probability 0.8 or 15..30 with
probability 0.2, decode o_i uniform in 1..12, offline (the mix of the seed paper scaled down).

Run (about 90 minutes with all configurations; about 25 minutes for the two that matter)::

    .venv/bin/python benchmarks/bench_exact.py
    .venv/bin/python benchmarks/bench_exact.py --configs agg ls --lp-sizes
"""

from __future__ import annotations

import argparse
import time

from lpsched.certify import lp_bound, solve_exact
from lpsched.formulations.horizon import horizon_t1
from lpsched.generators.small import scaled_mix

CONFIGS = {
    "plain": dict(horizon="T1", warm_start=False, windows=False, aggregate=False, local_search=0),
    "tight": dict(warm_start=False, windows=False, aggregate=False, local_search=0),
    "start": dict(warm_start=True, windows=False, aggregate=False, local_search=0),
    "windows": dict(warm_start=True, windows=True, aggregate=False, local_search=0),
    "agg": dict(warm_start=True, windows=True, aggregate=True, local_search=0),
    "ls": dict(warm_start=True, windows=True, aggregate=True),
    "cuts": dict(warm_start=True, windows=True, aggregate=True, cover_cuts=30),
    "cpsat": dict(solver="cpsat", warm_start=True, windows=True, aggregate=True),
}


def run_exact(sizes, seeds, configs, time_limit, threads) -> None:
    print(f"## exact (time limit {time_limit:g} s, threads {threads})\n")
    head = (
        "| n | seed | config | status | TEL | heur | bound | gap | T | columns | build s | "
        "solve s |"
    )
    print(head)
    print("|---" * 12 + "|")
    proven: dict[tuple[str, int], int] = {}
    for n in sizes:
        for seed in seeds:
            inst = scaled_mix(n, seed)
            for name in configs:
                cfg = dict(CONFIGS[name])
                if cfg.get("horizon") == "T1":
                    cfg["horizon"] = horizon_t1(inst)
                res = solve_exact(inst, time_limit=time_limit, threads=threads, **cfg)
                res.schedule.check()
                gap = "-" if res.gap is None else f"{100 * res.gap:.1f}%"
                print(
                    f"| {n} | {seed} | {name} | {res.status} | {res.objective} | "
                    f"{res.info.get('heuristic_tel')} | "
                    f"{res.bound:g} | {gap} | {res.horizon} | {res.info.get('columns')} | "
                    f"{res.build_s:.2f} | {res.solve_s:.1f} |",
                    flush=True,
                )
                if str(res.status) == "optimal":
                    proven[name, seed] = max(proven.get((name, seed), 0), n)
    print("\nlargest n proven optimal within the limit (0 = none of the sizes):")
    for name in configs:
        print(
            f"  {name}: "
            + ", ".join(f"seed {seed}: {proven.get((name, seed), 0)}" for seed in seeds)
        )


def run_lp(sizes, pyomo_max) -> None:
    print("\n## LP relaxation (tight horizon, windows)\n")
    print(
        "| n | T | columns | non-zeros | LP value | matrix build s | HiGHS s | "
        "Pyomo build s | Pyomo solve s | same value |"
    )
    print("|---" * 10 + "|")
    for n in sizes:
        inst = scaled_mix(n, 0)
        r = lp_bound(inst)
        row = (
            f"| {n} | {r.horizon} | {r.info['columns']} | {r.info['nonzeros']} | "
            f"{r.bound:.4f} | {r.info['build_s']:.2f} | {r.info['solve_s']:.2f} |"
        )
        if n <= pyomo_max:
            p = lp_bound(inst, backend="pyomo")
            row += (
                f" {p.info['build_s']:.1f} | {p.info['solve_s']:.1f} | "
                f"{abs(p.bound - r.bound) <= 1e-6 * max(1.0, r.bound)} |"
            )
        else:
            row += " - | - | - |"
        print(row, flush=True)


def _restricted(mat, integer, closed, time_limit, threads):
    """Solve ``mat`` with integrality on the columns where ``integer`` is True and the columns
    where ``closed`` is True fixed at 0: ``(bound, seconds, proven)``."""
    import highspy
    import numpy as np

    from lpsched.solvers.backends.highs import build_highs

    h = build_highs(mat, time_limit=time_limit, threads=threads)
    free = np.flatnonzero(~integer).astype(np.int32)
    h.changeColsIntegrality(
        int(free.size), free, np.full(free.size, highspy.HighsVarType.kContinuous)
    )
    shut = np.flatnonzero(closed).astype(np.int32)
    h.changeColsBounds(int(shut.size), shut, np.zeros(shut.size), np.zeros(shut.size))
    t0 = time.perf_counter()
    h.run()
    info = h.getInfo()
    bound = info.mip_dual_bound if integer.any() else info.objective_function_value
    return bound, time.perf_counter() - t0, h.getModelStatus() == highspy.HighsModelStatus.kOptimal


def run_split(sizes, seeds, time_limit, threads) -> None:
    import numpy as np

    from lpsched.formulations.horizon import tight_horizon
    from lpsched.formulations.time_indexed import time_indexed_matrix

    print(f"\n## where the gap lives (time limit {time_limit:g} s per solve)\n")
    print(
        "| n | seed | LP | long integer | short integer | MIP bound | best TEL | "
        "long fixed: LP | long fixed: MIP bound |"
    )
    print("|---" * 9 + "|")

    def cell(res):
        bound, secs, proven = res
        return f"{bound:.1f} ({secs:.0f} s{'' if proven else ', limit'})"

    for n in sizes:
        for seed in seeds:
            inst = scaled_mix(n, seed)
            full = solve_exact(inst, time_limit=time_limit, threads=threads)
            # windows from the best TEL found: every optimal schedule lies inside them
            mat = time_indexed_matrix(inst, tight_horizon(inst, schedule=full.schedule))
            long_col = inst.prefill[mat.col_unit] >= 15
            none = np.zeros(mat.ncol, dtype=bool)
            lp = _restricted(mat, none, none, time_limit, threads)[0]
            long_int = _restricted(mat, long_col, none, time_limit, threads)
            short_int = _restricted(mat, ~long_col, none, time_limit, threads)
            # the long requests fixed at their starts in the best schedule found
            off = long_col & (mat.col_start != full.schedule.start[mat.col_unit])
            fixed_lp = _restricted(mat, none, off, time_limit, threads)
            fixed_mip = _restricted(mat, ~none, off, time_limit, threads)
            print(
                f"| {n} | {seed} | {lp:.1f} | {cell(long_int)} | {cell(short_int)} | "
                f"{full.bound:g} | {full.objective} | {fixed_lp[0]:.1f} | "
                f"{cell(fixed_mip)} |",
                flush=True,
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[15, 20, 25, 30])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=list(CONFIGS))
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--lp-sizes", type=int, nargs="*", default=[50, 100, 200])
    ap.add_argument("--pyomo-max", type=int, default=200, help="largest n built with Pyomo")
    ap.add_argument("--skip-exact", action="store_true")
    ap.add_argument(
        "--split-sizes",
        type=int,
        nargs="*",
        default=[],
        help="sizes for the gap-split table (none by default)",
    )
    args = ap.parse_args()
    t0 = time.perf_counter()
    if not args.skip_exact:
        run_exact(args.sizes, args.seeds, args.configs, args.time_limit, args.threads)
    if args.lp_sizes:
        run_lp(args.lp_sizes, args.pyomo_max)
    if args.split_sizes:
        run_split(args.split_sizes, args.seeds, args.time_limit, args.threads)
    print(f"\ntotal {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
