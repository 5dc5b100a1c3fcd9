"""Online receding-horizon Sorted-F at scale (not a test; prints the measured times).

    python benchmarks/bench_online.py                 # n = 20,000, loads 0.5, 1.0, 2.0
    python benchmarks/bench_online.py --n 50000 --loads 1.5

For each nominal load ``rho`` (arrival rate ``rho * M / mean(A_i)`` requests per round, see
:func:`lpsched.generators.arrivals.nominal_capacity`): draw ``n`` requests of the
``conversation`` workload at M = 16,492 with Poisson arrivals (seed 0), run online FCFS,
online MC-SF and receding-horizon Sorted-F (re-planning on every arrival, ``auto`` = quantile
Phase 1), check every schedule with the independent feasibility check, and print the wall
time of each policy (the best of ``--repeat`` runs, default 3, against the noise of a shared
machine), the number of Phase-1 re-plans and the ratio of each wall time to online MC-SF's at
the same load (the target of issue 13: Sorted-F at most 5x MC-SF at n = 20,000 and
loads 1-2). The compiled kernels (:data:`lpsched.kernels.BACKEND`, printed) are loaded from
numba's disk cache by a warm-up run on a small instance first, whose time is printed apart.
"""

from __future__ import annotations

import argparse
import time

from lpsched.generators.arrivals import nominal_capacity
from lpsched.generators.workloads import generate
from lpsched.kernels import BACKEND
from lpsched.policies.registry import run_policy
from lpsched.schedule import latency_stats


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--memory", type=int, default=16492)
    ap.add_argument("--loads", type=float, nargs="+", default=[0.5, 1.0, 2.0])
    ap.add_argument("--replan-every", type=int, default=None)
    ap.add_argument("--repeat", type=int, default=3, help="runs per policy; the best is shown")
    args = ap.parse_args()
    base = generate("conversation", args.n, args.memory, seed=0)
    cap = nominal_capacity(base.prefill, base.decode, args.memory)
    t0 = time.perf_counter()
    warm = generate("conversation", 300, args.memory, seed=1, arrival_rate=cap)
    run_policy(warm, "online-sorted-f", solver="quantile", replan_every=args.replan_every)
    print(
        f"n = {args.n}, M = {args.memory}, nominal capacity {cap:.4f} requests/round, "
        f"kernels: {BACKEND} (warm-up {time.perf_counter() - t0:.2f} s)"
    )
    print(
        f"{'load':>5} {'policy':>16} {'wall s':>8} {'/ mcsf':>7} {'replans':>8} "
        f"{'mean lat':>10} {'p99 lat':>10}"
    )
    for load in args.loads:
        inst = generate("conversation", args.n, args.memory, seed=0, arrival_rate=load * cap)
        base_wall = None
        for policy in ("online-mcsf", "online-fcfs", "online-sorted-f"):
            wall = float("inf")
            for _ in range(max(1, args.repeat)):
                t0 = time.perf_counter()
                sched = run_policy(inst, policy, replan_every=args.replan_every)
                wall = min(wall, time.perf_counter() - t0)
            base_wall = wall if base_wall is None else base_wall
            sched.check()
            st = latency_stats(sched)
            print(
                f"{load:>5g} {policy:>16} {wall:>8.2f} {wall / base_wall:>7.2f} "
                f"{sched.info.get('replans', '-')!s:>8} "
                f"{st['mean_latency']:>10.0f} {st['p99_latency']:>10.0f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
