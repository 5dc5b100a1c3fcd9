"""Issue 11, item 4: the configuration relaxation over windows of W rounds, W = 1, 2, 4, 8, 12.

For each case: the best schedule known (``solve_exact`` with ``--exact-time-limit``, or read
from ``--known``), the time-indexed LP at that schedule's tight horizon, and
:func:`~lpsched.research.window_configuration.window_configuration_bound` at the same horizon
for each W, each warm-started from the nested W before it (1 -> 2 -> 4 -> 8, 4 -> 12). Prints
the table and writes it as Markdown to OUT.

    python benchmarks/bench_window_configuration.py OUT.md [--time-limit S] [--cases ...]

Cases: ``mix{n}-s{seed}`` (``scaled_mix(n, seed)``), ``mix{n}-s{seed}-short`` (its requests
with prefill < 15 only, the short core), or a path to an instance file. ``--known FILE``: JSON
lines ``{"name", "objective", "bound", "status", "start"}`` from earlier exact runs (the
schedule is checked). Source: ours.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from tabulate import tabulate

from lpsched.certify import solve_exact
from lpsched.formulations.horizon import tight_horizon
from lpsched.formulations.time_indexed import time_indexed_matrix
from lpsched.generators.small import scaled_mix
from lpsched.instance import Instance
from lpsched.io import read_instance
from lpsched.research.window_configuration import window_configuration_bound
from lpsched.schedule import Schedule
from lpsched.solvers.backends import highs

WINDOWS = [(1, None), (2, 1), (4, 2), (8, 4), (12, 4)]  # (W, the nested W it starts from)
DEFAULT_CASES = ["mix20-s0", "mix20-s1", "mix20-s2", "mix30-s0-short", "mix30-s1-short"]


def case_instance(name: str) -> Instance:
    """The instance of a case name (module docstring)."""
    if Path(name).is_file():
        return read_instance(name)
    short = name.endswith("-short")
    n, seed = name.removeprefix("mix").removesuffix("-short").split("-s")
    inst = scaled_mix(int(n), int(seed))
    if short:
        inst = inst.subset(np.flatnonzero(inst.prefill < 15), name=f"{inst.name}-short")
    return inst


def best_known(inst: Instance, known: dict, exact_limit: float) -> dict:
    """``{"schedule", "objective", "bound", "status"}``: from ``known`` or ``solve_exact``."""
    if inst.name in known:
        rec = known[inst.name]
        sched = Schedule(inst, np.asarray(rec["start"]))
        sched.check()
        return {"schedule": sched, "objective": sched.tel} | {
            k: rec[k] for k in ("bound", "status")
        }
    res = solve_exact(inst, time_limit=exact_limit, threads=1)
    return {
        "schedule": res.schedule,
        "objective": res.objective,
        "bound": res.bound,
        "status": str(res.status),
    }


def run_case(name: str, known: dict, time_limit: float | None, exact_limit: float) -> dict:
    inst = case_instance(name)
    best = best_known(inst, known, exact_limit)
    hz = tight_horizon(inst, best["schedule"])
    lp, _ = highs.solve_lp(time_indexed_matrix(inst, hz))
    row = {"case": inst.name, "n": inst.n, "T": hz.T, "lp": lp, "best": best}
    done: dict[int, object] = {}
    for W, base in WINDOWS:
        res = window_configuration_bound(
            inst,
            W,
            schedule=best["schedule"],
            time_limit=time_limit,
            threads=1,
            start=done.get(base) if base is not None else None,
            upper=True,
        )
        done[W] = res
        row[W] = res
        print(
            f"  {inst.name} W={W}: {res.bound:.3f} ({res.runtime_s:.0f} s, "
            f"{res.info['columns']} columns, converged {res.info['converged']})",
            file=sys.stderr,
            flush=True,
        )
    return row


def table(rows: list[dict]) -> str:
    head = ["instance", "n", "T", "LP"] + [f"W = {W}" for W, _ in WINDOWS]
    head += ["best known", "MIP bound", "best W / best known", "gap closed"]
    body = []
    for r in rows:
        opt = r["best"]["objective"]
        cells = [r["case"], r["n"], r["T"], f"{r['lp']:.2f}"]
        top = r["lp"]
        for W, _ in WINDOWS:
            res = r[W]
            value = (
                f"{res.bound:.2f}"
                if res.info["converged"]
                else f"[{res.bound:.2f}, {res.info['upper']:.2f}]*"
            )
            cells.append(f"{value} ({res.runtime_s:.0f} s, {res.info['columns']})")
            top = max(top, res.bound)
        proven = r["best"]["status"] == "optimal"
        cells.append(f"{opt}{' (opt)' if proven else ''}")
        cells.append(f"{r['best']['bound']:g}")
        cells.append(f"{100 * top / opt:.2f}%")
        cells.append(f"{100 * (top - r['lp']) / (opt - r['lp']):.0f}%" if opt > r["lp"] else "-")
        body.append(cells)
    return tabulate(body, headers=head, tablefmt="github")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path, help="Markdown file for the table")
    ap.add_argument("--cases", nargs="+", default=DEFAULT_CASES)
    ap.add_argument("--time-limit", type=float, default=None, help="seconds per W (default none)")
    ap.add_argument("--exact-time-limit", type=float, default=300.0)
    ap.add_argument("--known", type=Path, action="append", default=[])
    args = ap.parse_args(argv)
    known = {}
    for path in args.known:
        for line in path.read_text().splitlines():
            if line.strip():
                rec = json.loads(line)
                known[rec["name"]] = rec
    t0 = time.perf_counter()
    rows = [run_case(c, known, args.time_limit, args.exact_time_limit) for c in args.cases]
    text = table(rows)
    limit = "none" if args.time_limit is None else f"{args.time_limit:g} s per W"
    note = (
        f"\n\nBounds in rounds (unrounded); `[L, U]*` = stopped by the time limit ({limit}) "
        "before convergence: L the Lagrangian bound (valid), U the unboxed restricted master "
        "(the relaxation's value lies in [L, U]); W = 1 is solved as one arc-flow LP; (s, "
        "columns) per W; gap closed = (best W - LP) / (best known - LP). "
        f"Total {time.perf_counter() - t0:.0f} s.\n"
    )
    print(text + note)
    args.out.write_text(text + note)


if __name__ == "__main__":
    main()
