"""What the fix-and-optimize / large-neighbourhood search adds over the list policies and the
list local search (issue 11, upper side).

Not a test. For each case prints one row per method: TEL, its improvement over the best list
policy (``best_heuristic``: fcfs, mcsf, size, sorted-f, each strict and +backfill) and the
seconds used. Methods:

* ``list``       the best list policy (the start point of the others);
* ``ls``         today's list local search (:func:`~lpsched.policies.local_search.improve_schedule`)
  from it, with the case's budget (it stops earlier after ``50 n`` moves without a new best);
* ``lns-cpsat``  :func:`~lpsched.certify.methods.lns.improve_lns` from the best list policy, CP-SAT
  sub-MIPs;
* ``lns-highs``  the same with HiGHS sub-MIPs;
* ``lns-nocomp`` CP-SAT sub-MIPs without the executor compaction step (``compact=False``);
* ``ls+lns``     the local search (``--ls-budget`` at most), then the search (CP-SAT) from its
  schedule in the rest of the budget.

Cases (``--cases``): ``n30`` (``scaled_mix(30, seed)``, seeds 0-2, 60 s each; best known
625 / 610 / 551), ``n200`` (``scaled_mix(200, 0)``, 300 s; best list policy 21,894) and
``default`` (``mix-80-20`` seed 0, n = 2000: the Azure mix, the default instance until the
paper's workload replaced it; 600 s for the search, ``--ls-budget`` for the local search;
Sorted-F 21,714,905). Threads = 1 for every solver.

Measured 2026-12-01 (threads = 1, 2 cores shared with six other jobs: provisional; ``lns-*``
rows ran with the executor compaction on, the default above n = 200 only)::

    case                 list     ls (s)         lns-cpsat  lns-highs  lns-nocomp  ls+lns
    scaled_mix(30, 0)    659      626 (8)        632        638        626         623
    scaled_mix(30, 1)    639      629 (3)        612        618        608         617
    scaled_mix(30, 2)    582      554 (4)        553        548        544         553
    scaled_mix(200, 0)   20,456   19,151 (41)    19,154     19,541     -           19,045
    default (n = 2000)   21,714,905  21,498,846 (120)  21,308,521  -    -           21,425,041

Run (about 16 + 20 + 12 minutes)::

    .venv/bin/python benchmarks/bench_lns.py --cases n30 n200
    .venv/bin/python benchmarks/bench_lns.py --cases default --methods ls lns-cpsat --ls-budget 120
"""

from __future__ import annotations

import argparse
import time

from lpsched.certify.methods.lns import improve_lns
from lpsched.generators.small import scaled_mix
from lpsched.generators.workloads import generate
from lpsched.policies.local_search import best_heuristic, improve_schedule

METHODS = ("ls", "lns-cpsat", "lns-highs", "lns-nocomp", "ls+lns")


def cases(names: list[str]):
    """``(label, instance, budget seconds)`` of each case named."""
    for name in names:
        if name == "n30":
            for seed in range(3):
                yield f"scaled_mix(30, {seed})", scaled_mix(30, seed), 60.0
        elif name == "n200":
            yield "scaled_mix(200, 0)", scaled_mix(200, 0), 300.0
        elif name == "default":
            azure = generate("mix-80-20", 2000, 16492, seed=0, name="default")
            yield "mix-80-20 (n = 2000)", azure, 600.0
        else:
            raise SystemExit(f"unknown case {name!r}; choose from n30, n200, default")


def run(method: str, inst, start, budget: float, ls_budget: float | None):
    """TEL and seconds of ``method`` from the schedule ``start``."""
    t0 = time.perf_counter()
    if method == "ls":
        limit = budget if ls_budget is None else ls_budget
        out = improve_schedule(inst, start, iterations=200_000, time_limit=limit)
        extra = ""
    else:
        if method == "ls+lns":  # the local search first, the search in what it leaves
            limit = budget if ls_budget is None else ls_budget
            start = improve_schedule(inst, start, iterations=200_000, time_limit=limit)
            budget = max(0.1 * budget, budget - (time.perf_counter() - t0))
        solver = "highs" if method == "lns-highs" else "cpsat"
        out = improve_lns(
            inst,
            start,
            time_limit=budget,
            threads=1,
            solver=solver,
            compact=method != "lns-nocomp",
        )
        st = out.info["lns"]
        extra = (
            f"sub-MIPs {st['solves']}, improving {st['improving']}, ties {st['ties']}, "
            f"timeouts {st['timeouts']}, rejected {st['rejected']}, "
            f"compaction gain {st['compaction_gain']}, k {st['k_final']}/{st['k_max_used']}"
        )
    out.check()
    return out.tel, time.perf_counter() - t0, extra


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", nargs="+", default=["n30", "n200"])
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    ap.add_argument(
        "--ls-budget", type=float, default=None, help="seconds for 'ls' (default: the case's)"
    )
    args = ap.parse_args()
    print("| case | method | TEL | vs best list | seconds | notes |")
    print("|---|---|---|---|---|---|")
    for label, inst, budget in cases(args.cases):
        t0 = time.perf_counter()
        start = best_heuristic(inst)
        print(
            f"| {label} | list ({start.policy}) | {start.tel:,} | - | "
            f"{time.perf_counter() - t0:.1f} | |",
            flush=True,
        )
        for method in args.methods:
            tel, secs, extra = run(method, inst, start, budget, args.ls_budget)
            gain = 100.0 * (start.tel - tel) / start.tel
            print(
                f"| {label} | {method} | {tel:,} | -{gain:.2f}% | {secs:.0f} | {extra} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
