"""Why the online policies' gaps move between rounds and seconds (docs/results/online-load.md).

On the Poisson instances of ``lpsched reproduce online-load --time-model MODEL`` (the paper's
mix, n = 2000, M = 16,492: :func:`lpsched.research.reproductions.online_load._seconds_instance`),
mean over the seeds, two tables.

Ratios of mean latency (FCFS / RH-Sorted-F and MC-SF / RH-Sorted-F) four ways:

* ``fixed rd``: the round executors on fixed rounds of the saturated length ``d_bar``
  (arrival round ``floor(alpha_i / d_bar)``): these are the round table's instances;
* ``fixed s``: those round schedules read in seconds from ``alpha_i`` (``to_seconds``): what
  reading a round schedule in seconds says, though it did not wait for the arrivals in seconds;
* ``clock s``, ``clock rd``: the executors on the model's clock (SPEC section 10), in seconds
  and in rounds (from each request's admission round).

Per policy on the clock:

* ``s/rd``: mean latency in seconds over mean latency in rounds (ms): the mean duration of the
  rounds the requests wait and run through, weighted by the requests in the system;
* ``busy``: the mean busy round (ms); ``P^2``: share of the busy seconds that the
  squared-prefill term takes (%);
* ``big-P``: share of the rounds that prefill >= 1,000 tokens (%), and ``in-sys x``: the
  requests in the system during those rounds over their mean over all busy rounds.

    python scripts/online_load_seconds_why.py llama2-70b-a100x2 --loads 0.9 1 1.25 1.5 2
"""

from __future__ import annotations

import argparse

import numpy as np

from lpsched.generators.workloads import PAPER_WORKLOAD
from lpsched.policies.registry import run_policy
from lpsched.research.reproductions.online_load import ONLINE_POLICIES, _seconds_instance
from lpsched.timing import parse_time_model, round_loads, to_seconds

SHORT = {"online-fcfs": "FCFS", "online-mcsf": "MC-SF", "online-sorted-f": "RH-SF"}


def _in_system(sched, rounds: int) -> np.ndarray:
    """Requests with ``a_i < t <= C_i`` in each round ``t = 1 .. rounds``."""
    w = np.zeros(rounds + 2, dtype=np.int64)
    np.add.at(w, sched.instance.arrival + 1, 1)
    np.add.at(w, sched.completion + 1, -1)
    return np.cumsum(w)[1 : rounds + 1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("model")
    ap.add_argument("--loads", type=float, nargs="+", default=[0.9, 1.0, 1.25, 1.5, 2.0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--n", type=int, default=2000)
    args = ap.parse_args()
    model = parse_time_model(args.model)
    p2 = model.values.get("prefill_token2_s", 0.0)
    ways = ("fixed rd", "fixed s", "clock s", "clock rd")
    ratios, costs = [], []
    for load in args.loads:
        acc: dict[str, list[list[float]]] = {w: [] for w in ways}
        cost: dict[str, list[list[float]]] = {p: [] for p in ONLINE_POLICIES}
        for seed in args.seeds:
            inst, _, d_bar, _ = _seconds_instance(
                "poisson", load, seed, args.n, 16492, None, PAPER_WORKLOAD, model, "auto"
            )
            alpha = inst.arrival_s
            assert alpha is not None
            fixed = inst.replace(arrival=np.floor(alpha / d_bar).astype(np.int64), arrival_s=None)
            lat: dict[str, list[float]] = {}
            for policy in ONLINE_POLICIES:
                rd = run_policy(fixed, policy)
                clock = run_policy(inst, policy, time_model=model).check()
                secs = to_seconds(clock, model)
                lat[policy] = [
                    float(rd.latency.mean()),
                    float(to_seconds(rd, model, arrival_s=alpha).latency_s.mean()),
                    float(secs.latency_s.mean()),
                    float(clock.latency.mean()),
                ]
                P, D, K = round_loads(clock)
                d = model.durations(P, D, K)  # every round (idle ones: f(0, 0, 0))
                busy = D > 0
                w = _in_system(clock, P.size)
                big = busy & (P >= 1000)
                cost[policy].append(
                    [
                        1000 * lat[policy][2] / lat[policy][3],
                        1000 * float(d[busy].mean()),
                        100 * float((p2 * P[busy].astype(float) ** 2).sum() / d[busy].sum()),
                        100 * float(big.sum() / busy.sum()),
                        float(w[big].mean() / w[busy].mean()),
                    ]
                )
            for k, way in enumerate(ways):
                sf = lat["online-sorted-f"][k]
                acc[way].append([lat["online-fcfs"][k] / sf, lat["online-mcsf"][k] / sf])
        ratios.append(
            f"{load:>5g} "
            + " ".join("{:>7.2f} {:>7.2f}".format(*np.mean(acc[w], axis=0)) for w in ways)
        )
        costs += [
            f"{load:>5g} {SHORT[p]:>6} "
            + " ".join(f"{v:>8.1f}" for v in np.mean(cost[p], axis=0)[:4])
            + f" {np.mean(cost[p], axis=0)[4]:>8.2f}"
            for p in ONLINE_POLICIES
        ]
    print("ratios of mean latency, FCFS / RH-SF and MC-SF / RH-SF")
    print(f"{'':>5} " + " ".join(f"{w:>15}" for w in ways))
    print(f"{'load':>5} " + " ".join(f"{'FCFS':>7} {'MC-SF':>7}" for _ in ways))
    print("\n".join(ratios))
    print(f"\n{'load':>5} {'policy':>6} " + " ".join(
        f"{c:>8}" for c in ("s/rd ms", "busy ms", "P^2 %", "big-P %", "in-sys x")
    ))  # fmt: skip
    print("\n".join(costs))


if __name__ == "__main__":
    main()
