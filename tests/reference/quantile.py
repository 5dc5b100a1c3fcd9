"""Identity reference: the ``quantile`` Phase-1 solver before the linear rewrite (issue 13).

A verbatim copy, at commit b7a4cff, of ``_best_k`` and ``QuantileGreedy`` (``step`` and
``batches``) from ``lpsched/policies/sorted_f.py``. Its doubling windows re-read the requests
skipped as outliers, so it is superlinear; the tests compare the new solver's batches with
:meth:`QuantileGreedy.batches` here. Not part of the package.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def _best_k(prefix_o: list[int]) -> int:
    """Index k (1-based) minimising ``prefix_o[k-1] / k^2``, ties to the larger k (exact)."""
    best = 1
    for k in range(2, len(prefix_o) + 1):
        if prefix_o[k - 1] * best * best <= prefix_o[best - 1] * k * k:
            best = k
    return best


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
