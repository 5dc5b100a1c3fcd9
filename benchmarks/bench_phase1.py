"""Quality of the Phase-1 heuristics: F of the first batch of ``swap`` and ``quantile`` against
the exact ``dp`` (not a test; prints a table).

    python benchmarks/bench_phase1.py            # 200 instances of each family

Families: ``lognormal`` (n 20..60, M 60..300, lognormal prefill and decode lengths, as in
tests/policies/test_sorted_f.py) and ``mix-80-20`` (n = 60 drawn from the shipped 80/20 tables,
M = 16,492). The ratio F(heuristic) / F(dp) is >= 1 since dp is exact. ``quantile`` is the
linear kernel of :class:`~lpsched.policies.sorted_f.QuantileGreedy`, whose batches equal those of
the former window walk (``tests/reference_quantile.py``), so its row does not depend on the
backend (printed last).
"""

from __future__ import annotations

import argparse

import numpy as np

from lpsched.generators.workloads import generate
from lpsched.kernels import BACKEND
from lpsched.policies.sorted_f import QuantileGreedy, select_dp, select_swap


def lognormal(rng: np.random.Generator):
    n = int(rng.integers(20, 61))
    memory = int(rng.integers(60, 301))
    o = np.clip(np.rint(rng.lognormal(2.3, 0.9, n)), 1, memory // 2).astype(np.int64)
    s = np.minimum(np.rint(rng.lognormal(3.0, 1.0, n)).astype(np.int64), memory - o)
    return o, s + o, memory


def mix(rng: np.random.Generator):
    inst = generate("mix-80-20", 60, 16492, seed=int(rng.integers(2**31)))
    return inst.decode, inst.size, inst.memory


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--instances", type=int, default=200)
    args = ap.parse_args()
    print("| family | heuristic | mean | median | p90 | p99 | max | equal to dp |")
    print("|---|---|---|---|---|---|---|---|")
    for name, family in (("lognormal", lognormal), ("mix-80-20", mix)):
        rng = np.random.default_rng(0)
        ratios = {"swap": [], "quantile": []}
        for _ in range(args.instances):
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
    print(f"\nkernels: {BACKEND}")


if __name__ == "__main__":
    main()
