"""Speed of the algorithms that followed Sorted-F (issue 29; not a test; prints two tables).

    python benchmarks/bench_algorithms.py                  # n = 10^5 list/pipeline, n = 2000 LP
    python benchmarks/bench_algorithms.py --n 20000 --repeat 1

Table 1, on the paper's mix (``paper-mix``, M = 16,492, seed 0) at ``--n`` requests (default
10^5) and on identical prompts in arXiv 2601.22996's setting (``lmsys-common-prompt``: s = 79,
M = 4,096) at the same n: the wall time of every new list or pipeline policy (``volume``,
``svf``, ``sps``, ``gba``, ``gba-d``) beside the strict executor's time for ``volume`` (the
target: each at most 3x that), best of ``--repeat`` runs after a warm-up that compiles the
kernels. Table 2: the LP-based policies (``sorted-lp``, ``lp-swap``) on the default instance
(n = 2000), one run each, with their TEL (the work limits make both a function of the
instance, so the TEL is the same on every machine; the seconds are this machine's).
Every schedule is checked (``Schedule.check``) outside the timings.
"""

from __future__ import annotations

import argparse
import time

from tabulate import tabulate

from lpsched.generators.workloads import PAPER_MEMORY, generate
from lpsched.io import default_instance
from lpsched.kernels import BACKEND
from lpsched.policies.registry import run_policy

FAST = ("volume", "svf", "sps", "gba", "gba-d")
LP = ("sorted-lp", "lp-swap")


def _best(repeat: int, run):
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = run()
        best = min(best, time.perf_counter() - t0)
    return best, out


def _instances(n: int):
    yield "paper-mix", generate("paper-mix", n, PAPER_MEMORY, seed=0)
    try:
        from lpsched.generators.lmsys import common_prompt_instance
    except ImportError:  # the generator of the algorithms reproduction
        return
    yield "lmsys s = 79, M = 4096", common_prompt_instance(n, 4096, seed=0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-lp", action="store_true", help="skip table 2")
    args = ap.parse_args()
    warm = generate("paper-mix", 300, PAPER_MEMORY, seed=1)
    for name in FAST:
        run_policy(warm, name)
    rows = []
    for label, inst in _instances(args.n):
        times = {}
        for name in FAST:
            times[name], sched = _best(
                args.repeat, lambda name=name, inst=inst: run_policy(inst, name)
            )
            sched.check()
            rows.append([label, name, f"{times[name]:.3f}", sched.tel])
        for row in rows[-len(FAST) :]:
            row.insert(3, f"{times[row[1]] / times['volume']:.2f}")
    print(f"n = {args.n}, backend {BACKEND}, best of {args.repeat}")
    print(tabulate(rows, headers=["workload", "policy", "seconds", "/ volume", "TEL (rounds)"]))
    if args.no_lp:
        return
    inst = default_instance()
    lp_rows = []
    for name in LP:
        t0 = time.perf_counter()
        sched = run_policy(inst, name)
        seconds = time.perf_counter() - t0
        sched.check()
        lp_rows.append([name, f"{seconds:.1f}", sched.tel])
    print()
    print("default instance (n = 2000, M = 16,492)")
    print(tabulate(lp_rows, headers=["policy", "seconds", "TEL (rounds)"]))


if __name__ == "__main__":
    main()
