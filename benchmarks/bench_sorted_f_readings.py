"""Four readings of Sorted-F against proven optima on the paper's scaled workload.

Not a test. The seed paper (Wang, Ye, Zhou, arXiv 2508.06133, section 6) reports that Sorted-F
"consistently outperforms" the LP-guided baselines and is within 1.03-1.09 of the LP bound on
tractable instances; lpsched's reading of Sorted-F is behind Sorted-LP on ``paper-scaled``
(docs/results/optimality-gaps.md). This script tries the two choices the paper leaves open
(docs/results/sorted-f-readings.md):

* Phase 1's feasibility of a batch: ``a`` the sum of peaks ``sum (s_i + o_i) <= M`` (SPEC
  section 4, ``fit="peaks"``) or ``b`` the true peak of the batch started together
  (``fit="common-start"``);
* Phase 2: ``c`` the executor on the concatenated list (SPEC section 4, work-conserving) or
  ``d`` the batches one after another, each started together when the previous one has
  completed (:func:`~lpsched.policies.sorted_f_readings.sequential_batches_schedule`);

and runs ``sorted-lp``, ``volume`` (and ``size``, for context) beside them. Each instance is
``paper-scaled`` (the paper's mix with lengths and M divided by 20, M = 825;
:func:`lpsched.generators.small.paper_scaled`), solved by the exact MIP (HiGHS,
:func:`lpsched.certify.solve_exact`) within ``--time-limit`` seconds. An instance is
``optimal`` only when the MIP's lower bound, rounded up, meets the best TEL found (the MIP's or
a policy's); its ratios TEL / OPT go into the table. An instance left with a gap reports
TEL / bound (an upper bound on TEL / OPT) in a separate column group and per instance.

Prints, in Markdown: per n, the mean / max of TEL / OPT per reading and policy over the proven
instances, the number of instances where each Sorted-F reading beats Sorted-LP, and (with
``--per-instance``) one row per instance with its status.

Run (about 1 minute for n = 20-40 with 5 seeds, up to ``time limit x seeds`` more per larger
n)::

    .venv/bin/python benchmarks/bench_sorted_f_readings.py --sizes 20 30 40 50 60 --seeds 0 1 2 3 4
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable

import numpy as np

from lpsched.certify import lp_bound, solve_exact
from lpsched.executor import execute
from lpsched.generators.small import paper_scaled
from lpsched.instance import Instance
from lpsched.policies.registry import run_policy
from lpsched.policies.sorted_f import sorted_f_order, sorted_f_sequential
from lpsched.schedule import Schedule

_EPS = 1e-6


def readings(solver: str) -> dict[str, Callable[[Instance], Schedule]]:
    """The four Sorted-F readings: name -> instance -> schedule."""
    return {
        "sf a+c": lambda inst: execute(inst, sorted_f_order(inst, solver, fit="peaks")),
        "sf b+c": lambda inst: execute(inst, sorted_f_order(inst, solver, fit="common-start")),
        "sf a+d": lambda inst: sorted_f_sequential(inst, solver, fit="peaks"),
        "sf b+d": lambda inst: sorted_f_sequential(inst, solver, fit="common-start"),
    }


def measure(
    n: int, seed: int, *, solver: str, policies: list[str], time_limit: float, threads: int
) -> dict:
    """One instance: the MIP, the LP bound and every reading and policy (TELs checked)."""
    inst = paper_scaled(n, seed)
    tels: dict[str, int] = {}
    for name, run in readings(solver).items():
        tels[name] = run(inst).check().tel
    for p in policies:
        tels[p] = run_policy(inst, p).check().tel
    t0 = time.perf_counter()
    res = solve_exact(inst, "highs", time_limit=time_limit, threads=threads)
    mip_s = time.perf_counter() - t0
    if res.schedule is None or res.objective is None:
        raise RuntimeError(f"{inst.name}: the MIP returned no schedule ({res.status})")
    res.schedule.check()
    best = min(res.objective, *tels.values())
    optimal = math.ceil(res.bound - _EPS) >= best
    return {
        "n": n,
        "seed": seed,
        "name": inst.name,
        "status": "optimal" if optimal else "gap",
        "best": best,
        "bound": float(res.bound),
        "lp": float(lp_bound(inst).bound),
        "mip_s": mip_s,
        "tels": tels,
    }


def _cell(values: list[float]) -> str:
    return f"{np.mean(values):.3f} / {np.max(values):.3f}" if values else "-"


def summary_table(rows: list[dict], columns: list[str]) -> str:
    """Per n: instances, proven, OPT / LP, then mean / max TEL / OPT per column (proven only),
    and how often each Sorted-F reading beats (<) / ties (=) Sorted-LP."""
    sf = [c for c in columns if c.startswith("sf ")]
    head = ["n", "instances", "proven optimal", "OPT / LP", *columns]
    if "sorted-lp" in columns:
        head += [f"{c} vs sorted-lp (< / = / >)" for c in sf]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for n in sorted({r["n"] for r in rows}):
        group = [r for r in rows if r["n"] == n]
        proven = [r for r in group if r["status"] == "optimal"]
        cells = [
            str(n),
            str(len(group)),
            f"{len(proven)}/{len(group)}",
            _cell([r["best"] / r["lp"] for r in proven]),
        ]
        cells += [_cell([r["tels"][c] / r["best"] for r in proven]) for c in columns]
        if "sorted-lp" in columns:
            for c in sf:
                d = [np.sign(r["tels"][c] - r["tels"]["sorted-lp"]) for r in group]
                cells.append(f"{d.count(-1)} / {d.count(0)} / {d.count(1)}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def gap_table(rows: list[dict], columns: list[str]) -> str:
    """Instances not proven optimal: TEL / bound per column (an upper bound on TEL / OPT)."""
    open_rows = [r for r in rows if r["status"] != "optimal"]
    if not open_rows:
        return "(every instance proven optimal)"
    head = ["instance", "best TEL", "bound", "gap", *columns]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in open_rows:
        cells = [
            r["name"],
            str(r["best"]),
            f"{r['bound']:.1f}",
            f"{(r['best'] - r['bound']) / r['best']:.2%}",
        ]
        cells += [f"{r['tels'][c] / r['bound']:.3f}" for c in columns]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def instance_table(rows: list[dict], columns: list[str]) -> str:
    """One row per instance: status, best TEL (= OPT when optimal), bound, MIP seconds, TELs."""
    head = ["instance", "status", "best TEL", "bound", "MIP s", *columns]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r["name"], r["status"], str(r["best"]), f"{r['bound']:.1f}", f"{r['mip_s']:.1f}"]
        cells += [str(r["tels"][c]) for c in columns]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[20, 30, 40])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument(
        "--time-limit", type=float, default=60.0, help="seconds of HiGHS per instance"
    )
    parser.add_argument("--threads", type=int, default=1, help="HiGHS threads")
    parser.add_argument(
        "--solver", default="dp", choices=["dp", "swap"], help="Sorted-F's Phase-1 solver"
    )
    parser.add_argument(
        "--policies",
        nargs="*",
        default=["sorted-lp", "volume", "size"],
        help="registry policies run beside the four readings",
    )
    parser.add_argument("--per-instance", action="store_true", help="also one row per instance")
    args = parser.parse_args(argv)

    rows = []
    t0 = time.perf_counter()
    for n in args.sizes:
        for seed in args.seeds:
            r = measure(
                n,
                seed,
                solver=args.solver,
                policies=args.policies,
                time_limit=args.time_limit,
                threads=args.threads,
            )
            rows.append(r)
            print(
                f"# {r['name']}: {r['status']}, best {r['best']}, bound {r['bound']:.1f}, "
                f"MIP {r['mip_s']:.1f} s, {time.perf_counter() - t0:.0f} s so far",
                file=sys.stderr,
                flush=True,
            )
    columns = [*readings(args.solver), *args.policies]
    print(
        f"TEL / OPT, mean / max over the instances proven optimal (paper-scaled, M = 825, "
        f"Sorted-F Phase 1 `{args.solver}`, HiGHS {args.time_limit:g} s on "
        f"{args.threads} thread(s), seeds {' '.join(map(str, args.seeds))}):\n"
    )
    print(summary_table(rows, columns))
    print("\nInstances not proven optimal (TEL / MIP lower bound):\n")
    print(gap_table(rows, columns))
    if args.per_instance:
        print("\nPer instance (TEL in rounds):\n")
        print(instance_table(rows, columns))
    print(f"\n({time.perf_counter() - t0:.0f} s in all)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
