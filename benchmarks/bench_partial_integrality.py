"""The partial-integrality bound: which long set gives the best bound per second.

Not a test. For each instance (``scaled-mix`` and ``uniform-small``, offline) the upper-bound
schedule is the best list policy improved by the list local search (3 s); then
:func:`lpsched.certify.methods.partial_integrality.partial_integrality_bound` runs once per long-set
rule with the largest time limit, threads = 1, and the bound it had reached after each smaller
limit is read from its observer's ``on_bound`` trace (times from the call's start, build
included: the same as separate runs with those limits, HiGHS being deterministic with one thread).

Columns: instance, rule (``none`` is the LP at the same horizon, ``all`` the full MIP), ``|L|``
(long requests), the bound after each limit, ``closed`` (the time at which the relaxation was
solved to its rounded optimum, ``-`` if not), ``cpu`` (CPU seconds of the run: on a shared
machine the wall-clock limits buy less), ``UB`` (the schedule's TEL) and the LP value.

Run (about 30 minutes with the defaults)::

    .venv/bin/python benchmarks/bench_partial_integrality.py
    .venv/bin/python benchmarks/bench_partial_integrality.py --sizes 30 --seeds 0 --limits 10
"""

from __future__ import annotations

import argparse
import json
import time

from lpsched.certify.methods.partial_integrality import partial_integrality_bound
from lpsched.generators.small import scaled_mix, uniform_small
from lpsched.policies.local_search import best_heuristic, improve_schedule
from lpsched.solvers.progress import Observer

#: rule name -> (long, share) arguments.
RULES = {
    "none": ("none", None),
    "footprint-0.3": ("footprint", 0.3),
    "footprint-0.4": ("footprint", 0.4),
    "footprint-0.5": ("footprint", 0.5),
    "area-0.5": ("area", 0.5),
    "all": ("all", None),
}
FAMILIES = {"mix": scaled_mix, "uniform": uniform_small}


def trace_run(inst, sched, rule: str, limit: float) -> dict:
    """One run with ``limit`` seconds; the bound trace ``[(seconds, bound)]``."""
    long, share = RULES[rule]
    t0, c0 = time.perf_counter(), time.process_time()
    trace: list[tuple[float, float]] = []
    res = partial_integrality_bound(
        inst,
        sched,
        time_limit=limit,
        threads=1,
        long=long,
        share=share,
        observer=Observer(on_bound=lambda b: trace.append((time.perf_counter() - t0, b))),
    )
    return {"result": res, "trace": trace, "cpu_s": time.process_time() - c0}


def bound_at(trace: list[tuple[float, float]], seconds: float) -> float | None:
    """The best bound reported within ``seconds``."""
    vals = [b for t, b in trace if t <= seconds]
    return max(vals) if vals else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--families", nargs="+", default=list(FAMILIES), choices=list(FAMILIES))
    ap.add_argument("--sizes", nargs="+", type=int, default=[30, 100, 200])
    ap.add_argument("--seeds", nargs="+", type=int, default=[0])
    ap.add_argument("--rules", nargs="+", default=list(RULES), choices=list(RULES))
    ap.add_argument("--limits", nargs="+", type=float, default=[10.0, 30.0, 60.0])
    ap.add_argument("--json", help="also write one JSON object per run to this file")
    args = ap.parse_args()
    limits = sorted(args.limits)
    head = ["instance", "rule", "|L|"] + [f"{t:g}s" for t in limits]
    head += ["closed", "cpu", "UB", "LP"]
    print(" | ".join(head), flush=True)
    out = open(args.json, "a") if args.json else None  # noqa: SIM115
    for fam in args.families:
        for n in args.sizes:
            for seed in args.seeds:
                inst = FAMILIES[fam](n, seed)
                sched = improve_schedule(inst, best_heuristic(inst), 4000, time_limit=3.0)
                lp = None
                for rule in args.rules:
                    run = trace_run(inst, sched, rule, limits[-1])
                    res = run["result"]
                    if rule == "none" and res.info["optimal"]:
                        lp = res.info["dual_bound"]
                    at = [bound_at(run["trace"], t) for t in limits]
                    at[-1] = res.bound if res.info["source"] == "highs" else at[-1]
                    closed = f"{res.runtime_s:.1f}s" if res.info["optimal"] else "-"
                    cells = [inst.name, rule, str(res.info["long"])]
                    cells += ["-" if b is None else f"{b:g}" for b in at]
                    cells += [closed, f"{run['cpu_s']:.0f}s", str(sched.tel)]
                    cells.append("-" if lp is None else f"{lp:.2f}")
                    print(" | ".join(cells), flush=True)
                    if out is not None:
                        rec = {
                            "instance": inst.name,
                            "rule": rule,
                            "long": res.info["long"],
                            "limits": limits,
                            "bounds": at,
                            "optimal": res.info["optimal"],
                            "runtime_s": res.runtime_s,
                            "cpu_s": run["cpu_s"],
                            "trace": run["trace"],
                            "upper_bound": sched.tel,
                            "lp": lp,
                        }
                        out.write(json.dumps(rec) + "\n")
                        out.flush()
    if out is not None:
        out.close()


if __name__ == "__main__":
    main()
