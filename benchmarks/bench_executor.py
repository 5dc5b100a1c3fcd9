"""Executor and Sorted-F scaling on the conversation workload (not a test; prints a table).

    python benchmarks/bench_executor.py            # n = 1k, 10k, 100k, 1M
    python benchmarks/bench_executor.py --max-n 100000

For each n: generate the ``conversation`` workload at M = 16,492 (seed 0), build the MC-SF list,
run the executor (strict order), validate the schedule with the independent feasibility check,
and run Sorted-F with the ``quantile`` Phase-1 solver (up to 100k). Times are wall seconds on
this machine; ``per n log2 n`` shows whether the cost grows like n log n.

A second table times the backfilling executor (``backfill=True``) on the MC-SF and FCFS lists
at ``--backfill-sizes`` (default 2k, 8k, 32k; about a minute).
"""

from __future__ import annotations

import argparse
import math
import time

from lpsched.executor import execute
from lpsched.generators.workloads import generate
from lpsched.policies.baselines import fcfs_order, mcsf_order
from lpsched.policies.registry import run_policy


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--max-n", type=int, default=1_000_000)
    ap.add_argument("--memory", type=int, default=16492)
    ap.add_argument("--sorted-f-max-n", type=int, default=100_000)
    ap.add_argument("--backfill-sizes", type=int, nargs="*", default=[2000, 8000, 32000])
    args = ap.parse_args()
    print(
        f"{'n':>9} {'mcsf+exec s':>12} {'check s':>9} {'total s':>9} "
        f"{'us/(n log2 n)':>14} {'sorted-f quantile s':>20}"
    )
    n = 1000
    while n <= args.max_n:
        inst = generate("conversation", n, args.memory, seed=0)
        t0 = time.perf_counter()
        sched = execute(inst, mcsf_order(inst))
        t1 = time.perf_counter()
        sched.check()
        t2 = time.perf_counter()
        sf = ""
        if n <= args.sorted_f_max_n:
            t3 = time.perf_counter()
            run_policy(inst, "sorted-f", solver="quantile").check()
            sf = f"{time.perf_counter() - t3:.2f}"
        per = (t2 - t0) / (n * math.log2(n)) * 1e6
        print(
            f"{n:>9} {t1 - t0:>12.2f} {t2 - t1:>9.2f} {t2 - t0:>9.2f} {per:>14.3f} {sf:>20}",
            flush=True,
        )
        n *= 10
    if args.backfill_sizes:
        print(f"\n{'n':>9} {'mcsf+backfill s':>16} {'fcfs+backfill s':>16}")
    for n in args.backfill_sizes:
        inst = generate("conversation", n, args.memory, seed=0)
        cells = []
        for order in (mcsf_order(inst), fcfs_order(inst)):
            t0 = time.perf_counter()
            execute(inst, order, backfill=True).check()
            cells.append(time.perf_counter() - t0)
        print(f"{n:>9} {cells[0]:>16.2f} {cells[1]:>16.2f}", flush=True)


if __name__ == "__main__":
    main()
