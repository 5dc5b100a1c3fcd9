"""CP-SAT on the interval + time-indexed model as a schedule source: what it adds (issue 11).

Not a test. For each case (scaled 80/20 mix, M = 50) and each worker count, prints:

* ``list`` -- the best list policy (:func:`~lpsched.policies.local_search.best_heuristic`);
* ``ls`` -- the list local search from it (:func:`~lpsched.policies.local_search.improve_schedule`,
  default settings), the schedule CP-SAT starts from (hint, horizon and windows);
* ``cpsat`` -- the TEL of
  :func:`~lpsched.certify.methods.cpsat_intervals.solve_cpsat_intervals` after the time
  limit, and ``t_up`` the second of its last improvement;
* ``bound`` -- its proven bound, and ``t_lo`` the second it was reached;
* ``known`` / ``highs`` -- the best TEL known and the HiGHS bound after 600 s (issue 11) where
  known, for comparison;
* the model size (``nnz`` of the time-indexed rows) and the build seconds.

Run (about 10 minutes with the defaults: n = 30 seeds 0-2, n = 50 and 100 seed 0, 1 and 2
workers, 60 s each)::

    .venv/bin/python benchmarks/bench_cpsat_intervals.py
    .venv/bin/python benchmarks/bench_cpsat_intervals.py --cases 30:1 --threads 2 --time-limit 120
"""

from __future__ import annotations

import argparse
import time

from lpsched.certify.methods.cpsat_intervals import solve_cpsat_intervals
from lpsched.generators.small import scaled_mix
from lpsched.policies.local_search import best_heuristic, improve_schedule
from lpsched.solvers.progress import Observer

#: Best TEL known and HiGHS bound after 600 s (issue 11), by (n, seed).
KNOWN = {(30, 0): (625, 586), (30, 1): (610, 573), (30, 2): (551, 508)}

DEFAULT_CASES = ["30:0", "30:1", "30:2", "50:0", "100:0"]


def run_case(n: int, seed: int, threads: int, time_limit: float) -> dict:
    """One case: the list policy, the local search, then CP-SAT from the local search."""
    inst = scaled_mix(n, seed)
    heur = best_heuristic(inst)
    ls = improve_schedule(inst, heur)
    t0 = time.perf_counter()
    last = {"up": 0.0, "lo": 0.0, "bound": None}

    def improved(_sched) -> None:
        last["up"] = time.perf_counter() - t0

    def bounded(b: float) -> None:
        last["lo"], last["bound"] = time.perf_counter() - t0, b

    res = solve_cpsat_intervals(
        inst,
        ls,
        time_limit=time_limit,
        threads=threads,
        observer=Observer(on_incumbent=improved, on_bound=bounded),
    )
    known, highs = KNOWN.get((n, seed), (None, None))
    return {
        "n": n,
        "seed": seed,
        "threads": threads,
        "list": heur.tel,
        "ls": ls.tel,
        "cpsat": res.objective,
        "t_up": last["up"] if res.info.get("improved") else float("nan"),
        "bound": res.bound,
        "t_lo": last["lo"],
        "status": res.status,
        "known": known,
        "highs": highs,
        "nnz": res.info["nonzeros"],
        "build_s": res.info.get("build_s", float("nan")),
        "runtime_s": res.runtime_s,
    }


def main() -> None:
    """Parse the options, run every case and print one row per case and worker count."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", nargs="+", default=DEFAULT_CASES, help="n:seed pairs")
    ap.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--time-limit", type=float, default=60.0)
    args = ap.parse_args()
    head = (
        f"{'n':>4} {'seed':>4} {'thr':>3} {'list':>6} {'ls':>6} {'cpsat':>6} {'t_up':>5} "
        f"{'bound':>7} {'t_lo':>5} {'known':>6} {'highs':>6} {'nnz':>9} {'build':>5} status"
    )
    print(head, flush=True)
    for case in args.cases:
        n, seed = (int(v) for v in case.split(":"))
        for threads in args.threads:
            r = run_case(n, seed, threads, args.time_limit)
            print(
                f"{r['n']:>4} {r['seed']:>4} {r['threads']:>3} {r['list']:>6} {r['ls']:>6} "
                f"{r['cpsat']:>6} {r['t_up']:>5.1f} {r['bound']:>7.0f} {r['t_lo']:>5.1f} "
                f"{r['known'] or '-':>6} {r['highs'] or '-':>6} {r['nnz']:>9,} "
                f"{r['build_s']:>5.1f} {r['status']}",
                flush=True,
            )


if __name__ == "__main__":
    main()
