"""Sorted-F, our readings of the seed paper where it leaves a choice (SPEC section 4).

Two readings (``docs/results/sorted-f-readings.md``), both options of
:mod:`lpsched.policies.sorted_f`:

* Phase 1's feasibility of a batch ``X`` (``fit="common-start"``): the batch started together
  at one round must fit, its true peak ``max_r sum_{i in X, o_i >= r} (s_i + r) <= M``
  (:func:`common_start_peak`), never above the sum of peaks ``sum (s_i + o_i)`` of SPEC
  section 4. Here are the common-start forms of the exact ``dp`` and of the ``swap`` local
  search (called by :func:`~lpsched.policies.sorted_f.select_dp` and
  :func:`~lpsched.policies.sorted_f.select_swap`).
* Phase 2 as the batches one after another, each started together when the previous one has
  completed (:func:`sequential_batches_schedule`), instead of the executor on the concatenated
  list.

Also the two helpers the Phase-1 solvers share with these forms: the exact comparison of ``F``
and the moves of the local search.

Source: Wang, Ye, Zhou, arXiv 2508.06133, section 4 (Sorted-F); the readings are ours.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Literal

import numpy as np

from ..instance import Instance
from ..schedule import Schedule

__all__ = [
    "common_start_peak",
    "sequential_batches_schedule",
]


def _better(num_a: int, k_a: int, num_b: int, k_b: int) -> bool:
    """Exact ``num_a / k_a^2 < num_b / k_b^2`` (integers, no rounding)."""
    return num_a * k_b * k_b < num_b * k_a * k_a


# A move of the local search: ("add", j), ("remove", i) or ("swap", i, j).
_Move = tuple[Literal["add", "remove"], int] | tuple[Literal["swap"], int, int]


def common_start_peak(prefill: np.ndarray, decode: np.ndarray) -> int:
    """Peak KV-cache memory of a batch whose requests all start at the same round.

    Parameters
    ----------
    prefill, decode : ndarray of int, shape (k,)
        ``s_i`` and ``o_i`` of the batch ``X`` (tokens).

    Returns
    -------
    int
        ``max_{r >= 1} sum_{i in X, o_i >= r} (s_i + r)`` (tokens; 0 for an empty batch).
        In its ``r``-th round request ``i`` holds ``s_i + r`` tokens until ``r = o_i``
        (SPEC section 2); between two decode lengths the sum only grows, so the maximum is
        at some ``r = o_j``: with the batch sorted by ``o`` descending, the largest of
        ``(sum of the first c prefills) + o_(c) c``. Never above ``sum (s_i + o_i)``.

    Notes
    -----
    O(k log k). Source: SPEC section 2 (memory of a round); the ``common-start`` fit of
    Phase 1 is our reading of arXiv 2508.06133, section 4.
    """
    s = np.asarray(prefill, dtype=np.int64)
    o = np.asarray(decode, dtype=np.int64)
    if o.size == 0:
        return 0
    by = np.argsort(-o, kind="stable")
    held = np.cumsum(s[by]) + o[by] * np.arange(1, o.size + 1)
    return int(held.max())


def _select_dp_common_start(
    decode: np.ndarray, size: np.ndarray, memory: int, max_cells: int
) -> np.ndarray:
    """:func:`~lpsched.policies.sorted_f.select_dp` with ``fit="common-start"`` (its notes);
    ``max_cells`` is its ``DP_MAX_CELLS``."""
    o_in = np.asarray(decode, dtype=np.int64)
    s_in = np.asarray(size, dtype=np.int64) - o_in
    r = o_in.size
    perm = np.lexsort((np.arange(r), o_in))  # by (o, index)
    o, s = o_in[perm], s_in[perm]
    kmax = int(np.searchsorted(np.cumsum(np.sort(s + 1)), memory, side="right"))
    kmax = max(kmax, 1)
    cells = (r + 1) * (kmax + 1) * (memory + 1)
    if cells > max_cells:
        raise MemoryError(
            f"dp Phase-1 tables need {cells:,} cells (r={r}, k_max={kmax}, M={memory}); "
            "use the swap or quantile solver"
        )
    inf = np.iinfo(np.int32).max // 2
    h = np.empty((r + 1, kmax + 1, memory + 1), dtype=np.int32)
    h[r] = inf
    h[r, 0, :] = 0
    w = np.arange(memory + 1)
    ks = np.arange(1, kmax + 1)
    for q in range(r - 1, -1, -1):
        h[q] = h[q + 1]
        # prefill budget left to the rest when q is taken as the k-th: min(w, M - k o_q) - s_q
        left = np.minimum(w[None, :], memory - ks[:, None] * int(o[q])) - int(s[q])
        ok = left >= 0
        cand = np.full(left.shape, inf, dtype=np.int64)
        rows = np.broadcast_to(ks[:, None] - 1, left.shape)
        cand[ok] = h[q + 1][rows[ok], left[ok]].astype(np.int64) + int(o[q])
        np.minimum(h[q, 1:], np.minimum(cand, inf).astype(np.int32), out=h[q, 1:])
    top = h[0, 1:, memory].astype(np.int64)
    best_k, best_num = 0, 0
    for k in range(1, kmax + 1):
        num = int(top[k - 1])
        if num < inf and (best_k == 0 or not _better(best_num, best_k, num, k)):
            best_k, best_num = k, num
    chosen = []
    k, budget, rest = best_k, memory, best_num
    for q in range(r):
        if k == 0:
            break
        room = min(budget, memory - k * int(o[q])) - int(s[q])
        if room >= 0 and rest - int(o[q]) >= 0 and int(h[q + 1, k - 1, room]) == rest - int(o[q]):
            chosen.append(q)
            k, budget, rest = k - 1, room, rest - int(o[q])
    return np.sort(perm[np.asarray(chosen, dtype=np.int64)])


def _greedy_fill_common_start(
    o: np.ndarray, s: np.ndarray, order: np.ndarray, memory: int
) -> np.ndarray:
    """As :func:`~lpsched.policies.sorted_f._greedy_fill`, "still fits" meaning a common-start
    peak ``<= M``."""
    inx = np.zeros(o.size, dtype=bool)
    for i in order.tolist():
        inx[i] = True
        if common_start_peak(s[inx], o[inx]) > memory:
            inx[i] = False
    return inx


def _memory_at_rounds(o: np.ndarray, s: np.ndarray, rounds: np.ndarray) -> np.ndarray:
    """``sum_{i : o_i >= r} (s_i + r)`` for each ``r`` of ``rounds`` (a batch started together)."""
    running = o[None, :] >= rounds[:, None]
    return np.where(running, s[None, :] + rounds[:, None], 0).sum(axis=1)


def _local_search_common_start(
    o: np.ndarray, s: np.ndarray, memory: int, inx: np.ndarray
) -> np.ndarray:
    """:func:`~lpsched.policies.sorted_f._local_search` with "fits" meaning a common-start
    peak ``<= M`` (the notes of :func:`~lpsched.policies.sorted_f.select_swap`); ``inx`` is a
    feasible mask."""
    inx = inx.copy()
    num, k = int(o[inx].sum()), int(inx.sum())
    big = np.iinfo(np.int64).max
    while True:
        xi, yj = np.flatnonzero(inx), np.flatnonzero(~inx)
        ox, sx, oy, sy = o[xi], s[xi], o[yj], s[yj]
        base = _memory_at_rounds(ox, sx, ox)  # memory of X at the rounds r = o_x, shape (k,)
        at_j = _memory_at_rounds(ox, sx, oy)  # memory of X at the rounds r = o_j, shape (m,)
        best: tuple[int, int, _Move] | None = None  # (num, k, move)
        if yj.size:
            # X + j: rounds o_x gain s_j + r where o_j >= r; round o_j holds X's part and j
            gain = np.where(oy[:, None] >= ox[None, :], sy[:, None] + ox[None, :], 0)
            peak = np.maximum((base[None, :] + gain).max(axis=1, initial=0), at_j + sy + oy)
            fits = np.flatnonzero(peak <= memory)
            if fits.size:
                j = int(yj[fits[np.argmin(oy[fits])]])
                best = (num + int(o[j]), k + 1, ("add", j))
        if k >= 2:
            i = int(xi[np.argmax(ox)])
            cand: tuple[int, int, _Move] = (num - int(o[i]), k - 1, ("remove", i))
            if best is None or _better(cand[0], cand[1], best[0], best[1]):
                best = cand
        if yj.size and k:
            # (i out, j in) at the rounds r = o_x: shape (k_i, m_j, k_r)
            loss = np.where(ox[:, None] >= ox[None, :], sx[:, None] + ox[None, :], 0)  # (i, r)
            gain = np.where(oy[:, None] >= ox[None, :], sy[:, None] + ox[None, :], 0)  # (j, r)
            at_x = (base[None, None, :] - loss[:, None, :] + gain[None, :, :]).max(axis=2)
            # ... and at the round r = o_j: shape (k_i, m_j)
            lose_j = np.where(ox[:, None] >= oy[None, :], sx[:, None] + oy[None, :], 0)
            at_y = at_j[None, :] - lose_j + (sy + oy)[None, :]
            ok = np.maximum(at_x, at_y) <= memory
            delta = np.where(ok, oy[None, :] - ox[:, None], big)
            a, b = np.unravel_index(int(np.argmin(delta)), delta.shape)
            if delta[a, b] < 0:
                i, j = int(xi[a]), int(yj[b])
                cand = (num + int(delta[a, b]), k, ("swap", i, j))
                if best is None or _better(cand[0], cand[1], best[0], best[1]):
                    best = cand
        if best is None or not _better(best[0], best[1], num, k):
            return inx
        move = best[2]
        if move[0] == "add":
            inx[move[1]] = True
        elif move[0] == "remove":
            inx[move[1]] = False
        else:
            inx[move[1]], inx[move[2]] = False, True
        num, k = best[0], best[1]


def sequential_batches_schedule(
    instance: Instance,
    batches: Sequence[np.ndarray | Sequence[int]],
    *,
    policy: str = "sorted-f-sequential",
) -> Schedule:
    """Phase 2 as batches one after another: each batch starts together when the previous
    one has completed (our reading of arXiv 2508.06133, section 4).

    Parameters
    ----------
    instance : Instance
        Requests and KV-cache budget ``M``.
    batches : list of array_like of int
        A partition of ``range(n)`` into non-empty batches, run in this order (e.g.
        :func:`~lpsched.policies.sorted_f.phase1_batches`); each must fit when started together:
        :func:`common_start_peak` ``<= M`` (so does every batch of either ``fit``).
    policy : str
        Name recorded in the schedule.

    Returns
    -------
    Schedule
        Batch ``k`` starts at ``P_k = max(P_{k-1} + max_{i in X_{k-1}} o_i, max_{i in X_k}
        a_i)`` with ``P_1 = max_{i in X_1} a_i``: every request of ``X_k`` has ``p_i = P_k``,
        and the batch before it has completed (``C_i <= P_k``), its memory freed. Feasible by
        construction: at any round only one batch runs, and it fits. ``info`` holds
        ``batches`` (lists of indices), ``batch_starts`` and ``runtime_s``.

    Raises
    ------
    ValueError
        ``batches`` is not a partition of ``range(n)`` into non-empty batches, or a batch
        whose common-start peak exceeds ``M`` (named).

    Notes
    -----
    No priority list: the executor (SPEC section 4) would admit the next batch's requests
    as soon as memory allows (work conservation); here they wait for the whole previous
    batch. Source: ours, reading Phase 2 of arXiv 2508.06133, section 4.
    """
    t0 = time.perf_counter()
    n = instance.n
    parts = [np.asarray(b, dtype=np.int64).reshape(-1) for b in batches]
    flat = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    if any(b.size == 0 for b in parts) or not np.array_equal(np.sort(flat), np.arange(n)):
        raise ValueError(f"batches must partition range({n}) into non-empty batches")
    start = np.zeros(n, dtype=np.int64)
    starts = []
    t = 0
    for k, b in enumerate(parts):
        peak = common_start_peak(instance.prefill[b], instance.decode[b])
        if peak > instance.memory:
            raise ValueError(
                f"batch {k} (requests {b.tolist()}) peaks at {peak} tokens started together, "
                f"above M = {instance.memory}"
            )
        t = max(t, int(instance.arrival[b].max()))
        start[b] = t
        starts.append(t)
        t += int(instance.decode[b].max())
    return Schedule(
        instance,
        start,
        policy=policy,
        info={
            "batches": [b.tolist() for b in parts],
            "batch_starts": starts,
            "runtime_s": time.perf_counter() - t0,
        },
    )
