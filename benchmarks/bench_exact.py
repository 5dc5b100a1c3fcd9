"""Exact TEL and LP bounds on the scaled 80/20 mix: what each modelling choice buys.

Not a test. Prints two tables:

1. ``exact``: for each size n and seed, each configuration of :func:`lpsched.exact.solve_exact`
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

Instances: M = 50 tokens, prefill s_i uniform in 1..6 with probability 0.8 or 15..30 with
probability 0.2, decode o_i uniform in 1..12, offline (the mix of the seed paper scaled down).

Run (about 90 minutes with all configurations; about 25 minutes for the two that matter)::

    .venv/bin/python benchmarks/bench_exact.py
    .venv/bin/python benchmarks/bench_exact.py --configs agg ls --lp-sizes
"""

from __future__ import annotations

import argparse
import time

from lpsched.exact import lp_bound, solve_exact
from lpsched.formulations.horizon import horizon_t1
from lpsched.workloads import scaled_mix

CONFIGS = {
    "plain": dict(horizon="T1", warm_start=False, windows=False, aggregate=False,
                  local_search=0),
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
    head = ("| n | seed | config | status | TEL | heur | bound | gap | T | columns | build s | "
            "solve s |")
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
                print(f"| {n} | {seed} | {name} | {res.status} | {res.objective} | "
                      f"{res.info.get('heuristic_tel')} | "
                      f"{res.bound:g} | {gap} | {res.horizon} | {res.info.get('columns')} | "
                      f"{res.build_s:.2f} | {res.solve_s:.1f} |", flush=True)
                if str(res.status) == "optimal":
                    proven[name, seed] = max(proven.get((name, seed), 0), n)
    print("\nlargest n proven optimal within the limit (0 = none of the sizes):")
    for name in configs:
        print(f"  {name}: " + ", ".join(f"seed {seed}: {proven.get((name, seed), 0)}"
                                         for seed in seeds))


def run_lp(sizes, pyomo_max) -> None:
    print("\n## LP relaxation (tight horizon, windows)\n")
    print("| n | T | columns | non-zeros | LP value | matrix build s | HiGHS s | "
          "Pyomo build s | Pyomo solve s | same value |")
    print("|---" * 10 + "|")
    for n in sizes:
        inst = scaled_mix(n, 0)
        r = lp_bound(inst)
        row = (f"| {n} | {r.horizon} | {r.info['columns']} | {r.info['nonzeros']} | "
               f"{r.bound:.4f} | {r.info['build_s']:.2f} | {r.info['solve_s']:.2f} |")
        if n <= pyomo_max:
            p = lp_bound(inst, backend="pyomo")
            row += (f" {p.info['build_s']:.1f} | {p.info['solve_s']:.1f} | "
                    f"{abs(p.bound - r.bound) <= 1e-6 * max(1.0, r.bound)} |")
        else:
            row += " - | - | - |"
        print(row, flush=True)


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
    args = ap.parse_args()
    t0 = time.perf_counter()
    if not args.skip_exact:
        run_exact(args.sizes, args.seeds, args.configs, args.time_limit, args.threads)
    if args.lp_sizes:
        run_lp(args.lp_sizes, args.pyomo_max)
    print(f"\ntotal {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
