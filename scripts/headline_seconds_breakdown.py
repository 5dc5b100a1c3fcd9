#!/usr/bin/env python3
"""Why Sorted-F's headline lead changes in seconds: the round durations of each policy's schedule.

For a schedule of requests all arriving at round 0, the total latency in seconds is

    TEL_s = sum_t d(t) N_t,

with d(t) = f(P_t, D_t, K_t) the seconds of round t (SPEC section 10) and N_t the requests not yet
finished in round t (a_i < t <= C_i). TEL in rounds is sum_t N_t, so

    mean latency (s) = mean latency (rounds) x dbar_N,    dbar_N = sum_t d(t) N_t / sum_t N_t,

and a ratio of two policies in seconds is their ratio in rounds times the ratio of their
N-weighted mean round durations. Under a ``linear`` profile dbar_N splits into its terms (base,
prefill, prefill squared, decode, KV), which this script prints per policy, with the load of the
rounds (``lpsched.timing.round_loads``): where the time goes, and when.

``--ablation`` instead plans ``sorted-f-seconds`` under the first model with some of its terms
set to 0 and reads every schedule under the full model: which term of ``F_s`` does the work.

Run (about a minute each on 2 cores)::

    python3 scripts/headline_seconds_breakdown.py    # the tables of docs/results/headline.md
    python3 scripts/headline_seconds_breakdown.py --ablation
    python3 scripts/headline_seconds_breakdown.py --seeds 0 --models llama2-7b-a100x1

Source: ours; the workload is the headline's ``paper-mix`` at n = 2000, M = 16,492.
"""

from __future__ import annotations

import argparse

import numpy as np

from lpsched.generators.workloads import PAPER_MEMORY, PAPER_N, PAPER_WORKLOAD, generate
from lpsched.policies.registry import run_policy
from lpsched.sweeps.tables import markdown_table
from lpsched.timing import parse_time_model, round_loads, to_seconds

POLICIES = ("fcfs", "mcsf", "size", "sorted-f", "sorted-f-seconds")
TERMS = ("base_s", "prefill_token_s", "prefill_token2_s", "decode_request_s", "kv_token_s")
LABELS = {
    "base_s": "base",
    "prefill_token_s": "prefill P",
    "prefill_token2_s": "prefill P^2",
    "decode_request_s": "decode D",
    "kv_token_s": "KV K",
}


def breakdown(inst, sched, model) -> dict[str, float]:
    """The figures of one schedule under one ``linear`` model (milliseconds, shares, counts)."""
    P, D, K = round_loads(sched)
    T = sched.makespan
    N = np.zeros(T + 2, dtype=np.int64)
    np.add.at(N, inst.arrival + 1, 1)
    np.add.at(N, sched.completion + 1, -1)
    N = np.cumsum(N)[1 : T + 1]  # requests waiting or running in rounds 1..T
    d = model.durations(P, D, K)
    secs = to_seconds(sched, model)
    assert abs(secs.tel_s - float(d @ N)) <= 1e-6 * secs.tel_s  # TEL_s = sum_t d(t) N_t
    c = model.values
    Pf = P.astype(np.float64)
    loads = {
        "base_s": np.ones(T),
        "prefill_token_s": Pf,
        "prefill_token2_s": Pf * Pf,
        "decode_request_s": D.astype(np.float64),
        "kv_token_s": K.astype(np.float64),
    }
    w = N / N.sum()
    long = inst.prefill >= 1000
    started = np.bincount(sched.start[long] + 1, minlength=T + 1)[1:]
    out = {
        "mean latency (rounds)": sched.mean_latency,
        "mean latency (s)": secs.tel_s / inst.n,
        "rounds": float(T),
        "mean round (ms)": 1e3 * float(d.mean()),
        "N-weighted round (ms)": 1e3 * float(d @ w),
        **{f"  {LABELS[k]} (ms)": 1e3 * c[k] * float(loads[k] @ w) for k in TERMS},
        "D, N-weighted": float(D @ w),
        "K, N-weighted": float(K @ w),
        "time in rounds with P > 0": float(d[P > 0].sum() / d.sum()),
        "time in rounds with P >= 1000": float(d[P >= 1000].sum() / d.sum()),
        "N in rounds with P >= 1000 / mean N": float(N[P >= 1000].mean() / N.mean()),
        "sum P^2 / sum s_i^2": float((Pf * Pf).sum() / (inst.prefill.astype(float) ** 2).sum()),
        "long prompts started with another": float(started[started >= 2].sum() / long.sum()),
        "latency in prefill rounds (s)": float(d[P > 0] @ N[P > 0]) / inst.n,
    }
    return out


#: The planning models of ``--ablation``: terms of the model set to 0 (none: the model itself).
ABLATIONS = {
    "all terms": (),
    "no prefill terms": ("prefill_token_s", "prefill_token2_s"),
    "no P^2 term": ("prefill_token2_s",),
    "no decode and KV terms": ("decode_request_s", "kv_token_s"),
}


def ablation(spec: str, seeds: list[int], n: int) -> None:
    """Print ``sorted-f-seconds`` planned under ``spec`` without some terms, as ratios to
    Sorted-F in mean latency, in seconds under the full ``spec`` and in rounds."""
    model = parse_time_model(spec)
    rows = []
    for label, zero in ABLATIONS.items():
        plan = model.with_parameters(**dict.fromkeys(zero, 0.0))
        sec, rnd = [], []
        for seed in seeds:
            inst = generate(PAPER_WORKLOAD, n, PAPER_MEMORY, seed=seed)
            ref = run_policy(inst, "sorted-f", solver="swap")
            mine = run_policy(inst, "sorted-f-seconds", time_model=plan).check()
            sec.append(to_seconds(mine, model).tel_s / to_seconds(ref, model).tel_s)
            rnd.append(mine.tel / ref.tel)
        rows.append(
            {
                "planned under": label,
                "seconds / Sorted-F": f"{np.mean(sec):.3f} ({min(sec):.3f}-{max(sec):.3f})",
                "rounds / Sorted-F": f"{np.mean(rnd):.3f} ({min(rnd):.3f}-{max(rnd):.3f})",
            }
        )
    print(f"\nsorted-f-seconds planned under {spec} with terms set to 0, read under {spec}")
    print(f"({PAPER_WORKLOAD}, n = {n}, seeds {seeds})\n")
    print(markdown_table(rows, list(rows[0]), numparse=False))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--models", nargs="+", default=["llama2-70b-a100x2", "llama2-7b-a100x1"])
    ap.add_argument("--n", type=int, default=PAPER_N)
    ap.add_argument("--ablation", action="store_true", help="the ablation of F_s's terms")
    args = ap.parse_args()
    if args.ablation:
        ablation(args.models[0], args.seeds, args.n)
        return
    for spec in args.models:
        model = parse_time_model(spec)
        if set(model.values) != set(TERMS):
            raise SystemExit(f"{spec}: the breakdown needs a linear model")
        acc: dict[str, list[dict[str, float]]] = {p: [] for p in POLICIES}
        for seed in args.seeds:
            inst = generate(PAPER_WORKLOAD, args.n, PAPER_MEMORY, seed=seed)
            for pol in POLICIES:
                opts = {"time_model": model} if pol == "sorted-f-seconds" else {}
                sched = run_policy(inst, pol, solver="swap", **opts).check()
                acc[pol].append(breakdown(inst, sched, model))
        rows = []
        for key in acc[POLICIES[0]][0]:
            row = {"figure": key}
            for pol in POLICIES:
                v = float(np.mean([r[key] for r in acc[pol]]))
                if key.startswith(("time", "long")):
                    row[pol] = f"{v:.0%}"
                else:
                    row[pol] = f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.4g}"
            rows.append(row)
        print(f"\n{spec}, {PAPER_WORKLOAD}, n = {args.n}, means over seeds {args.seeds}\n")
        print(markdown_table(rows, ["figure", *POLICIES], numparse=False))


if __name__ == "__main__":
    main()
