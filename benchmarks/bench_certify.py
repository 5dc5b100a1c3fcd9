"""The certified-gap targets of issues 11 and 21: ``lpsched.certify`` at n = 30 to 2000.

Not a test. For each case prints the best schedule's TEL and the method that found it, the
best bound and the method that proved it, the gap, the seconds, and (``--log``) the
improvement log. Targets (2 cores): gap <= 2 % at n = 30 (scaled-mix seeds 0-2) within 60 s,
<= 5 % at n = 200 within 5 minutes, <= 5 % on the Azure mix at n = 2000 (``mix-80-20`` seed 0,
the default instance until the paper's workload replaced it; the README's issue-11 figures)
within 10 minutes. Issue 21, on the paper's workload: <= 3 % at n = 2000 (the default
instance, ``paper2000``) within 10 minutes, <= 2 % on the paper's copies at n = 200
(``paper200``: ``paper-scaled`` seeds 0-2, M = 825) within 5 minutes, and the copies at n = 100
(``paper100``, seeds 0-2) proven optimal within 60 s each.

Run (about 16 minutes for the issue-11 cases, 31 for issue 21's)::

    .venv/bin/python benchmarks/bench_certify.py
    .venv/bin/python benchmarks/bench_certify.py --cases mix30 --log
    .venv/bin/python benchmarks/bench_certify.py --cases paper2000 paper200 paper100
"""

from __future__ import annotations

import argparse
import json

from tabulate import tabulate

from lpsched.certify import certify
from lpsched.generators.small import paper_scaled, scaled_mix
from lpsched.generators.workloads import generate
from lpsched.io import default_instance

CASES = {
    "mix30": [
        (f"scaled-mix n=30 s{seed}", lambda s=seed: scaled_mix(30, s), 60.0) for seed in (0, 1, 2)
    ],
    "mix200": [("scaled-mix n=200 s0", lambda: scaled_mix(200, 0), 300.0)],
    "default": [
        (
            "mix-80-20 n=2000 s0",
            lambda: generate("mix-80-20", 2000, 16492, seed=0, name="default"),
            600.0,
        )
    ],
    "paper2000": [("paper-mix n=2000 s0 (default)", default_instance, 600.0)],
    "paper200": [
        (f"paper-scaled n=200 s{seed}", lambda s=seed: paper_scaled(200, s), 300.0)
        for seed in (0, 1, 2)
    ],
    "paper100": [
        (f"paper-scaled n=100 s{seed}", lambda s=seed: paper_scaled(100, s), 60.0)
        for seed in (0, 1, 2)
    ],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--cases", nargs="+", choices=sorted(CASES), default=["mix30", "mix200", "default"]
    )
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every time limit")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--log", action="store_true", help="print each improvement log")
    parser.add_argument("--json", help="also write the rows as JSON lines to this file")
    args = parser.parse_args()
    rows = []
    for group in args.cases:
        for label, make, limit in CASES[group]:
            res = certify(make(), limit * args.scale, threads=args.threads)
            row = {
                "case": label,
                "limit s": limit * args.scale,
                "TEL": res.objective,
                "found by": res.schedule.policy,
                "bound": round(res.bound, 2),
                "proved by": res.bound_method,
                "gap %": round(100 * res.gap, 2),
                "status": res.status,
                "seconds": round(res.runtime_s, 1),
            }
            rows.append(row)
            print(tabulate([row], headers="keys", tablefmt="github"), flush=True)
            if args.log:
                print(res.summary(), flush=True)
            if args.json:
                with open(args.json, "a") as f:
                    f.write(
                        json.dumps(
                            {
                                **row,
                                "log": [e.to_dict() for e in res.log],
                                "methods": res.info["methods"],
                            }
                        )
                        + "\n"
                    )
    print()
    print(tabulate(rows, headers="keys", tablefmt="github"))


if __name__ == "__main__":
    main()
