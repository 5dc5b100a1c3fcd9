"""Reading a schedule in seconds against running the executor (not a test; prints a table).

    python benchmarks/bench_timing.py                   # n = 10k, 100k, 1M (about a minute)
    python benchmarks/bench_timing.py --sizes 200000    # one size

Each n runs in a fresh subprocess (so that its peak RSS is its own) which generates the
``conversation`` workload at M = 16,492 (seed 0), warms the compiled kernels and the time models
up on 300 requests, builds the MC-SF list (``mcsf_order``), then times, on the same instance:

* ``execute`` -- the strict executor on that list (``lpsched.executor.execute``), the cost
  that reading the schedule in seconds is held to (issue 23: at most as much);
* ``unit``, ``linear``, ``profile`` -- ``to_seconds(schedule, model)`` under ``unit``,
  ``linear`` (its defaults) and the shipped profile ``llama2-70b-a100x2``: the loads of every
  busy round by difference arrays, the model, the clock and each request's latency, TTFT and
  TPOT;
* ``loads`` -- ``round_loads(schedule)`` alone (P, D, K over rounds 1 .. makespan);
* ``stats`` -- ``ScheduleSeconds.stats()`` (mean, p50, p90, p99, throughput).

Ratios are taken within that one subprocess (the machine may be shared: compare ratios, not
seconds across rows). Times are the best of ``--repeat`` runs, wall seconds. ``busy rounds`` is
the number of rounds the model is evaluated on; ``rss MB`` the subprocess's peak resident set
(``ru_maxrss``) after all runs.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

SIZES = (10_000, 100_000, 1_000_000)


def _best(repeat: int, run):
    """Best wall time of ``repeat`` calls of ``run()`` and the last result."""
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = run()
        best = min(best, time.perf_counter() - t0)
    return best, out


def measure(n: int, memory: int, repeat: int) -> dict:
    """One row: the timings at ``n`` requests (run in the subprocess)."""
    from lpsched.executor import execute
    from lpsched.generators.workloads import generate
    from lpsched.kernels import BACKEND
    from lpsched.policies.baselines import mcsf_order
    from lpsched.timing import round_loads, time_model, to_seconds

    models = {
        "unit": time_model("unit"),
        "linear": time_model("linear"),
        "profile": time_model("llama2-70b-a100x2"),
    }
    warm = generate("conversation", 300, memory, seed=1)
    warm_sched = execute(warm, mcsf_order(warm))
    for model in models.values():
        to_seconds(warm_sched, model).stats()
    inst = generate("conversation", n, memory, seed=0)
    order = mcsf_order(inst)
    row: dict = {"n": n, "backend": BACKEND}
    row["execute"], sched = _best(repeat, lambda: execute(inst, order))
    row["makespan"] = sched.makespan
    for label, model in models.items():
        row[label], secs = _best(repeat, lambda model=model: to_seconds(sched, model))
    row["busy_rounds"] = int(secs.busy_tau.size)
    row["loads"], _ = _best(repeat, lambda: round_loads(sched))
    row["stats"], _ = _best(repeat, secs.stats)
    row["mean_latency_s"] = secs.stats()["mean_latency_s"]
    row["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return row


COLUMNS = (
    ("n", lambda r: f"{r['n']:,}"),
    ("busy rounds", lambda r: f"{r['busy_rounds']:,}"),
    ("execute s", lambda r: f"{r['execute']:.3f}"),
    ("unit s", lambda r: f"{r['unit']:.3f}"),
    ("linear s", lambda r: f"{r['linear']:.3f}"),
    ("profile s", lambda r: f"{r['profile']:.3f}"),
    ("linear / execute", lambda r: f"{r['linear'] / r['execute']:.2f}"),
    ("round_loads s", lambda r: f"{r['loads']:.3f}"),
    ("stats s", lambda r: f"{r['stats']:.3f}"),
    ("rss MB", lambda r: f"{r['rss_mb']:.0f}"),
    ("backend", lambda r: r["backend"]),
)


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--sizes", type=int, nargs="*", default=list(SIZES), help="values of n")
    ap.add_argument("--memory", type=int, default=16492, help="M (tokens)")
    ap.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)  # the subprocess: one row as JSON
    args = ap.parse_args()
    if args.one is not None:
        print(json.dumps(measure(args.one, args.memory, args.repeat)))
        return
    print("| " + " | ".join(name for name, _ in COLUMNS) + " |")
    print("|" + "---:|" * len(COLUMNS))
    for n in args.sizes:
        cmd = [sys.executable, __file__, "--one", str(n), "--memory", str(args.memory)]
        cmd += ["--repeat", str(args.repeat)]
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode:
            sys.exit(f"n = {n}: the measuring subprocess failed:\n{res.stderr}")
        row = json.loads(res.stdout.strip().splitlines()[-1])
        print("| " + " | ".join(cell(row) for _, cell in COLUMNS) + " |", flush=True)


if __name__ == "__main__":
    main()
