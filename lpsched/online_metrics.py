"""Metrics of online runs: latency percentiles and throughput (SPEC section 5).

Source: the usual serving metrics (mean and tail latency, throughput), as reported by the seed
paper's experiments (arXiv 2508.06133, section 6); the definitions below are ours.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .schedule import Schedule

__all__ = ["latency_stats"]


def latency_stats(schedule: Schedule, round_s: float | None = None) -> dict[str, Any]:
    """Mean, p50, p90, p99 latency and throughput of a schedule.

    Parameters
    ----------
    schedule : Schedule
        Any schedule (online or offline; with evictions the latency counts to the final
        completion).
    round_s : float, optional
        Duration of one round in seconds; when given, ``mean_latency_s`` and ``p99_latency_s``
        are added.

    Returns
    -------
    dict
        ``mean_latency``, ``p50_latency``, ``p90_latency``, ``p99_latency`` (rounds; the
        percentiles by linear interpolation, numpy's default), ``throughput`` (completed
        requests per round over the busy span ``max_i C_i - min_i a_i``),
        ``token_throughput`` (output tokens per round over the same span), ``makespan``
        (rounds), ``tel`` (rounds).

    Notes
    -----
    Under overload latencies grow with the number of requests ``n`` (the queue builds up), so
    compare policies at the same ``n``. Source: ours.
    """
    lat = schedule.latency.astype(float)
    inst = schedule.instance
    span = max(1, int(schedule.completion.max() - inst.arrival.min()))
    p50, p90, p99 = np.percentile(lat, [50, 90, 99])
    out: dict[str, Any] = {
        "tel": schedule.tel,
        "mean_latency": float(lat.mean()),
        "p50_latency": float(p50),
        "p90_latency": float(p90),
        "p99_latency": float(p99),
        "throughput": inst.n / span,
        "token_throughput": float(inst.decode.sum()) / span,
        "makespan": schedule.makespan,
    }
    if round_s is not None:
        out["mean_latency_s"] = out["mean_latency"] * round_s
        out["p99_latency_s"] = out["p99_latency"] * round_s
    return out
