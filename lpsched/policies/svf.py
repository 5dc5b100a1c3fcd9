"""SVF, smallest memory-time volume first (SPEC section 4.1; Kong, Qi, Ye, Zhou, arXiv 2606.22327).

Request ``i`` occupies the KV cache for ``o_i`` rounds, holding ``s_i + j`` tokens in its
``j``-th; the area under that curve is its memory-time **volume**

    v_i = s_i o_i + o_i (o_i + 1) / 2   (token-rounds),

the ``A_i`` of the combinatorial bound (SPEC section 7). Two policies order by it:

* ``svf`` -- the paper's rule. The waiting requests form a queue by ``v_i`` (ties by index).
  At every decision time ``t``, after the completions, the head ``h`` is admitted (``p_h = t``)
  while its **peak** ``s_h + o_h`` fits beside the peaks of the running requests (peak
  reservation: ``sum over running j of (s_j + o_j) + s_h + o_h <= M``); strict head-of-line, so
  when the head does not fit nothing behind it is admitted; no preemption.
* ``volume`` -- SVF's order as a priority list for lpsched's executor (SPEC section 4), whose
  look-ahead admits a request as soon as the true future memory allows. On the paper's
  workload this list beats Sorted-F by 5-7 % (``docs/results/algorithms.md``), while ``svf``
  with its peak reservation is 27 % worse than Sorted-F there: the order is good, the
  reservation wastes the memory a request will only hold at its end.

Guarantee (arXiv 2606.22327, main theorem, as summarised): if every peak satisfies
``s_i + o_i <= alpha M`` with ``alpha < 1`` and all requests arrive at round 0, then
``TEL(svf) <= (1 + 2 / (1 - alpha)) OPT``. The proof rests on the inequality

    (M - P) (sum_i C_i - sum_i o_i) <= 2 (V - sum_i v_i),

with ``P`` the largest peak and ``V`` the sum over ``j`` of the ``j`` smallest volumes, beside
the lower bound ``OPT >= V / M`` (implied by the combinatorial bound of SPEC section 7); the
test suite checks the inequality on random instances.

Our reading, where the summaries leave a choice: ties by request index (the paper says "by
id"); with arrivals (outside the theorem) the queue holds the requests that have arrived, so a
newly arrived request with a smaller volume becomes the head.

Source: arXiv 2606.22327 (rule, theorem); the event-driven run is ours (module functions).
"""

from __future__ import annotations

import heapq
import time

import numpy as np

from ..instance import Instance
from ..schedule import Schedule

__all__ = ["memory_time_volume", "volume_order", "svf"]

#: Peaks below this keep every volume ``s o + o (o + 1) / 2`` exact in int64.
_EXACT_INT64 = 2**31


def memory_time_volume(instance: Instance) -> np.ndarray:
    """Memory-time volume ``v_i = s_i o_i + o_i (o_i + 1) / 2`` of every request (token-rounds).

    Parameters
    ----------
    instance : Instance
        Its prefill and decode lengths ``s_i``, ``o_i`` (tokens) are read.

    Returns
    -------
    ndarray, shape (n,)
        int64 when every peak ``s_i + o_i`` is below 2^31 (then exact); otherwise an object
        array of Python integers (exact at any size the instance allows, ``M <= 2^40``).

    Notes
    -----
    Source: arXiv 2606.22327 (the volume); SPEC section 7 (the area ``A_i``).
    """
    if instance.n and int(instance.size.max()) >= _EXACT_INT64:
        s = instance.prefill.astype(object)
        o = instance.decode.astype(object)
    else:
        s = instance.prefill.astype(np.int64)
        o = instance.decode.astype(np.int64)
    return s * o + o * (o + 1) // 2


def volume_order(instance: Instance) -> np.ndarray:
    """``volume``: requests by memory-time volume ``v_i`` ascending, then index.

    Parameters
    ----------
    instance : Instance
        Its volumes (:func:`memory_time_volume`) order the list; arrivals and ``M`` are left
        to the executor.

    Returns
    -------
    ndarray of int64, shape (n,)
        The priority list that lpsched's executor runs (SPEC section 4.1).

    Notes
    -----
    SVF's order (arXiv 2606.22327) without its peak reservation: the executor admits by the
    true future memory. Source: SPEC section 4.1; the separation of order and admission is ours.
    """
    v = memory_time_volume(instance)
    if v.dtype == object:
        return np.asarray(sorted(range(instance.n), key=lambda i: (v[i], i)), dtype=np.int64)
    return np.lexsort((np.arange(instance.n), v)).astype(np.int64)


def svf(instance: Instance) -> Schedule:
    """``svf``: smallest volume first with peak reservation and strict head-of-line admission.

    Parameters
    ----------
    instance : Instance
        Requests ``(s_i, o_i, a_i)`` (tokens, tokens, rounds) and the KV-cache budget ``M``.

    Returns
    -------
    Schedule
        Starts ``p_i`` (rounds); feasible, since a request never holds more than its peak.
        ``info``: ``order`` (the requests by ``(v_i, i)``, shape (n,)), ``runtime_s``.

    Notes
    -----
    At each decision time ``t`` (the first arrival, then every completion or arrival): the
    requests with ``C_j <= t`` leave, the arrived ones join the queue by ``(v_i, i)``, and the
    head is admitted while ``R + s_h + o_h <= M``, ``R`` the sum of the running peaks. Between
    two such events nothing can change, so they are the only times visited: O(n log n). A
    request alone fits (``s_i + o_i <= M``), so the queue drains. Source: arXiv 2606.22327
    (module docstring: the rule, the theorem and our reading).
    """
    t0 = time.perf_counter()
    n = instance.n
    M = int(instance.memory)
    order = volume_order(instance)
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    peak = instance.size.tolist()
    o = instance.decode.tolist()
    a = instance.arrival.tolist()
    rank_l = rank.tolist()
    order_l = order.tolist()
    by_arrival = np.lexsort((rank, instance.arrival)).tolist()
    start = [0] * n
    waiting: list[int] = []  # heap of ranks
    running: list[tuple[int, int]] = []  # heap of (completion, request)
    reserved = 0
    nxt = 0  # next request of by_arrival to join the queue
    t = a[by_arrival[0]] if n else 0
    started = 0
    while started < n:
        while running and running[0][0] <= t:
            reserved -= peak[heapq.heappop(running)[1]]
        while nxt < n and a[by_arrival[nxt]] <= t:
            heapq.heappush(waiting, rank_l[by_arrival[nxt]])
            nxt += 1
        while waiting:
            h = order_l[waiting[0]]
            if reserved + peak[h] > M:
                break
            heapq.heappop(waiting)
            start[h] = t
            reserved += peak[h]
            heapq.heappush(running, (t + o[h], h))
            started += 1
        events = []
        if running:
            events.append(running[0][0])
        if nxt < n:
            events.append(a[by_arrival[nxt]])
        if not events:
            break
        t = min(events)
    sched = Schedule(instance, np.asarray(start, dtype=np.int64), policy="svf")
    sched.info.update(order=order, runtime_s=time.perf_counter() - t0)
    return sched
