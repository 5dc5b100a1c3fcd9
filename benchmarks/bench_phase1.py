"""Phase-1 solvers of Sorted-F: quality of the first batch against the exact ``dp``, and the
TEL and wall time of each solver by ``n`` (not a test; prints markdown tables).

    python benchmarks/bench_phase1.py            # F ratios, 200 instances of each family (seconds)
    python benchmarks/bench_phase1.py --tel      # TEL and wall time by solver and n (~3 minutes)

**F ratios** (default mode). Families: ``lognormal`` (n 20..60, M 60..300, lognormal prefill and
decode lengths, as in tests/policies/test_sorted_f.py) and ``mix-80-20`` (n = 60 drawn from the
shipped 80/20 tables, M = 16,492). The ratio F(heuristic) / F(dp) is >= 1 since dp is exact.
``quantile`` is the linear kernel of :class:`~lpsched.policies.quantile.QuantileGreedy`, whose
batches equal those of the former window walk (``tests/reference/quantile.py``), so its row does
not depend on the backend (printed last).

**TEL and wall time** (``--tel``): Sorted-F (``run_policy(inst, "sorted-f", solver=...)``, Phase 1
and the executor) with each Phase-1 solver ``dp``, ``swap`` and ``quantile`` on
``generate("paper-mix", n, 16492, seed=k)`` for ``--sizes`` and ``--seeds``, a few rows of
``mix-80-20`` for contrast (``--contrast-sizes``), and the shipped ``instances/default.json``.
TEL is the mean over the seeds; ``quantile / swap`` is the mean (min..max) of the per-seed TEL
ratios; times are the min of ``--repeats`` runs (``time.perf_counter``), averaged over the seeds,
after one warm-up call of each solver (numba compilation). ``dp`` is tried at every n and shows
"does not fit" when its tables exceed ``DP_MAX_CELLS``; a solver whose run took longer than
``--max-seconds`` is not run at larger n of that workload ("skipped"). The load average is printed
before and after, since the timings are only as good as the machine is idle.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

import lpsched
from lpsched.generators.workloads import generate
from lpsched.kernels import BACKEND
from lpsched.policies.quantile import QuantileGreedy
from lpsched.policies.sorted_f import resolve_phase1, select_dp, select_swap

MEMORY = 16492
SOLVERS = ("dp", "swap", "quantile")
DEFAULT_INSTANCE = Path(__file__).resolve().parents[1] / "instances" / "default.json"


def lognormal(rng: np.random.Generator):
    n = int(rng.integers(20, 61))
    memory = int(rng.integers(60, 301))
    o = np.clip(np.rint(rng.lognormal(2.3, 0.9, n)), 1, memory // 2).astype(np.int64)
    s = np.minimum(np.rint(rng.lognormal(3.0, 1.0, n)).astype(np.int64), memory - o)
    return o, s + o, memory


def mix(rng: np.random.Generator):
    inst = generate("mix-80-20", 60, MEMORY, seed=int(rng.integers(2**31)))
    return inst.decode, inst.size, inst.memory


def f_ratios(instances: int) -> None:
    """Table of F(first batch of swap / quantile) / F(first batch of dp)."""
    print("| family | heuristic | mean | median | p90 | p99 | max | equal to dp |")
    print("|---|---|---|---|---|---|---|---|")
    for name, family in (("lognormal", lognormal), ("mix-80-20", mix)):
        rng = np.random.default_rng(0)
        ratios: dict[str, list[float]] = {"swap": [], "quantile": []}
        for _ in range(instances):
            o, z, memory = family(rng)
            best = o[select_dp(o, z, memory)]
            f_dp = best.sum() / best.size**2
            for h in ratios:
                pick = (
                    select_swap(o, z, memory)
                    if h == "swap"
                    else QuantileGreedy().batches(o, z, memory)[0]
                )
                x = o[pick]
                ratios[h].append(x.sum() / x.size**2 / f_dp)
        for h, r in ratios.items():
            r = np.asarray(r)
            q = np.quantile(r, [0.5, 0.9, 0.99])
            print(
                f"| {name} | {h} | {r.mean():.4f} | {q[0]:.4f} | {q[1]:.4f} | {q[2]:.4f} | "
                f"{r.max():.4f} | {np.mean(np.isclose(r, 1.0)):.0%} |",
                flush=True,
            )


def timed_tel(inst, solver: str, repeats: int) -> tuple[int, float] | None:
    """``(TEL, min wall time)`` of Sorted-F with ``solver``; ``None`` if dp does not fit."""
    tel, best = None, float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        try:
            schedule = lpsched.run_policy(inst, "sorted-f", solver=solver)
        except MemoryError:
            return None
        best = min(best, time.perf_counter() - t0)
        assert tel is None or schedule.tel == tel, "Sorted-F is deterministic"
        tel = schedule.tel
    assert tel is not None
    return tel, best


def tel_row(label: str, n: int, instances, repeats: int, max_seconds: float, slow: set) -> str:
    """One table row: the solvers on ``instances`` (one per seed); adds slow solvers to ``slow``."""
    runs: dict[str, list[tuple[int, float]]] = {}
    cell: dict[str, str] = {}
    for solver in SOLVERS:
        if solver in slow:
            cell[solver] = "skipped"
            continue
        results = [timed_tel(inst, solver, repeats) for inst in instances]
        if None in results:
            cell[solver] = "does not fit"
            continue
        runs[solver] = [r for r in results if r is not None]
        if max(t for _, t in runs[solver]) > max_seconds:
            slow.add(solver)

    def tel(solver: str) -> str:
        return f"{np.mean([r[0] for r in runs[solver]]):,.0f}" if solver in runs else cell[solver]

    def secs(solver: str) -> str:
        return f"{np.mean([r[1] for r in runs[solver]]):.3f}" if solver in runs else "-"

    def ratio(top: str, bottom: str) -> str:
        if top not in runs or bottom not in runs:
            return "-"
        r = [a[0] / b[0] for a, b in zip(runs[top], runs[bottom], strict=True)]
        spread = f" ({min(r):.3f}..{max(r):.3f})" if len(r) > 1 else ""
        return f"{np.mean(r):.3f}{spread}"

    return (
        f"| {label} | {n:,} | {len(instances)} | {tel('dp')} | {tel('swap')} | {tel('quantile')} "
        f"| {ratio('quantile', 'swap')} | {ratio('dp', 'swap')} "
        f"| {secs('dp')} | {secs('swap')} | {secs('quantile')} |"
    )


def load() -> str:
    return "load average (1, 5, 15 min): " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def tel_table(args: argparse.Namespace) -> None:
    """Table of Sorted-F TEL and wall time by Phase-1 solver and n."""
    warm = generate("paper-mix", 100, MEMORY, seed=0)
    for solver in SOLVERS:
        lpsched.run_policy(warm, "sorted-f", solver=solver)
    print(f"before: {load()}; {os.cpu_count()} cpus\n")
    print("Sorted-F TEL and wall time by Phase-1 solver and n on paper-mix (M = 16,492)\n")
    print(
        "| workload | n | seeds | TEL dp | TEL swap | TEL quantile | quantile / swap | dp / swap "
        "| s dp | s swap | s quantile |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for workload, sizes in (("paper-mix", args.sizes), ("mix-80-20", args.contrast_sizes)):
        slow: set[str] = set()
        for n in sizes:
            seeds = args.seeds if n < args.fewer_seeds_from else args.seeds[:1]
            instances = [generate(workload, n, MEMORY, seed=k) for k in seeds]
            print(tel_row(workload, n, instances, args.repeats, args.max_seconds, slow), flush=True)
    default = lpsched.read_instance(DEFAULT_INSTANCE)
    print(tel_row("default.json", default.n, [default], args.repeats, args.max_seconds, set()))
    print(f"\nafter: {load()}")
    auto = ", ".join(f"{n:,} -> {resolve_phase1('auto', n)}" for n in args.sizes)
    print(f"solver='auto' at n: {auto}")


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--instances", type=int, default=200, help="F ratios: instances per family")
    ap.add_argument("--tel", action="store_true", help="TEL and wall time by solver and n")
    ap.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        default=[100, 200, 500, 1000, 2000, 5000, 10000, 20000],
        help="--tel: paper-mix sizes",
    )
    ap.add_argument(
        "--contrast-sizes", type=int, nargs="*", default=[2000, 10000], help="--tel: mix-80-20"
    )
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="--tel: seeds")
    ap.add_argument(
        "--fewer-seeds-from",
        type=int,
        default=10**9,
        help="--tel: from this n on, only the first seed",
    )
    ap.add_argument("--repeats", type=int, default=2, help="--tel: timed runs, min taken")
    ap.add_argument(
        "--max-seconds",
        type=float,
        default=180.0,
        help="--tel: a solver slower than this is not run at larger n",
    )
    args = ap.parse_args()
    if args.tel:
        tel_table(args)
    else:
        f_ratios(args.instances)
    print(f"\nkernels: {BACKEND}")


if __name__ == "__main__":
    main()
