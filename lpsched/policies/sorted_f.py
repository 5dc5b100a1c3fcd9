"""Sorted-F, Phase 1: batches that minimise ``F(X) = sum_{i in X} o_i / |X|^2`` (SPEC section 4).

``R`` = all requests, ``L`` = empty. While ``R`` is not empty: choose a non-empty ``X`` in ``R``
with ``sum_{i in X} (s_i + o_i) <= M`` minimising ``F(X)`` (ties: larger ``|X|``, then the
lexicographically smallest set of request indices), append ``X`` to ``L`` sorted by ``o_i``
ascending (ties by index), remove ``X`` from ``R``. Phase 2 runs ``L`` with the executor.

Three Phase-1 solvers, each returning a feasible ``X``:

* ``dp`` -- exact, knapsack by cardinality (n <= 100);
* ``swap`` -- local search with pairwise swaps, adds and removes (n <= 500; the paper's choice at
  n = 2000 for its headline);
* ``quantile`` -- quantile greedy, O(sample + batch) per batch beyond the sort;
* ``auto`` -- ``dp`` for n <= :data:`DP_MAX_N`, ``swap`` up to n = :data:`SWAP_MAX_N`,
  ``quantile`` above (:func:`resolve_phase1`: the one rule, used by ``run_policy`` and the
  command line alike).

Two readings of the seed paper where it leaves a choice (``docs/results/sorted-f-readings.md``):

* Phase 1's feasibility of a batch ``X`` (option ``fit``): ``"peaks"`` (default, SPEC
  section 4) asks ``sum_{i in X} (s_i + o_i) <= M``; ``"common-start"`` (our reading) asks
  that the batch started together at one round fit: its true peak
  ``max_r sum_{i in X, o_i >= r} (s_i + r) <= M`` (:func:`common_start_peak`), which is never
  above the sum of peaks. ``dp`` and ``swap`` support both; ``quantile`` only ``"peaks"``.
* Phase 2: the executor on the concatenated list (SPEC section 4, :func:`sorted_f_order`), or
  the batches one after another, each started together when the previous one has completed
  (:func:`sequential_batches_schedule`, :func:`sorted_f_sequential`).

Source: Wang, Ye, Zhou, arXiv 2508.06133, section 4 (Sorted-F and its Phase-1 solvers).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import Literal

import numpy as np

from ..instance import Instance
from ..kernels import jit
from ..schedule import Schedule

__all__ = [
    "F",
    "select_dp",
    "select_swap",
    "QuantileGreedy",
    "phase1_batches",
    "sorted_f_order",
    "PHASE1_SOLVERS",
    "PHASE1_FITS",
    "resolve_phase1",
    "common_start_peak",
    "sequential_batches_schedule",
    "sorted_f_sequential",
]

PHASE1_SOLVERS = ("dp", "swap", "quantile", "auto")
#: Phase-1 feasibility of a batch (option ``fit``): the sum of peaks (SPEC section 4) or the
#: true peak of the batch started together (our reading; module docstring).
PHASE1_FITS = ("peaks", "common-start")
DP_MAX_CELLS = 300_000_000  # int32 cells of the dp tables, about 1.2 GB


def F(decode: np.ndarray) -> float:
    """``F(X) = sum_{i in X} o_i / |X|^2`` for the decode lengths ``o`` of a batch ``X``.

    Parameters
    ----------
    decode : ndarray of int, shape (k,), k >= 1
        Decode lengths ``o_i`` (tokens) of the batch.

    Returns
    -------
    float
        ``F(X)`` in rounds per request squared. Source: arXiv 2508.06133, section 4.
    """
    k = len(decode)
    return float(np.sum(decode)) / (k * k)


def _better(num_a: int, k_a: int, num_b: int, k_b: int) -> bool:
    """Exact ``num_a / k_a^2 < num_b / k_b^2`` (integers, no rounding)."""
    return num_a * k_b * k_b < num_b * k_a * k_a


def _check_fit(fit: str) -> str:
    """``fit`` itself when it is one of :data:`PHASE1_FITS`, else ValueError."""
    if fit not in PHASE1_FITS:
        raise ValueError(f"unknown Phase-1 fit {fit!r}; choose from {', '.join(PHASE1_FITS)}")
    return fit


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


def select_dp(
    decode: np.ndarray, size: np.ndarray, memory: int, *, fit: str = "peaks"
) -> np.ndarray:
    """Exact Phase-1 batch: the minimiser of ``F`` with the SPEC tie rule.

    Parameters
    ----------
    decode, size : ndarray of int, shape (r,)
        ``o_i`` and ``s_i + o_i`` (tokens) of the remaining requests, in index order.
    memory : int
        KV-cache budget ``M`` (tokens).
    fit : {"peaks", "common-start"}, default "peaks"
        Feasibility of ``X``: ``sum (s_i + o_i) <= M`` (SPEC), or its common-start peak
        ``<= M`` (our reading, :func:`common_start_peak`; see the notes for its tie rule).

    Returns
    -------
    ndarray of int64, shape (k,)
        Ascending positions of the chosen batch ``X``.

    Raises
    ------
    MemoryError
        If the tables would exceed ``DP_MAX_CELLS`` cells (use ``swap`` or ``quantile``).
    ValueError
        Unknown ``fit``.

    Notes
    -----
    Knapsack by cardinality over suffixes: ``g[i][k][w]`` is the least ``sum o`` of ``k``
    requests among positions ``i..r-1`` with total size ``<= w``. Then
    ``k* = argmin_k g[0][k][M] / k^2`` (ties: larger k) and the lexicographically smallest set
    is rebuilt forwards: take position ``i`` whenever a completion with the same value exists.
    ``k`` only runs to the largest number of requests that fit. O(r k_max M) time and memory.
    Source: SPEC section 4 (``dp``); the suffix form for the tie rule is ours.

    ``fit="common-start"`` (ours): the same knapsack by cardinality over the positions
    sorted by ``(o_i, index)``, whose suffixes hold the longer requests: ``h[q][k][w]`` is
    the least ``sum o`` of ``k`` requests among sorted positions ``q..r-1`` whose
    common-start peak is ``<= M`` and whose prefills sum to ``<= w``. Taking ``q`` (the
    shortest of the set) adds the one constraint at round ``r = o_q``, where all ``k`` are
    running: ``s_q + (prefills of the rest) + k o_q <= M``, so
    ``h[q][k][w] = min(h[q+1][k][w], o_q + h[q+1][k-1][min(w, M - k o_q) - s_q])``; the
    constraints of the rest are theirs (a tie in ``o`` with ``q`` is checked again at
    ``q``). ``k`` runs to the most requests with ``sum (s_i + 1) <= M``. Ties: larger
    ``|X|``, then the lexicographically smallest set of sorted positions, i.e. of
    ``(o_i, index)`` pairs (our reading: the SPEC rule by index would need one table per
    decision). Same cost as above.
    """
    if _check_fit(fit) == "common-start":
        return _select_dp_common_start(decode, size, memory)
    o = np.asarray(decode, dtype=np.int64)
    z = np.asarray(size, dtype=np.int64)
    r = o.size
    kmax = int(np.searchsorted(np.cumsum(np.sort(z)), memory, side="right"))
    kmax = max(kmax, 1)
    cells = (r + 1) * (kmax + 1) * (memory + 1)
    if cells > DP_MAX_CELLS:
        raise MemoryError(
            f"dp Phase-1 tables need {cells:,} cells (r={r}, k_max={kmax}, M={memory}); "
            "use the swap or quantile solver"
        )
    inf = np.iinfo(np.int32).max // 2
    g = np.empty((r + 1, kmax + 1, memory + 1), dtype=np.int32)
    g[r] = inf
    g[r, 0, :] = 0
    for i in range(r - 1, -1, -1):
        g[i] = g[i + 1]
        zi = int(z[i])
        if zi <= memory:
            cand = g[i + 1, :-1, : memory + 1 - zi] + int(o[i])
            np.minimum(g[i, 1:, zi:], cand, out=g[i, 1:, zi:])
    top = g[0, :, memory].astype(np.int64)
    prefix = top[1:]
    feasible = prefix < inf
    best_k, best_num = 0, 0
    for k in range(1, kmax + 1):
        num = int(prefix[k - 1])
        if feasible[k - 1] and (best_k == 0 or not _better(best_num, best_k, num, k)):
            best_k, best_num = k, num
    chosen = []
    k, w, rest = best_k, memory, best_num
    for i in range(r):
        if k == 0:
            break
        zi, oi = int(z[i]), int(o[i])
        if zi <= w and rest - oi >= 0 and int(g[i + 1, k - 1, w - zi]) == rest - oi:
            chosen.append(i)
            k, w, rest = k - 1, w - zi, rest - oi
    return np.asarray(chosen, dtype=np.int64)


def _select_dp_common_start(decode: np.ndarray, size: np.ndarray, memory: int) -> np.ndarray:
    """:func:`select_dp` with ``fit="common-start"`` (its notes)."""
    o_in = np.asarray(decode, dtype=np.int64)
    s_in = np.asarray(size, dtype=np.int64) - o_in
    r = o_in.size
    perm = np.lexsort((np.arange(r), o_in))  # by (o, index)
    o, s = o_in[perm], s_in[perm]
    kmax = int(np.searchsorted(np.cumsum(np.sort(s + 1)), memory, side="right"))
    kmax = max(kmax, 1)
    cells = (r + 1) * (kmax + 1) * (memory + 1)
    if cells > DP_MAX_CELLS:
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


def select_swap(
    decode: np.ndarray, size: np.ndarray, memory: int, *, fit: str = "peaks"
) -> np.ndarray:
    """Phase-1 batch by local search (pairwise swaps, adds and removes).

    Parameters
    ----------
    decode, size : ndarray of int, shape (r,)
        ``o_i`` and ``s_i + o_i`` (tokens) of the remaining requests, in index order.
    memory : int
        KV-cache budget ``M`` (tokens).
    fit : {"peaks", "common-start"}, default "peaks"
        Feasibility of ``X``: ``sum (s_i + o_i) <= M`` (SPEC), or its common-start peak
        ``<= M`` (our reading, :func:`common_start_peak`).

    Returns
    -------
    ndarray of int64, shape (k,)
        Ascending positions of a feasible batch ``X``.

    Raises
    ------
    ValueError
        Unknown ``fit``.

    Notes
    -----
    Two greedy starts: walk the requests by ``o`` ascending (then index), and by ``s + o``
    ascending, adding each that still fits. From each, repeat best-improvement passes over
    three neighbourhoods -- add one request, remove one, swap one in for one out -- while ``F``
    falls strictly (compared exactly in integers) and ``X`` stays within ``M``; keep the better
    local minimum (ties: larger ``|X|``, then the first start). One pass is O(k (r - k))
    vectorised. The second start matters: when the request with the smallest ``o`` fills ``M``
    alone, the first start is a one-request local minimum (``o = [2, 3, 3, 3]``,
    ``s + o = [6, 2, 2, 2]``, ``M = 6``: F = 2 against the optimum 1). Source: SPEC section 4
    (``swap``), arXiv 2508.06133 section 4; the two starts and best-improvement rule are ours.

    ``fit="common-start"`` (ours): the same starts and moves, "fits" meaning the common-start
    peak of the new set is ``<= M``. For a move out of ``X`` (one in ``j``, at most one out
    ``i``) the peak is the largest memory of the new set at the rounds ``r`` among the
    ``o`` of ``X`` and ``o_j`` (the ``r = o_i`` of a removed request is a round of the new set
    or holds nothing, so it never raises the maximum), from the memory of ``X`` at those
    rounds: one pass is O(k^2 (r - k)) vectorised. A removal never raises the peak.
    """
    o = np.asarray(decode, dtype=np.int64)
    z = np.asarray(size, dtype=np.int64)
    idx = np.arange(o.size)
    best = None
    if _check_fit(fit) == "common-start":
        s = z - o
        for key in (o, z):
            start = _greedy_fill_common_start(o, s, np.lexsort((idx, key)), memory)
            inx = _local_search_common_start(o, s, memory, start)
            num, k = int(o[inx].sum()), int(inx.sum())
            if (
                best is None
                or _better(num, k, best[0], best[1])
                or (num * best[1] ** 2 == best[0] * k * k and k > best[1])
            ):
                best = (num, k, inx)
        assert best is not None  # set by the first start
        return np.flatnonzero(best[2])
    for key in (o, z):
        inx = _local_search(o, z, memory, _greedy_fill(z, np.lexsort((idx, key)), memory))
        num, k = int(o[inx].sum()), int(inx.sum())
        if (
            best is None
            or _better(num, k, best[0], best[1])
            or (num * best[1] ** 2 == best[0] * k * k and k > best[1])
        ):
            best = (num, k, inx)
    assert best is not None  # set by the first start
    return np.flatnonzero(best[2])


def _greedy_fill(size: np.ndarray, order: np.ndarray, memory: int) -> np.ndarray:
    """Boolean mask of the requests taken walking ``order`` and adding each that still fits."""
    inx = np.zeros(size.size, dtype=bool)
    used = 0
    for i in order.tolist():
        if used + size[i] <= memory:
            inx[i] = True
            used += int(size[i])
    return inx


# A move of the local search: ("add", j), ("remove", i) or ("swap", i, j).
_Move = tuple[Literal["add", "remove"], int] | tuple[Literal["swap"], int, int]


def _local_search(o: np.ndarray, z: np.ndarray, memory: int, inx: np.ndarray) -> np.ndarray:
    """Best-improvement add / remove / swap search on ``F`` from the feasible mask ``inx``."""
    inx = inx.copy()
    used = int(z[inx].sum())
    num, k = int(o[inx].sum()), int(inx.sum())
    while True:
        xi, yj = np.flatnonzero(inx), np.flatnonzero(~inx)
        free = memory - used
        best: tuple[int, int, _Move] | None = None  # (num, k, move)
        if yj.size:
            fits = yj[z[yj] <= free]
            if fits.size:
                j = int(fits[np.argmin(o[fits])])
                best = (num + int(o[j]), k + 1, ("add", j))
        if k >= 2:
            i = int(xi[np.argmax(o[xi])])
            cand: tuple[int, int, _Move] = (num - int(o[i]), k - 1, ("remove", i))
            if best is None or _better(cand[0], cand[1], best[0], best[1]):
                best = cand
        if yj.size and k:
            ok = (z[yj][None, :] - z[xi][:, None]) <= free
            delta = np.where(ok, o[yj][None, :] - o[xi][:, None], np.iinfo(np.int64).max)
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
            used += int(z[move[1]])
        elif move[0] == "remove":
            inx[move[1]] = False
            used -= int(z[move[1]])
        else:
            inx[move[1]], inx[move[2]] = False, True
            used += int(z[move[2]] - z[move[1]])
        num, k = best[0], best[1]


def _greedy_fill_common_start(
    o: np.ndarray, s: np.ndarray, order: np.ndarray, memory: int
) -> np.ndarray:
    """As :func:`_greedy_fill`, "still fits" meaning a common-start peak ``<= M``."""
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
    """:func:`_local_search` with "fits" meaning a common-start peak ``<= M`` (the notes of
    :func:`select_swap`); ``inx`` is a feasible mask."""
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


class QuantileGreedy:
    """Phase-1 quantile greedy over the whole instance (near-linear time, see the notes).

    Parameters
    ----------
    sample_size : int, default 256
        Requests sampled (with replacement, from those not yet batched) to estimate the
        quantiles of ``o_i`` and of ``s_i + o_i`` for each batch.
    quantile : float in (0, 1], default 0.9
        Requests above this quantile of ``o`` or of ``s + o`` are outliers, skipped for the
        batch (they stay for later batches, when the quantiles have moved).
    seed : int, default 0
        Seed of the sampling (the result is reproducible).

    Raises
    ------
    ValueError
        ``sample_size < 1`` or ``quantile`` outside ``(0, 1]``.

    Notes
    -----
    For each batch: draw ``min(sample_size, m)`` positions uniformly (with replacement) in the
    ``m`` remaining requests kept in ``(o, index)`` order, and take the ``quantile``-quantiles
    ``theta_o``, ``theta_z`` (``numpy.quantile``, method ``linear``) of their ``o`` and ``s + o``;
    walk the remaining requests in that order, stop at the first with ``o > theta_o``, skip
    those with ``s + o > theta_z`` (outliers), add the others while the batch stays within
    ``M`` and stop at the first that does not fit; keep the prefix of the walk with the
    smallest ``F`` (ties: the longer). If the walk takes nothing, the batch is the remaining
    request with the smallest ``o``. Source: SPEC section 4 (``quantile``), arXiv 2508.06133
    section 4; the stopping rule and defaults are ours.

    Cost (ours). A skipped outlier keeps its place at the front of the order, so a walk that
    reads the order request by request re-reads every outlier still waiting in every later
    batch: superlinear (the walk of commit b7a4cff, kept in ``tests/reference_quantile.py``).
    Here the walk jumps over outliers with a segment tree over the sorted positions holding
    the least ``s + o`` still waiting below each node (O(log n) per jump, O(1) per request
    taken next to the previous one). A sample position is mapped to its request in O(1) when
    it falls past the last position ever batched (nothing there has been removed), else by a
    Fenwick tree of waiting counts per block of 64 positions (O(log n + 64)); the two order
    statistics of a threshold come from a radix selection over the sample, with no sort.
    One batch costs ``O(sample_size + |X|)`` plus those logarithmic terms; with batches of
    bounded size, Phase 1 is O(n log n) at worst and linear in practice beyond the sort
    (``benchmarks/bench_executor.py``), with the draws and batches of the former walk. The
    loop is one kernel (:mod:`lpsched.kernels`); with numba it draws from the same
    :class:`numpy.random.Generator` stream as the interpreted fallback (the same batches,
    tested both ways).
    """

    def __init__(self, sample_size: int = 256, quantile: float = 0.9, seed: int = 0) -> None:
        if sample_size < 1:
            raise ValueError("sample_size must be >= 1")
        if not 0 < quantile <= 1:
            raise ValueError("quantile must lie in (0, 1]")
        self.sample_size = int(sample_size)
        self.quantile = float(quantile)
        self.seed = seed

    def priority_list(
        self, decode: np.ndarray, size: np.ndarray, memory: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """The batches concatenated, and where each ends (no list of arrays).

        Parameters
        ----------
        decode, size : ndarray of int, shape (n,)
            ``o_i`` and ``s_i + o_i`` (tokens) by request.
        memory : int
            KV-cache budget ``M`` (tokens).

        Returns
        -------
        order : ndarray of int64, shape (n,)
            Request indices, batch after batch, each batch sorted by ``o`` then index.
        ends : ndarray of int64, shape (b,)
            ``order[ends[j - 1]:ends[j]]`` is batch ``j`` (``ends[-1] == n``).

        Notes
        -----
        Source: ours (:meth:`batches` without the split).
        """
        o = np.asarray(decode, dtype=np.int64)
        z = np.asarray(size, dtype=np.int64)
        order = np.argsort(o, kind="stable")  # (o, index) order
        taken = np.empty(o.size, dtype=np.int64)
        ends = np.empty(o.size, dtype=np.int64)
        count = _quantile_batches(
            o[order],
            z[order],
            int(memory),
            np.random.default_rng(self.seed),
            self.sample_size,
            self.quantile,
            taken,
            ends,
        )
        return order[taken], ends[:count]

    def batches(self, decode: np.ndarray, size: np.ndarray, memory: int) -> list[np.ndarray]:
        """All Phase-1 batches.

        Parameters
        ----------
        decode, size : ndarray of int, shape (n,)
            ``o_i`` and ``s_i + o_i`` (tokens) by request.
        memory : int
            KV-cache budget ``M`` (tokens).

        Returns
        -------
        list of ndarray of int64
            Request indices of each batch, each sorted by ``o`` then index; together a
            partition of ``range(n)``.

        Notes
        -----
        Source: SPEC section 4; the algorithm is in the class notes.
        """
        order, ends = self.priority_list(decode, size, memory)
        return np.split(order, ends[:-1]) if order.size else []


_REMOVED = 2**62  # segment-tree value of a batched position (above every s + o <= 2**40 + 2**40)
_SMALL = 2**21  # num * k^2 < 2**63 when num, k < 2**21: the best prefix compares by products


@jit
def _lerp(a, b, gamma):
    """numpy's ``_lerp``: ``a + (b - a) g`` for ``g < 1/2``, else ``b - (b - a) (1 - g)``."""
    diff = b - a
    if gamma >= 0.5:
        return b - diff * (1.0 - gamma)
    return a + diff * gamma


@jit
def _order_pair(values, lo, scratch):
    """The ``lo``-th and ``(lo + 1)``-th smallest of ``values`` (0-based, ``lo <= size - 2``).

    ``scratch`` holds at least ``values.size`` int64. Radix selection: spread the
    candidates over ``_BUCKETS`` equal buckets between their least and largest value, keep the
    bucket holding both ranks and repeat (each round divides the span by ``_BUCKETS``); a pair
    split over two buckets is the last of one and the first of the next. Small candidate sets
    are sorted by insertion. Whole-array numpy steps (no branch per value, unlike a heap or a
    quickselect), which also keep the interpreted fallback fast. Source: ours.
    """
    cnt = values.size
    buf = scratch[:cnt]
    buf[:] = values
    r = lo
    while cnt > 16:
        vmin = buf[:cnt].min()
        span = buf[:cnt].max() - vmin
        if span == 0:
            return vmin, vmin
        shift = 0
        while (span >> shift) >= _BUCKETS:
            shift += 1
        bucket = (buf[:cnt] - vmin) >> shift
        upto = np.cumsum(np.bincount(bucket, minlength=_BUCKETS))
        b = np.searchsorted(upto, r, side="right")  # the bucket of rank r
        below = upto[b - 1] if b else 0
        if r + 1 < upto[b]:  # both ranks in bucket b: keep it
            kept = buf[:cnt][bucket == b]
            cnt = kept.size
            buf[:cnt] = kept
            r -= below
        else:  # rank r is the largest of bucket b, rank r + 1 the least above it
            return buf[:cnt][bucket == b].max(), buf[:cnt][bucket > b].min()
    for j in range(1, cnt):
        v = buf[j]
        i = j - 1
        while i >= 0 and buf[i] > v:
            buf[i + 1] = buf[i]
            i -= 1
        buf[i + 1] = v
    return buf[r], buf[r + 1]


_BUCKETS = 256


@jit
def _frac_le(a, b, c, d):
    """Exact ``a / b <= c / d`` for ``a, c >= 0`` and ``b, d > 0`` (int64, no overflow).

    Compares integer parts, then the reciprocals of the remainders (Euclid). Source: ours.
    """
    while True:
        qa = a // b
        qc = c // d
        if qa != qc:
            return qa < qc
        a -= qa * b
        c -= qc * d
        if a == 0:
            return True
        if c == 0:
            return False
        a, b, c, d = d, c, b, a


@jit
def _quantile_batches(key, size, memory, rng, sample_size, q, taken, ends):
    """All quantile-greedy batches of requests sorted by ``(o, index)`` (class notes).

    ``key`` and ``size`` are ``o`` and ``s + o`` in that order (int64, shape (n,)). Writes the
    batched positions, batch after batch, to ``taken`` and the end of each batch to ``ends``;
    returns the number of batches. Source: ours.
    """
    n = key.size
    width = 1
    while width < n:
        width *= 2
    least = np.full(2 * width, _REMOVED, dtype=np.int64)  # least s + o waiting below a node
    least[width : width + n] = size
    for node in range(width - 1, 0, -1):
        least[node] = min(least[2 * node], least[2 * node + 1])
    waiting = np.ones(n, dtype=np.bool_)
    blocks = (n + _BLOCK - 1) // _BLOCK
    fenwick = np.zeros(blocks + 1, dtype=np.int64)  # waiting per block of positions, 1-based
    for b in range(1, blocks + 1):
        fenwick[b] += min(_BLOCK, n - (b - 1) * _BLOCK)
        up = b + (b & -b)
        if up <= blocks:
            fenwick[up] += fenwick[b]
    top = 1
    while 2 * top <= blocks:
        top *= 2
    walk = np.empty(n, dtype=np.int64)
    scratch = np.empty(min(sample_size, n), dtype=np.int64)  # a sample has min(sample_size, m)
    m = n  # requests waiting
    frontier = 0  # positions >= frontier have never been batched
    written = 0
    batches = 0
    while m > 0:
        k = min(sample_size, m)
        draws = rng.integers(0, m, size=k)
        front = frontier - (n - m)  # waiting below the frontier
        sample_p = draws + (frontier - front)
        for pile in np.flatnonzero(draws < front):
            sample_p[pile] = _kth_waiting(fenwick, top, waiting, draws[pile])
        sample_z = size[sample_p]
        virtual = (k - 1) * q
        if virtual >= k - 1:  # numpy.quantile gives the maximum
            theta_o = float(key[sample_p.max()])
            theta_z = float(sample_z.max())
        else:  # key is non-decreasing in position: the o order statistics are the p ones
            below = np.floor(virtual)
            lo = int(below)
            pa, pb = _order_pair(sample_p, lo, scratch)
            theta_o = _lerp(key[pa], key[pb], virtual - below)
            za, zb = _order_pair(sample_z, lo, scratch)
            theta_z = _lerp(za, zb, virtual - below)
        used = 0
        take = 0
        p = _next_below(least, width, 0, theta_z)
        while p >= 0 and key[p] <= theta_o and used + size[p] <= memory:
            used += size[p]
            walk[take] = p
            take += 1
            p = _next_below(least, width, p + 1, theta_z) if p + 1 < n else -1
        if take == 0:
            walk[0] = _kth_waiting(fenwick, top, waiting, 0)
            best = 1
        else:
            best = _best_prefix(key, walk, take)
        frontier = max(frontier, walk[best - 1] + 1)
        for j in range(best):
            p = walk[j]
            taken[written + j] = p
            waiting[p] = False
            b = p // _BLOCK + 1
            while b <= blocks:
                fenwick[b] -= 1
                b += b & -b
        _remove_least(least, width, walk, best)
        written += best
        m -= best
        ends[batches] = written
        batches += 1
    return batches


_BLOCK = 64  # positions per block of the waiting counts (one cache line of flags)


@jit
def _kth_waiting(fenwick, top, waiting, rank):
    """Position of the waiting request of 0-based ``rank`` in position order.

    Binary lifting on the Fenwick tree of waiting counts per block of ``_BLOCK`` positions,
    then a scan of that block's flags. O(log(n / _BLOCK) + _BLOCK). Source: ours.
    """
    blocks = fenwick.size - 1
    b = 0
    step = top
    while step:
        if b + step <= blocks and fenwick[b + step] <= rank:
            b += step
            rank -= fenwick[b]
        step //= 2
    p = b * _BLOCK
    while True:
        if waiting[p]:
            if rank == 0:
                return p
            rank -= 1
        p += 1


@jit
def _next_below(least, width, p, theta):
    """First waiting position ``>= p`` whose ``s + o <= theta``, or -1 (segment-tree descent).

    ``least`` holds the tree of minima over ``width`` leaves (batched leaves ``_REMOVED``).
    O(log width). Source: ours.
    """
    node = p + width
    if least[node] <= theta:
        return p
    while node > 1 and (node % 2 == 1 or least[node + 1] > theta):
        node //= 2
    if node == 1:
        return -1
    node += 1
    while node < width:
        node *= 2
        if least[node] > theta:
            node += 1
    return node - width


@jit
def _best_prefix(key, walk, take):
    """Length ``c`` of the prefix of ``walk[:take]`` minimising ``F`` (exact; ties: longer)."""
    best = 1
    best_num = key[walk[0]]
    num = 0
    for c in range(1, take + 1):
        num += key[walk[c - 1]]
        if num < _SMALL and c < _SMALL:
            better = num * best * best <= best_num * c * c
        else:
            better = _frac_le(num, c * c, best_num, best * best)
        if better:
            best = c
            best_num = num
    return best


@jit
def _remove_least(least, width, walk, count):
    """Set the leaves ``walk[:count]`` (ascending positions) to ``_REMOVED`` and refresh their
    ancestors level by level, each once. Overwrites ``walk[:count]``."""
    for j in range(count):
        node = walk[j] + width
        least[node] = _REMOVED
        walk[j] = node // 2
    level = count
    while walk[0] >= 1:
        kept = 0
        last = 0
        for j in range(level):
            node = walk[j]
            if node != last:
                last = node
                least[node] = min(least[2 * node], least[2 * node + 1])
                walk[kept] = node // 2
                kept += 1
        level = kept


#: ``auto`` uses the exact ``dp`` up to this many requests (the paper's choice, section 6).
DP_MAX_N = 100
#: ``auto`` uses ``swap`` up to this many requests, ``quantile`` above. Measured on the paper's
#: mix (``benchmarks/bench_phase1.py --tel``, M = 16,492, 3 seeds, docs/dev/performance.md):
#: ``quantile``'s Sorted-F TEL is 1.35x ``swap``'s at n = 200 and 1.70-1.77x from n = 1,000 to
#: 20,000 (1.17-1.19x on mix-80-20), while ``swap`` takes 0.1-0.2 s at n = 2,000 (the paper's
#: choice there), 2.7-3.4 s at 10,000 and 16-18 s at 20,000 (5-6.6x per doubling of n).
#: The online planners re-plan with the same rule at every arrival, so a larger threshold would
#: also slow them (online Sorted-F at n = 20,000: 11.5 s with swap against 0.6 s for MC-SF).
SWAP_MAX_N = 10_000


def resolve_phase1(solver: str, n: int, memory: int | None = None) -> str:
    """The Phase-1 solver ``solver`` stands for at ``n`` requests (SPEC section 4).

    Parameters
    ----------
    solver : {"auto", "dp", "swap", "quantile"}
    n : int
        Requests to schedule.
    memory : int, optional
        The KV-cache budget ``M`` (tokens): ``auto`` takes ``dp`` only when its tables surely
        fit, ``(n + 1)^2 (M + 1) <=`` :data:`DP_MAX_CELLS` (``k_max <= n``); None: by ``n``
        alone.

    Returns
    -------
    str
        ``solver`` itself, or for ``auto``: ``dp`` for ``n <=`` :data:`DP_MAX_N` (when its
        tables fit), ``swap`` for ``n <=`` :data:`SWAP_MAX_N`, ``quantile`` above. The one place
        this default is decided.

    Raises
    ------
    ValueError
        Unknown solver.

    Notes
    -----
    Source: SPEC section 4; the thresholds are ours, from the measurement above.
    """
    if solver not in PHASE1_SOLVERS:
        raise ValueError(
            f"unknown Phase-1 solver {solver!r}; choose from {', '.join(PHASE1_SOLVERS)}"
        )
    if solver != "auto":
        return solver
    n = int(n)  # numpy integers would overflow (n + 1)^2 (M + 1)
    memory = None if memory is None else int(memory)
    if n <= DP_MAX_N and (memory is None or (n + 1) ** 2 * (memory + 1) <= DP_MAX_CELLS):
        return "dp"
    return "swap" if n <= SWAP_MAX_N else "quantile"


def _batches_by_selection(
    decode: np.ndarray,
    size: np.ndarray,
    memory: int,
    select: Callable[[np.ndarray, np.ndarray, int], np.ndarray],
) -> list[np.ndarray]:
    remaining = np.arange(decode.size)
    out = []
    while remaining.size:
        chosen = select(decode[remaining], size[remaining], memory)
        batch = remaining[chosen]
        out.append(batch[np.lexsort((batch, decode[batch]))])
        remaining = np.delete(remaining, chosen)
    return out


def phase1_batches(
    instance: Instance,
    solver: str = "auto",
    *,
    decode: np.ndarray | None = None,
    sample_size: int = 256,
    quantile: float = 0.9,
    seed: int = 0,
    fit: str = "peaks",
) -> list[np.ndarray]:
    """The Sorted-F Phase-1 batches ``X_1, X_2, ...`` of an instance.

    Parameters
    ----------
    instance : Instance
        Requests and KV-cache budget ``M``.
    solver : {"auto", "dp", "swap", "quantile"}
        Phase-1 solver (module docstring).
    decode : ndarray of int, shape (n,), optional
        Decode lengths to plan with instead of the true ``o_i`` (e.g. estimates for
        Sorted-F+Amin); sizes are then ``s_i + decode_i``.
    sample_size, quantile, seed
        Parameters of :class:`QuantileGreedy`.
    fit : {"peaks", "common-start"}, default "peaks"
        Feasibility of a batch (module docstring): ``sum (s_i + o_i) <= M`` (SPEC section 4)
        or the common-start peak ``<= M`` (our reading; ``dp`` and ``swap`` only).

    Returns
    -------
    list of ndarray of int64
        Request indices of each batch, each sorted by ``o_i`` ascending then index; together
        a partition of ``range(n)``. Every batch has ``sum (s_i + o_i) <= M`` (``"peaks"``)
        or :func:`common_start_peak` ``<= M`` (``"common-start"``), in the planned lengths.

    Raises
    ------
    ValueError
        Unknown solver or fit; ``fit="common-start"`` with the ``quantile`` solver (also
        when ``auto`` picks it). ``MemoryError`` from ``dp`` when its tables would be too
        large.
    """
    order, ends = _phase1_list(instance, solver, decode, sample_size, quantile, seed, fit)
    return np.split(order, ends[:-1]) if order.size else []


def _phase1_list(
    instance: Instance,
    solver: str,
    decode: np.ndarray | None,
    sample_size: int,
    quantile: float,
    seed: int,
    fit: str = "peaks",
) -> tuple[np.ndarray, np.ndarray]:
    """Phase-1 batches concatenated and the end of each (:meth:`QuantileGreedy.priority_list`)."""
    _check_fit(fit)
    o = instance.decode if decode is None else np.asarray(decode, dtype=np.int64)
    z = instance.prefill + o
    name = resolve_phase1(solver, instance.n, instance.memory)
    if name == "quantile":
        if fit != "peaks":
            raise ValueError(
                f"the quantile Phase-1 solver supports fit='peaks' only, not {fit!r} "
                "(use solver='dp' or 'swap')"
            )
        return QuantileGreedy(sample_size, quantile, seed).priority_list(o, z, instance.memory)
    chosen = select_dp if name == "dp" else select_swap
    select: Callable[[np.ndarray, np.ndarray, int], np.ndarray] = (
        chosen if fit == "peaks" else partial(chosen, fit=fit)  # peaks: called as before
    )
    batches = _batches_by_selection(o, z, instance.memory, select)
    if not batches:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(batches), np.cumsum([b.size for b in batches])


def sorted_f_order(
    instance: Instance,
    solver: str = "auto",
    *,
    decode: np.ndarray | None = None,
    sample_size: int = 256,
    quantile: float = 0.9,
    seed: int = 0,
    fit: str = "peaks",
) -> np.ndarray:
    """The Sorted-F priority list: Phase-1 batches concatenated in order.

    Parameters
    ----------
    instance : Instance
    solver : {"auto", "dp", "swap", "quantile"}
    decode, sample_size, quantile, seed, fit
        As for :func:`phase1_batches` (``fit="peaks"``, the default, is SPEC section 4).

    Returns
    -------
    ndarray of int64, shape (n,)
        The list ``L`` for the executor. Source: arXiv 2508.06133, section 4.
    """
    return _phase1_list(instance, solver, decode, sample_size, quantile, seed, fit)[0]


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
        :func:`phase1_batches`); each must fit when started together:
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


def sorted_f_sequential(
    instance: Instance,
    solver: str = "auto",
    *,
    fit: str = "peaks",
    sample_size: int = 256,
    quantile: float = 0.9,
    seed: int = 0,
) -> Schedule:
    """Sorted-F with Phase 2 as batches one after another (our reading; module docstring).

    Parameters
    ----------
    instance : Instance
    solver : {"auto", "dp", "swap", "quantile"}
    fit, sample_size, quantile, seed
        As for :func:`phase1_batches`.

    Returns
    -------
    Schedule
        :func:`sequential_batches_schedule` of the Phase-1 batches; ``info`` also holds
        ``order`` (the batches concatenated), ``fit`` and ``order_runtime_s``.

    Raises
    ------
    ValueError
        As :func:`phase1_batches`.

    Notes
    -----
    Source: arXiv 2508.06133, section 4 (Phase 1); the sequential Phase 2 is our reading.
    """
    t0 = time.perf_counter()
    batches = phase1_batches(
        instance, solver, sample_size=sample_size, quantile=quantile, seed=seed, fit=fit
    )
    t1 = time.perf_counter()
    sched = sequential_batches_schedule(instance, batches)
    sched.info.update(
        order=np.concatenate(batches) if batches else np.zeros(0, dtype=np.int64),
        fit=fit,
        order_runtime_s=t1 - t0,
        runtime_s=time.perf_counter() - t0,
    )
    return sched
