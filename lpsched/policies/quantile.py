"""Sorted-F, Phase 1 by the quantile greedy: near-linear batches (SPEC section 4, ``quantile``).

:class:`QuantileGreedy` builds every Phase-1 batch of :mod:`lpsched.policies.sorted_f` (solver
``quantile``, the ``auto`` choice above ``SWAP_MAX_N`` requests) from sampled quantiles of
``o_i`` and ``s_i + o_i``, with the sum-of-peaks fit ``sum_{i in X} (s_i + o_i) <= M``. Its loop
is one kernel, with the helpers it calls (:func:`lpsched.kernels.jit`: compiled with numba, or
interpreted; the same batches either way).

Source: Wang, Ye, Zhou, arXiv 2508.06133, section 4 (the ``quantile`` Phase-1 solver); the
stopping rule, defaults and data structures are ours (class notes).
"""

from __future__ import annotations

import numpy as np

from ..kernels import jit

__all__ = ["QuantileGreedy"]


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
        decode, size, memory
            As for :meth:`priority_list`, whose ``order`` this splits at its ``ends``.

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
def lerp(a, b, gamma):
    """numpy's ``lerp``: ``a + (b - a) g`` for ``g < 1/2``, else ``b - (b - a) (1 - g)``."""
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
            theta_o = lerp(key[pa], key[pb], virtual - below)
            za, zb = _order_pair(sample_z, lo, scratch)
            theta_z = lerp(za, zb, virtual - below)
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
