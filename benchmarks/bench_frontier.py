"""Where exact solving stops: ``certify`` within a time limit on the small workloads.

Not a test. For each workload of :data:`lpsched.generators.small.EXACT_WORKLOADS`
(``jaillet-synthetic``, ``scaled-mix``, ``paper-scaled``; each at its own M), each n and
each seed, it runs :func:`lpsched.certify` (the automatic plan) with ``--time-limit`` seconds
and appends one CSV row at once (``workload, n, seed, memory, status, tel, bound, gap,
seconds``); rows already in the file are kept and not rerun, so an interrupted run resumes.
It then prints the frontier table of docs/guide/exact.md: per workload and n, how many draws
were proven optimal and the mean / worst certified gap.

Wall-clock limits: the table depends on the machine and its load; say which.

Run (about 34 x 62 s with the defaults)::

    .venv/bin/python benchmarks/bench_frontier.py frontier.csv --time-limit 60
"""

from __future__ import annotations

import argparse
import csv
import os
import time
from collections import defaultdict

from lpsched.certify import certify
from lpsched.generators.small import EXACT_WORKLOADS

#: (workload, sizes) measured by default.
DEFAULT = {
    "paper-scaled": (30, 40, 50, 60),
    "scaled-mix": (20, 30, 40, 50, 60),
    "jaillet-synthetic": (10, 12, 15, 20, 30, 40, 50, 60),
}
FIELDS = ["workload", "n", "seed", "memory", "status", "tel", "bound", "gap", "seconds"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="CSV file (appended; finished rows are not rerun)")
    ap.add_argument("--seeds", default="1,2")
    ap.add_argument("--time-limit", type=float, default=60.0)
    args = ap.parse_args()
    done = set()
    if os.path.exists(args.out):
        with open(args.out, newline="") as fh:
            done = {(r["workload"], int(r["n"]), int(r["seed"])) for r in csv.DictReader(fh)}
    new = not os.path.exists(args.out)
    with open(args.out, "a", newline="") as fh:
        writer = csv.DictWriter(fh, FIELDS)
        if new:
            writer.writeheader()
        for workload, sizes in DEFAULT.items():
            for n in sizes:
                for seed in map(int, args.seeds.split(",")):
                    if (workload, n, seed) in done:
                        continue
                    inst = EXACT_WORKLOADS[workload](n, seed)
                    t0 = time.perf_counter()
                    res = certify(inst, time_limit=args.time_limit)
                    row = dict(
                        workload=workload,
                        n=n,
                        seed=seed,
                        memory=inst.memory,
                        status=str(res.status),
                        tel=res.objective,
                        bound=res.bound,
                        gap=res.gap,
                        seconds=round(time.perf_counter() - t0, 1),
                    )
                    writer.writerow(row)
                    fh.flush()
                    print(row, flush=True)
    table(args.out)


def table(path: str) -> None:
    """Print the frontier table from the CSV at ``path``."""
    groups = defaultdict(list)
    with open(path, newline="") as fh:
        for r in csv.DictReader(fh):
            groups[(r["workload"], int(r["n"]))].append(r)
    print("| workload | n | proven | certified gap: mean / worst | seconds: mean |")
    print("|---|---:|---:|---:|---:|")
    for (workload, n), rows in groups.items():
        gaps = [float(r["gap"]) for r in rows]
        proven = sum(r["status"] == "optimal" for r in rows)
        secs = sum(float(r["seconds"]) for r in rows) / len(rows)
        print(
            f"| {workload} | {n} | {proven}/{len(rows)} | {100 * sum(gaps) / len(gaps):.1f}% / "
            f"{100 * max(gaps):.1f}% | {secs:.0f} |"
        )


if __name__ == "__main__":
    main()
