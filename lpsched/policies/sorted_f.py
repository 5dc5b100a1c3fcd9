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
  ``max_r sum_{i in X, o_i >= r} (s_i + r) <= M``
  (:func:`~lpsched.policies.sorted_f_readings.common_start_peak`), which is never above the
  sum of peaks. ``dp`` and ``swap`` support both; ``quantile`` only ``"peaks"``.
* Phase 2: the executor on the concatenated list (SPEC section 4, :func:`sorted_f_order`), or
  the batches one after another, each started together when the previous one has completed
  (:func:`~lpsched.policies.sorted_f_readings.sequential_batches_schedule`,
  :func:`sorted_f_sequential`).

The common-start forms of ``dp`` and ``swap`` and the sequential Phase 2 are in
:mod:`lpsched.policies.sorted_f_readings`, the quantile greedy in :mod:`lpsched.policies.quantile`.

Source: Wang, Ye, Zhou, arXiv 2508.06133, section 4 (Sorted-F and its Phase-1 solvers).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from fractions import Fraction
from functools import partial
from typing import Any

import numpy as np

from ..instance import Instance
from ..schedule import Schedule
from .quantile import QuantileGreedy
from .sorted_f_readings import (
    Fits,
    common_start_fits,
    dp_choice,
    dp_table,
    greedy_fill_common_start,
    local_search,
    select_dp_common_start,
    sequential_batches_schedule,
)

__all__ = [
    "F",
    "select_dp",
    "select_swap",
    "best_of_two_starts",
    "greedy_fill",
    "batches_by_selection",
    "phase1_batches",
    "sorted_f_order",
    "PHASE1_SOLVERS",
    "PHASE1_FITS",
    "resolve_phase1",
    "sorted_f_sequential",
    "check_phase1_options",
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


def check_fit(fit: str = "peaks") -> str:
    """``fit`` itself when it is one of :data:`PHASE1_FITS`, else ValueError. Source: ours."""
    if fit not in PHASE1_FITS:
        raise ValueError(f"unknown Phase-1 fit {fit!r}; choose from {', '.join(PHASE1_FITS)}")
    return fit


def _check_solver(solver: str) -> str:
    """``solver`` itself when it is one of :data:`PHASE1_SOLVERS`, else ValueError."""
    if solver not in PHASE1_SOLVERS:
        raise ValueError(
            f"unknown Phase-1 solver {solver!r}; choose from {', '.join(PHASE1_SOLVERS)}"
        )
    return solver


def check_phase1_options(solver: str = "auto", fit: str = "peaks", **others: Any) -> None:
    """Check Sorted-F's Phase-1 options before a comparison starts (the policy registry calls
    it with the options given).

    Parameters
    ----------
    solver : {"dp", "swap", "quantile", "auto"}, default "auto"
    fit : {"peaks", "common-start"}, default "peaks"
    **others
        The other Phase-1 options (``sample_size``, ``quantile``, ``seed``): ``seed`` is
        checked here (a non-negative integer, whichever solver runs), the others by the solver
        that uses them.

    Raises
    ------
    ValueError
        An unknown solver or fit, ``fit="common-start"`` with the ``quantile`` solver, or a
        ``seed`` that is not a non-negative integer (the message names the option).

    Notes
    -----
    Source: ours. With ``solver="auto"`` the solver depends on ``n`` and ``M``, so that
    combination is checked when the policy runs.
    """
    if check_fit(fit) != "peaks" and _check_solver(solver) == "quantile":
        raise ValueError(
            f"the quantile Phase-1 solver supports fit='peaks' only, not {fit!r} "
            "(use solver='dp' or 'swap')"
        )
    seed = others.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"option seed must be a non-negative integer, got {seed!r}")


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
        ``<= M`` (our reading, :func:`~lpsched.policies.sorted_f_readings.common_start_peak`;
        see the notes for its tie rule).

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
    if check_fit(fit) == "common-start":
        return select_dp_common_start(decode, size, memory, DP_MAX_CELLS)
    o = np.asarray(decode, dtype=np.int64)
    z = np.asarray(size, dtype=np.int64)
    r = o.size
    kmax = int(np.searchsorted(np.cumsum(np.sort(z)), memory, side="right"))
    kmax = max(kmax, 1)
    g = dp_table(r, kmax, memory, DP_MAX_CELLS)
    for i in range(r - 1, -1, -1):
        g[i] = g[i + 1]
        zi = int(z[i])
        if zi <= memory:
            cand = g[i + 1, :-1, : memory + 1 - zi] + int(o[i])
            np.minimum(g[i, 1:, zi:], cand, out=g[i, 1:, zi:])
    return dp_choice(g, o, memory, lambda i, k, w: w - int(z[i]))


def select_swap(
    decode: np.ndarray, size: np.ndarray, memory: int, *, fit: str = "peaks"
) -> np.ndarray:
    """Phase-1 batch by local search (pairwise swaps, adds and removes).

    Parameters
    ----------
    decode, size, memory, fit
        As for :func:`select_dp` (the batch, the budget ``M`` and the feasibility of ``X``).

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
    if check_fit(fit) == "common-start":
        s = z - o
        fits = common_start_fits(o, s, memory)

        def search(order: np.ndarray) -> tuple[np.ndarray, Fraction, int]:
            return _with_f(o, local_search(o, greedy_fill_common_start(o, s, order, memory), fits))

    else:
        fits = _peaks_fits(z, memory)

        def search(order: np.ndarray) -> tuple[np.ndarray, Fraction, int]:
            return _with_f(o, local_search(o, greedy_fill(z, order, memory), fits))

    return best_of_two_starts(o, z, search)


def _with_f(o: np.ndarray, inx: np.ndarray) -> tuple[np.ndarray, Fraction, int]:
    """The batch ``inx`` (non-empty) with its exact ``F`` and its size."""
    k = int(inx.sum())
    return inx, Fraction(int(o[inx].sum()), k * k), k


def best_of_two_starts(
    o: np.ndarray, z: np.ndarray, search: Callable[[np.ndarray], tuple[np.ndarray, Any, int]]
) -> np.ndarray:
    """The better of a local search from two greedy starts (``swap`` and its variants).

    Parameters
    ----------
    o, z : ndarray of int64, shape (r,)
        ``o_i`` and ``s_i + o_i`` (tokens) of the remaining requests.
    search : callable
        ``search(order) -> (inx, value, k)``: the local minimum (bool mask, shape (r,),
        non-empty) reached from the greedy start that walks the positions ``order``, its value
        to minimise (``F``, or the seconds ratio of :mod:`lpsched.policies.sorted_f_seconds`)
        and its size ``k = |X|``.

    Returns
    -------
    ndarray of int64, shape (k,)
        Ascending positions of the minimum with the smaller value over the starts by ``o``
        (then index) and by ``s + o`` (then index); ties: the larger batch, then the first
        start.

    Notes
    -----
    Source: SPEC section 4 (``swap``); the two starts and the tie rule are ours (the notes of
    :func:`select_swap`).
    """
    idx = np.arange(o.size)
    minima = [search(np.lexsort((idx, key))) for key in (o, z)]
    inx, _, _ = min(minima, key=lambda found: (found[1], -found[2]))
    return np.flatnonzero(inx)


def greedy_fill(size: np.ndarray, order: np.ndarray, memory: int) -> np.ndarray:
    """The greedy start of ``swap``: walk ``order``, adding each request that still fits.

    Parameters
    ----------
    size : ndarray of int64, shape (r,)
        ``s_i + o_i`` (tokens) of the remaining requests.
    order : ndarray of int, shape (r,)
        The walk (positions).
    memory : int
        KV-cache budget ``M`` (tokens): the batch keeps ``sum (s_i + o_i) <= M``.

    Returns
    -------
    ndarray of bool, shape (r,)
        The batch taken. Source: SPEC section 4 (``swap``); the starts are ours.
    """
    inx = np.zeros(size.size, dtype=bool)
    used = 0
    for i in order.tolist():
        if used + size[i] <= memory:
            inx[i] = True
            used += int(size[i])
    return inx


def _peaks_fits(z: np.ndarray, memory: int) -> Fits:
    """The moves of :func:`~lpsched.policies.sorted_f_readings.local_search` that keep
    ``sum (s_i + o_i) <= M``."""

    def fits(xi: np.ndarray, yj: np.ndarray, swaps: bool) -> tuple[np.ndarray, np.ndarray | None]:
        zx, zy = z[xi], z[yj]
        free = memory - int(zx.sum())
        return zy <= free, (zy[None, :] - zx[:, None]) <= free if swaps else None

    return fits


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
    if _check_solver(solver) != "auto":
        return solver
    n = int(n)  # numpy integers would overflow (n + 1)^2 (M + 1)
    memory = None if memory is None else int(memory)
    if n <= DP_MAX_N and (memory is None or (n + 1) ** 2 * (memory + 1) <= DP_MAX_CELLS):
        return "dp"
    return "swap" if n <= SWAP_MAX_N else "quantile"


def batches_by_selection(
    decode: np.ndarray,
    size: np.ndarray,
    memory: int,
    select: Callable[[np.ndarray, np.ndarray, int], np.ndarray],
) -> list[np.ndarray]:
    """Phase 1 by a batch selector: choose a batch of the remaining requests, remove it, repeat.

    Parameters
    ----------
    decode, size : ndarray of int64, shape (n,)
        ``o_i`` and ``s_i + o_i`` (tokens) to plan with.
    memory : int
        KV-cache budget ``M`` (tokens).
    select : callable
        ``select(decode, size, memory)`` on the remaining requests (in index order) -> the
        ascending positions of a non-empty batch (:func:`select_dp`, :func:`select_swap`).

    Returns
    -------
    list of ndarray of int64
        Request indices of each batch, each sorted by ``o_i`` then index. Source: SPEC
        section 4 (Phase 1).
    """
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
        Parameters of :class:`~lpsched.policies.quantile.QuantileGreedy`.
    fit : {"peaks", "common-start"}, default "peaks"
        Feasibility of a batch (module docstring): ``sum (s_i + o_i) <= M`` (SPEC section 4)
        or the common-start peak ``<= M`` (our reading; ``dp`` and ``swap`` only).

    Returns
    -------
    list of ndarray of int64
        Request indices of each batch, each sorted by ``o_i`` ascending then index; together
        a partition of ``range(n)``. Every batch has ``sum (s_i + o_i) <= M`` (``"peaks"``)
        or :func:`~lpsched.policies.sorted_f_readings.common_start_peak` ``<= M``
        (``"common-start"``), in the planned lengths.

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
    """Phase-1 batches concatenated and the end of each
    (:meth:`~lpsched.policies.quantile.QuantileGreedy.priority_list`)."""
    check_fit(fit)
    o = instance.decode if decode is None else np.asarray(decode, dtype=np.int64)
    z = instance.prefill + o
    name = resolve_phase1(solver, instance.n, instance.memory)
    if name == "quantile":
        if fit != "peaks":
            picked = (
                f" ('auto' picked it for n = {instance.n}, M = {instance.memory})"
                if solver == "auto"
                else ""
            )
            raise ValueError(
                f"the quantile Phase-1 solver{picked} supports fit='peaks' only, not {fit!r} "
                "(use solver='dp' or 'swap')"
            )
        return QuantileGreedy(sample_size, quantile, seed).priority_list(o, z, instance.memory)
    chosen = select_dp if name == "dp" else select_swap
    select: Callable[[np.ndarray, np.ndarray, int], np.ndarray] = (
        chosen if fit == "peaks" else partial(chosen, fit=fit)  # peaks: called as before
    )
    batches = batches_by_selection(o, z, instance.memory, select)
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


def sorted_f_sequential(
    instance: Instance,
    solver: str = "auto",
    *,
    sample_size: int = 256,
    quantile: float = 0.9,
    seed: int = 0,
    fit: str = "peaks",
) -> Schedule:
    """Sorted-F with Phase 2 as batches one after another (our reading; module docstring).

    Parameters
    ----------
    instance : Instance
    solver : {"auto", "dp", "swap", "quantile"}
    sample_size, quantile, seed, fit
        As for :func:`phase1_batches`.

    Returns
    -------
    Schedule
        :func:`~lpsched.policies.sorted_f_readings.sequential_batches_schedule` of the
        Phase-1 batches; ``info`` also holds ``order`` (the batches concatenated), ``fit`` and
        ``order_runtime_s``.

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
