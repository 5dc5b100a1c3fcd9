"""Online receding-horizon Sorted-F at scale (not a test; prints the measured times).

    python benchmarks/bench_online.py                 # n = 20,000, loads 0.5, 1.0, 2.0
    python benchmarks/bench_online.py --n 50000 --loads 1.5
    python benchmarks/bench_online.py --time-model llama2-70b-a100x2   # arrivals in seconds

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

With ``--time-model NAME`` the arrivals are in seconds (``arrival_s``, Poisson at ``rho`` times
:func:`lpsched.generators.arrivals.seconds_capacity`, the same exponential draws) and the
policies admit on the model's clock (SPEC section 10); ``vllm`` is timed too.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from lpsched.generators.arrivals import nominal_capacity, poisson_arrival_seconds, seconds_capacity
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
    ap.add_argument("--time-model", default=None, help="arrivals in seconds on this clock")
    args = ap.parse_args()
    base = generate("conversation", args.n, args.memory, seed=0)
    cap = nominal_capacity(base.prefill, base.decode, args.memory)
    opts = {} if args.time_model is None else {"time_model": args.time_model}
    policies = ("online-mcsf", "online-fcfs", "online-sorted-f")
    if args.time_model is not None:
        cap_s, d_bar = seconds_capacity(base, args.time_model)
        policies += ("vllm",)
        print(
            f"time model {args.time_model}: saturated round {1000 * d_bar:.1f} ms, capacity "
            f"{cap_s:.3f} requests/s"
        )
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
        if args.time_model is None:
            inst = generate("conversation", args.n, args.memory, seed=0, arrival_rate=load * cap)
        else:
            rng = np.random.default_rng(0)
            inst = base.replace(arrival_s=poisson_arrival_seconds(args.n, load * cap_s, rng))
        base_wall = None
        for policy in policies:
            wall = float("inf")
            popts = dict(opts) if policy == "vllm" else {**opts, "replan_every": args.replan_every}
            for _ in range(max(1, args.repeat)):
                t0 = time.perf_counter()
                sched = run_policy(inst, policy, **popts)
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
