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

Also what the Phase-1 solvers share with these forms: the exact comparison of ``F``
(:func:`better`), the knapsack tables of ``dp`` (:func:`dp_table`, :func:`dp_choice`) and
the local search of ``swap`` (:func:`local_search`, with a feasibility test per fit).

Source: Wang, Ye, Zhou, arXiv 2508.06133, section 4 (Sorted-F); the readings are ours.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np

from ..instance import Instance
from ..schedule import Schedule

__all__ = [
    "better",
    "dp_table",
    "dp_choice",
    "Fits",
    "local_search",
    "common_start_fits",
    "greedy_fill_common_start",
    "select_dp_common_start",
    "common_start_peak",
    "sequential_batches_schedule",
]


def better(num_a: int, k_a: int, num_b: int, k_b: int) -> bool:
    """Exact ``F`` comparison: ``num_a / k_a^2 < num_b / k_b^2`` (integers, no rounding).

    Parameters
    ----------
    num_a, k_a, num_b, k_b : int
        ``sum o`` (tokens) and ``|X|`` (``>= 1``) of two batches.

    Returns
    -------
    bool
        Whether the first batch has the strictly smaller ``F``. Source: arXiv 2508.06133,
        section 4 (``F``); the integer form is ours.
    """
    return num_a * k_b * k_b < num_b * k_a * k_a


#: Value of an infeasible cell of the ``dp`` tables (:func:`dp_table`): above every ``sum o``.
DP_INF = np.iinfo(np.int32).max // 2


def dp_table(r: int, kmax: int, memory: int, max_cells: int) -> np.ndarray:
    """The ``dp`` table over ``r`` suffixes, ``kmax`` cardinalities and budgets ``0..M``, with
    its last suffix (no request) filled in.

    Parameters
    ----------
    r, kmax : int
        Requests and the largest cardinality ``k`` considered.
    memory : int
        KV-cache budget ``M`` (tokens).
    max_cells : int
        Largest number of cells allowed (``DP_MAX_CELLS`` of :mod:`lpsched.policies.sorted_f`).

    Returns
    -------
    ndarray of int32, shape (r + 1, kmax + 1, memory + 1)
        Rows ``0..r-1`` uninitialised; row ``r`` holds ``0`` for ``k = 0`` and :data:`DP_INF`
        (infeasible) for ``k >= 1``.

    Raises
    ------
    MemoryError
        More than ``max_cells`` cells (the message suggests ``swap`` or ``quantile``).

    Notes
    -----
    Source: SPEC section 4 (``dp``, knapsack by cardinality); the cell limit is ours.
    """
    cells = (r + 1) * (kmax + 1) * (memory + 1)
    if cells > max_cells:
        raise MemoryError(
            f"dp Phase-1 tables need {cells:,} cells (r={r}, k_max={kmax}, M={memory}); "
            "use the swap or quantile solver"
        )
    g = np.empty((r + 1, kmax + 1, memory + 1), dtype=np.int32)
    g[r] = DP_INF
    g[r, 0, :] = 0
    return g


def dp_choice(
    table: np.ndarray, o: np.ndarray, memory: int, left: Callable[[int, int, int], int]
) -> np.ndarray:
    """The ``dp`` optimum read off a filled table: the cardinality of the best ``F``, then the
    lexicographically smallest set, rebuilt forwards.

    Parameters
    ----------
    table : ndarray of int32, shape (r + 1, kmax + 1, memory + 1)
        ``table[i][k][w]`` = the least ``sum o`` of ``k`` requests among positions ``i..r-1``
        within budget ``w`` (:data:`DP_INF` if none); from :func:`dp_table`, filled in.
    o : ndarray of int64, shape (r,)
        Decode lengths (tokens) by position.
    memory : int
        KV-cache budget ``M`` (tokens).
    left : callable
        ``left(i, k, w)``: the budget left to the rest when position ``i`` is taken as the
        ``k``-th last of a set within budget ``w`` (negative: it cannot be).

    Returns
    -------
    ndarray of int64, shape (k,)
        Ascending positions: ``k`` minimises ``table[0][k][M] / k^2`` (ties: larger ``k``;
        exact), and position ``i`` is taken whenever a completion with the same value exists.

    Notes
    -----
    Source: SPEC section 4 (``dp``, tie rule); the forward rebuild is ours.
    """
    least = table[0, 1:, memory].astype(np.int64)
    k, rest = 0, 0
    for size in range(1, least.size + 1):
        num = int(least[size - 1])
        if num < DP_INF and (k == 0 or not better(rest, k, num, size)):
            k, rest = size, num
    chosen = []
    w = memory
    for i in range(o.size):
        if k == 0:
            break
        oi = int(o[i])
        room = left(i, k, w)
        if room >= 0 and rest - oi >= 0 and int(table[i + 1, k - 1, room]) == rest - oi:
            chosen.append(i)
            k, w, rest = k - 1, room, rest - oi
    return np.asarray(chosen, dtype=np.int64)


# A move of the local search: ("add", j), ("remove", i) or ("swap", i, j).
_Move = tuple[Literal["add", "remove"], int] | tuple[Literal["swap"], int, int]

#: ``fits(xi, yj, swaps) -> (add, swap)``: for the batch ``X`` (positions ``xi``, shape (k,))
#: and the other requests (``yj``, shape (m,)), a bool mask of shape (m,) of the ``j`` whose
#: addition keeps ``X`` feasible and, when ``swaps``, one of shape (k, m) of the swaps
#: ``xi[a]`` out, ``yj[b]`` in that keep it feasible (None otherwise).
Fits = Callable[[np.ndarray, np.ndarray, bool], tuple[np.ndarray, np.ndarray | None]]


def local_search(o: np.ndarray, inx: np.ndarray, fits: Fits) -> np.ndarray:
    """Best-improvement add / remove / swap search on ``F`` from a feasible batch.

    Parameters
    ----------
    o : ndarray of int64, shape (r,)
        Decode lengths ``o_i`` (tokens) of the remaining requests.
    inx : ndarray of bool, shape (r,)
        A feasible batch ``X`` (not modified).
    fits : Fits
        The feasibility of the moves: the sum of peaks (``fit="peaks"``) or
        :func:`common_start_fits`.

    Returns
    -------
    ndarray of bool, shape (r,)
        A local minimum: each pass takes the best of the three neighbourhoods (add the
        fitting ``j`` with the least ``o``, remove the ``i`` with the largest ``o``, the swap
        that lowers ``sum o`` most) while it lowers ``F`` strictly (compared exactly).

    Notes
    -----
    Source: SPEC section 4 (``swap``), arXiv 2508.06133 section 4; the best-improvement rule
    is ours (:func:`~lpsched.policies.sorted_f.select_swap`).
    """
    inx = inx.copy()
    num, k = int(o[inx].sum()), int(inx.sum())
    big = np.iinfo(np.int64).max
    while True:
        xi, yj = np.flatnonzero(inx), np.flatnonzero(~inx)
        best: tuple[int, int, _Move] | None = None  # (num, k, move)
        swap_ok = None
        if yj.size:
            add_ok, swap_ok = fits(xi, yj, k > 0)
            can = yj[add_ok]
            if can.size:
                j = int(can[np.argmin(o[can])])
                best = (num + int(o[j]), k + 1, ("add", j))
        if k >= 2:
            i = int(xi[np.argmax(o[xi])])
            cand: tuple[int, int, _Move] = (num - int(o[i]), k - 1, ("remove", i))
            if best is None or better(cand[0], cand[1], best[0], best[1]):
                best = cand
        if swap_ok is not None:
            delta = np.where(swap_ok, o[yj][None, :] - o[xi][:, None], big)
            a, b = np.unravel_index(int(np.argmin(delta)), delta.shape)
            if delta[a, b] < 0:
                i, j = int(xi[a]), int(yj[b])
                cand = (num + int(delta[a, b]), k, ("swap", i, j))
                if best is None or better(cand[0], cand[1], best[0], best[1]):
                    best = cand
        if best is None or not better(best[0], best[1], num, k):
            return inx
        move = best[2]
        if move[0] == "add":
            inx[move[1]] = True
        elif move[0] == "remove":
            inx[move[1]] = False
        else:
            inx[move[1]], inx[move[2]] = False, True
        num, k = best[0], best[1]


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


def select_dp_common_start(
    decode: np.ndarray, size: np.ndarray, memory: int, max_cells: int
) -> np.ndarray:
    """The exact Phase-1 batch with ``fit="common-start"``.

    Parameters
    ----------
    decode, size, memory
        As for :func:`~lpsched.policies.sorted_f.select_dp`.
    max_cells : int
        Largest table allowed (``DP_MAX_CELLS`` of :mod:`lpsched.policies.sorted_f`).

    Returns
    -------
    ndarray of int64, shape (k,)
        Ascending positions of the chosen batch.

    Raises
    ------
    MemoryError
        The tables would exceed ``max_cells`` cells.

    Notes
    -----
    The knapsack by cardinality over the positions sorted by ``(o_i, index)``; see the notes
    of :func:`~lpsched.policies.sorted_f.select_dp`, which calls it. Source: ours.
    """
    o_in = np.asarray(decode, dtype=np.int64)
    s_in = np.asarray(size, dtype=np.int64) - o_in
    r = o_in.size
    perm = np.lexsort((np.arange(r), o_in))  # by (o, index)
    o, s = o_in[perm], s_in[perm]
    kmax = int(np.searchsorted(np.cumsum(np.sort(s + 1)), memory, side="right"))
    kmax = max(kmax, 1)
    h = dp_table(r, kmax, memory, max_cells)
    w = np.arange(memory + 1)
    ks = np.arange(1, kmax + 1)
    for q in range(r - 1, -1, -1):
        h[q] = h[q + 1]
        # prefill budget left to the rest when q is taken as the k-th: min(w, M - k o_q) - s_q
        left = np.minimum(w[None, :], memory - ks[:, None] * int(o[q])) - int(s[q])
        ok = left >= 0
        cand = np.full(left.shape, DP_INF, dtype=np.int64)
        rows = np.broadcast_to(ks[:, None] - 1, left.shape)
        cand[ok] = h[q + 1][rows[ok], left[ok]].astype(np.int64) + int(o[q])
        np.minimum(h[q, 1:], np.minimum(cand, DP_INF).astype(np.int32), out=h[q, 1:])
    chosen = dp_choice(h, o, memory, lambda q, k, w: min(w, memory - k * int(o[q])) - int(s[q]))
    return np.sort(perm[chosen])


def greedy_fill_common_start(
    o: np.ndarray, s: np.ndarray, order: np.ndarray, memory: int
) -> np.ndarray:
    """The greedy start of ``swap`` with ``fit="common-start"``: walk ``order``, adding each
    request while the batch's common-start peak stays ``<= M``.

    Parameters
    ----------
    o, s : ndarray of int64, shape (r,)
        Decode and prefill lengths (tokens) of the remaining requests.
    order : ndarray of int, shape (r,)
        The walk (positions).
    memory : int
        KV-cache budget ``M`` (tokens).

    Returns
    -------
    ndarray of bool, shape (r,)
        The batch taken. Source: ours (as ``greedy_fill`` of
        :mod:`lpsched.policies.sorted_f` with :func:`common_start_peak`).
    """
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


def common_start_fits(o: np.ndarray, s: np.ndarray, memory: int) -> Fits:
    """The moves of :func:`local_search` that keep the common-start peak ``<= M``.

    Parameters
    ----------
    o, s : ndarray of int64, shape (r,)
        Decode and prefill lengths (tokens) of the remaining requests.
    memory : int
        KV-cache budget ``M`` (tokens).

    Returns
    -------
    Fits
        For a move out of ``X`` (one in ``j``, at most one out ``i``) the peak of the new set
        is its largest memory at the rounds ``r`` among the ``o`` of ``X`` and ``o_j`` (the
        ``r = o_i`` of a removed request is a round of the new set or holds nothing), computed
        from the memory of ``X`` at those rounds: O(k^2 m) vectorised per call.

    Notes
    -----
    Source: ours (the notes of :func:`~lpsched.policies.sorted_f.select_swap`).
    """

    def fits(xi: np.ndarray, yj: np.ndarray, swaps: bool) -> tuple[np.ndarray, np.ndarray | None]:
        ox, sx, oy, sy = o[xi], s[xi], o[yj], s[yj]
        base = _memory_at_rounds(ox, sx, ox)  # memory of X at the rounds r = o_x, shape (k,)
        at_j = _memory_at_rounds(ox, sx, oy)  # memory of X at the rounds r = o_j, shape (m,)
        # X + j: rounds o_x gain s_j + r where o_j >= r; round o_j holds X's part and j
        gain = np.where(oy[:, None] >= ox[None, :], sy[:, None] + ox[None, :], 0)  # (j, r)
        peak = np.maximum((base[None, :] + gain).max(axis=1, initial=0), at_j + sy + oy)
        if not swaps:
            return peak <= memory, None
        # (i out, j in) at the rounds r = o_x: shape (k_i, m_j, k_r)
        loss = np.where(ox[:, None] >= ox[None, :], sx[:, None] + ox[None, :], 0)  # (i, r)
        at_x = (base[None, None, :] - loss[:, None, :] + gain[None, :, :]).max(axis=2)
        # ... and at the round r = o_j: shape (k_i, m_j)
        lose_j = np.where(ox[:, None] >= oy[None, :], sx[:, None] + oy[None, :], 0)
        at_y = at_j[None, :] - lose_j + (sy + oy)[None, :]
        return peak <= memory, np.maximum(at_x, at_y) <= memory

    return fits


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
