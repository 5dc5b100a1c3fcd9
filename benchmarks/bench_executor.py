"""Executor and Sorted-F scaling on the conversation workload (not a test; prints a table).

    python benchmarks/bench_executor.py                   # n = 10k, 50k, 200k, 1M (minutes)
    python benchmarks/bench_executor.py --max-n 200000    # seconds
    python benchmarks/bench_executor.py --max-n 10000000  # adds 10M (the stretch target)

Each n runs in a fresh subprocess (so that its peak RSS is its own) which generates the
``conversation`` workload at M = 16,492 (seed 0), warms the compiled kernels up on 300 requests,
then times, one after the other on the same instance:

* ``sort`` -- ``np.argsort`` of n random floats: the floor of any list policy;
* ``mcsf`` -- the MC-SF list and the strict executor (``run_policy(inst, "mcsf")``);
* ``sorted-f`` -- Sorted-F with the ``quantile`` Phase 1 (list and executor), and its Phase 1
  alone (``order_runtime_s``);
* ``fcfs`` -- the FCFS list and the strict executor;
* ``mcsf+bf``, ``fcfs+bf`` -- the same lists with the backfilling executor.

Ratios are taken within that one subprocess (the machine may be shared: compare ratios, not
seconds across rows): ``sorted-f / mcsf``, each policy against the sort, and each backfill run
against the strict run of its list. Every schedule is checked (``Schedule.check``) outside the
timings. Times are the best of ``--repeat`` runs (of at least 3 for the sort), wall seconds.
``rss MB`` is the subprocess's peak resident set (``ru_maxrss``) after all runs; ``backend`` is
:data:`lpsched.kernels.BACKEND`.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

import numpy as np

SIZES = (10_000, 50_000, 200_000, 1_000_000, 10_000_000)


def _best(repeat: int, run):
    """Best wall time of ``repeat`` calls of ``run()`` and the last result."""
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = run()
        best = min(best, time.perf_counter() - t0)
    return best, out


def measure(n: int, memory: int, repeat: int, backfill: bool) -> dict:
    """One row: the timings at ``n`` requests (run in the subprocess)."""
    from lpsched.generators.workloads import generate
    from lpsched.kernels import BACKEND
    from lpsched.policies.registry import run_policy

    policies = [("mcsf", "mcsf", {}), ("sorted-f", "sorted-f", {"solver": "quantile"})]
    policies.append(("fcfs", "fcfs", {}))
    if backfill:
        policies += [
            ("mcsf+bf", "mcsf+backfill", {}),
            ("fcfs+bf", "fcfs+backfill", {}),
        ]
    warm = generate("conversation", 300, memory, seed=1)
    for _, name, opts in policies:
        run_policy(warm, name, **opts)
    inst = generate("conversation", n, memory, seed=0)
    numbers = np.random.default_rng(0).random(n)
    row: dict = {"n": n, "backend": BACKEND}
    np.argsort(numbers[:1000])
    row["sort"], _ = _best(max(repeat, 3), lambda: np.argsort(numbers))
    for label, name, opts in policies:
        row[label], sched = _best(
            repeat, lambda name=name, opts=opts: run_policy(inst, name, **opts)
        )
        if label == "sorted-f":
            row["phase1"] = sched.info["order_runtime_s"]
        sched.check()
        del sched
    row["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return row


def _cell(row: dict, key: str, against: str | None = None) -> str:
    if key not in row:
        return "-"
    if against is None:
        return f"{row[key]:.2f}"
    return f"{row[key] / row[against]:.2f}"


COLUMNS = (
    ("n", lambda r: f"{r['n']:,}"),
    ("sort ms", lambda r: f"{1000 * r['sort']:.1f}"),
    ("mcsf s", lambda r: _cell(r, "mcsf")),
    ("mcsf / sort", lambda r: _cell(r, "mcsf", "sort")),
    ("sorted-f s", lambda r: _cell(r, "sorted-f")),
    ("phase 1 s", lambda r: _cell(r, "phase1")),
    ("sorted-f / mcsf", lambda r: _cell(r, "sorted-f", "mcsf")),
    ("sorted-f / sort", lambda r: _cell(r, "sorted-f", "sort")),
    ("fcfs s", lambda r: _cell(r, "fcfs")),
    ("mcsf+bf s", lambda r: _cell(r, "mcsf+bf")),
    ("mcsf+bf / mcsf", lambda r: _cell(r, "mcsf+bf", "mcsf")),
    ("fcfs+bf s", lambda r: _cell(r, "fcfs+bf")),
    ("fcfs+bf / fcfs", lambda r: _cell(r, "fcfs+bf", "fcfs")),
    ("rss MB", lambda r: f"{r['rss_mb']:.0f}"),
    ("backend", lambda r: r["backend"]),
)


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--max-n", type=int, default=1_000_000, help="largest n of %(default)s")
    ap.add_argument("--sizes", type=int, nargs="*", help=f"instead of {SIZES} up to --max-n")
    ap.add_argument("--memory", type=int, default=16492, help="M (tokens)")
    ap.add_argument("--repeat", type=int, default=1, help="best of this many runs")
    ap.add_argument(
        "--backfill-max-n", type=int, default=None, help="no backfill runs above (default --max-n)"
    )
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)  # the subprocess: one row as JSON
    args = ap.parse_args()
    bf_max = args.max_n if args.backfill_max_n is None else args.backfill_max_n
    if args.one is not None:
        print(json.dumps(measure(args.one, args.memory, args.repeat, args.one <= bf_max)))
        return
    sizes = args.sizes or [n for n in SIZES if n <= args.max_n]
    print("| " + " | ".join(name for name, _ in COLUMNS) + " |")
    print("|" + "---:|" * len(COLUMNS))
    for n in sizes:
        cmd = [sys.executable, __file__, "--one", str(n), "--memory", str(args.memory)]
        cmd += ["--repeat", str(args.repeat), "--backfill-max-n", str(bf_max)]
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode:
            sys.exit(f"n = {n}: the measuring subprocess failed:\n{res.stderr}")
        row = json.loads(res.stdout.strip().splitlines()[-1])
        print("| " + " | ".join(cell(row) for _, cell in COLUMNS) + " |", flush=True)


if __name__ == "__main__":
    main()
