"""Sorted-F, Phase 1: batches that minimise ``F(X) = sum_{i in X} o_i / |X|^2`` (SPEC section 4).

``R`` = all requests, ``L`` = empty. While ``R`` is not empty: choose a non-empty ``X`` in ``R``
with ``sum_{i in X} (s_i + o_i) <= M`` minimising ``F(X)`` (ties: larger ``|X|``, then the
lexicographically smallest set of request indices), append ``X`` to ``L`` sorted by ``o_i``
ascending (ties by index), remove ``X`` from ``R``. Phase 2 runs ``L`` with the executor.

Three Phase-1 solvers, each returning a feasible ``X``:

* ``dp`` -- exact, knapsack by cardinality (n <= 100);
* ``swap`` -- local search with pairwise swaps, adds and removes (n <= 500; the paper's choice at
  n = 2000 for its headline);
* ``quantile`` -- quantile greedy, linear time per batch (n >= 1000);
* ``auto`` -- ``dp`` for n <= 100, ``swap`` for n < 1000, ``quantile`` otherwise.

Source: Wang, Ye, Zhou, arXiv 2508.06133, section 4 (Sorted-F and its Phase-1 solvers).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import numpy as np

from ..instance import Instance

__all__ = [
    "F",
    "select_dp",
    "select_swap",
    "QuantileGreedy",
    "phase1_batches",
    "sorted_f_order",
    "PHASE1_SOLVERS",
    "resolve_phase1",
]

PHASE1_SOLVERS = ("dp", "swap", "quantile", "auto")
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


def _best_k(prefix_o: list[int]) -> int:
    """Index k (1-based) minimising ``prefix_o[k-1] / k^2``, ties to the larger k (exact)."""
    best = 1
    for k in range(2, len(prefix_o) + 1):
        if prefix_o[k - 1] * best * best <= prefix_o[best - 1] * k * k:
            best = k
    return best


def select_dp(decode: np.ndarray, size: np.ndarray, memory: int) -> np.ndarray:
    """Exact Phase-1 batch: the minimiser of ``F`` with the SPEC tie rule.

    Parameters
    ----------
    decode, size : ndarray of int, shape (r,)
        ``o_i`` and ``s_i + o_i`` (tokens) of the remaining requests, in index order.
    memory : int
        KV-cache budget ``M`` (tokens).

    Returns
    -------
    ndarray of int64, shape (k,)
        Ascending positions of the chosen batch ``X``.

    Raises
    ------
    MemoryError
        If the tables would exceed ``DP_MAX_CELLS`` cells (use ``swap`` or ``quantile``).

    Notes
    -----
    Knapsack by cardinality over suffixes: ``g[i][k][w]`` is the least ``sum o`` of ``k``
    requests among positions ``i..r-1`` with total size ``<= w``. Then
    ``k* = argmin_k g[0][k][M] / k^2`` (ties: larger k) and the lexicographically smallest set
    is rebuilt forwards: take position ``i`` whenever a completion with the same value exists.
    ``k`` only runs to the largest number of requests that fit. O(r k_max M) time and memory.
    Source: SPEC section 4 (``dp``); the suffix form for the tie rule is ours.
    """
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


def select_swap(decode: np.ndarray, size: np.ndarray, memory: int) -> np.ndarray:
    """Phase-1 batch by local search (pairwise swaps, adds and removes).

    Parameters
    ----------
    decode, size : ndarray of int, shape (r,)
        ``o_i`` and ``s_i + o_i`` (tokens) of the remaining requests, in index order.
    memory : int
        KV-cache budget ``M`` (tokens).

    Returns
    -------
    ndarray of int64, shape (k,)
        Ascending positions of a feasible batch ``X``.

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
    """
    o = np.asarray(decode, dtype=np.int64)
    z = np.asarray(size, dtype=np.int64)
    idx = np.arange(o.size)
    best = None
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


class QuantileGreedy:
    """Phase-1 quantile greedy over the whole instance (linear time per batch).

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

    Notes
    -----
    For each batch: estimate the thresholds from the sample; walk the remaining requests in
    ``o`` ascending order (kept sorted once for the whole run), skip outliers, add each while
    the batch stays within ``M`` and stop at the first that does not fit; keep the prefix with
    the smallest ``F`` (ties: the longer). If no request passes the filter, the batch is the
    single request with the smallest ``o``. Only the front of the sorted list is read, in a
    window that doubles until the walk stops inside it. Source: SPEC section 4 (``quantile``),
    arXiv 2508.06133 section 4; the stopping rule, window and defaults are ours.
    """

    def __init__(self, sample_size: int = 256, quantile: float = 0.9, seed: int = 0) -> None:
        if sample_size < 1:
            raise ValueError("sample_size must be >= 1")
        if not 0 < quantile <= 1:
            raise ValueError("quantile must lie in (0, 1]")
        self.sample_size = int(sample_size)
        self.quantile = float(quantile)
        self.seed = seed

    def step(
        self,
        rng: np.random.Generator,
        m: int,
        lengths: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
        memory: int,
    ) -> np.ndarray:
        """One batch from ``m`` remaining requests kept in ``(o, index)`` order.

        Parameters
        ----------
        rng : numpy.random.Generator
            Source of the quantile sample.
        m : int
            Number of remaining requests, ``>= 1``.
        lengths : callable
            ``lengths(positions) -> (o, s + o)`` for positions (ndarray of int) in the sorted
            remaining sequence (tokens).
        memory : int
            KV-cache budget ``M`` (tokens).

        Returns
        -------
        ndarray of int64
            Ascending positions of the batch in the remaining sequence.
        """
        po, pz = lengths(rng.integers(0, m, size=min(self.sample_size, m)))
        theta_o = np.quantile(po, self.quantile)
        theta_z = np.quantile(pz, self.quantile)
        w = min(m, 64)
        while True:
            ow, zw = lengths(np.arange(w))
            ok = np.flatnonzero((ow <= theta_o) & (zw <= theta_z))
            cz = np.cumsum(zw[ok])
            take = int(np.searchsorted(cz, memory, side="right"))
            if take < ok.size or w == m or ow[-1] > theta_o:
                break
            w = min(m, 2 * w)
        if take == 0:
            return np.array([0])
        return ok[: _best_k(np.cumsum(ow[ok[:take]]).tolist())]

    def batches(self, decode: np.ndarray, size: np.ndarray, memory: int) -> list[np.ndarray]:
        """All Phase-1 batches (original positions, each sorted by ``o`` then index).

        The remaining requests are ``order[head:]`` in ``(o, index)`` order. A batch takes
        positions from the front window only, so it is removed by moving the window's kept
        requests up against the rest and advancing ``head``: O(window) per batch instead of
        the O(remaining) of a delete (ours). The windows themselves still re-read requests
        skipped as outliers in earlier batches (``benchmarks/bench_executor.py``)."""
        o = np.asarray(decode, dtype=np.int64)
        z = np.asarray(size, dtype=np.int64)
        rng = np.random.default_rng(self.seed)
        order = np.lexsort((np.arange(o.size), o))
        head = 0
        out = []
        while head < order.size:

            def lengths(k: np.ndarray, h: int = head) -> tuple[np.ndarray, np.ndarray]:
                return o[order[h + k]], z[order[h + k]]

            positions = self.step(rng, order.size - head, lengths, memory)
            out.append(order[head + positions])
            end = head + int(positions[-1]) + 1
            kept = np.delete(order[head:end], positions)
            order[end - kept.size : end] = kept
            head = end - kept.size
        return out


def resolve_phase1(solver: str, n: int) -> str:
    """The Phase-1 solver ``auto`` stands for at ``n`` requests (SPEC section 4)."""
    if solver not in PHASE1_SOLVERS:
        raise ValueError(
            f"unknown Phase-1 solver {solver!r}; choose from {', '.join(PHASE1_SOLVERS)}"
        )
    if solver != "auto":
        return solver
    return "dp" if n <= 100 else "swap" if n < 1000 else "quantile"


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

    Returns
    -------
    list of ndarray of int64
        Request indices of each batch, each sorted by ``o_i`` ascending then index; together
        a partition of ``range(n)``. Every batch has ``sum (s_i + o_i) <= M``.

    Raises
    ------
    ValueError
        Unknown solver. ``MemoryError`` from ``dp`` when its tables would be too large.
    """
    o = instance.decode if decode is None else np.asarray(decode, dtype=np.int64)
    z = instance.prefill + o
    name = resolve_phase1(solver, instance.n)
    if name == "quantile":
        return QuantileGreedy(sample_size, quantile, seed).batches(o, z, instance.memory)
    select = select_dp if name == "dp" else select_swap
    return _batches_by_selection(o, z, instance.memory, select)


def sorted_f_order(instance: Instance, solver: str = "auto", **options) -> np.ndarray:
    """The Sorted-F priority list: Phase-1 batches concatenated in order.

    Parameters
    ----------
    instance : Instance
    solver : {"auto", "dp", "swap", "quantile"}
    **options
        Passed to :func:`phase1_batches`.

    Returns
    -------
    ndarray of int64, shape (n,)
        The list ``L`` for the executor. Source: arXiv 2508.06133, section 4.
    """
    return np.concatenate(phase1_batches(instance, solver, **options))
