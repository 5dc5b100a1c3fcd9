"""Sorted-LP and LP-Swap: priority lists from the LP relaxation (SPEC section 4).

Solve the LP relaxation of the time-indexed model (SPEC section 3), give each request its
fractional completion time ``sum_k (k + o_i) x_{i,k}`` (rounds), and list the requests by that
value, then by ``o_i``, then by index; the executor runs the list.

Two LPs (option ``lp``):

* ``"full"`` -- the round-indexed LP, built as a sparse matrix and solved by HiGHS directly
  (:func:`lpsched.solvers.solve.solve_relaxation` from the best list schedule); instances
  whose LP exceeds ``max_nonzeros`` are refused with
  :class:`lpsched.solvers.result.LPTooLargeError`;
* ``"aggregated"`` -- the LP over windows of rounds refined where the memory overflows
  (:func:`lpsched.solvers.aggregated.aggregated_lp`), stopped after
  ``max_iterations`` master solves on one HiGHS thread: a deterministic work limit, so the
  list is a function of the instance, never of the machine's speed. Its solution is the
  master's, an approximation of the LP's when the refinement has not converged;
* ``"auto"`` (default) -- the full LP when it is within ``max_nonzeros``, the aggregated one
  otherwise (at n = 2000 on the default instance: 30 master solves, about 12 s, TEL 5,953,416
  against Sorted-F's 6,362,535; ``benchmarks/bench_algorithms.py``).

**LP-Swap** (``lp-swap``) is named by the seed paper beside Sorted-LP ("LP-guided extensions
(Sorted-LP and LP-Swap)") without a description we could recover. Our reading: Sorted-LP's
list improved by swaps of neighbours while the executor's TEL falls
(:func:`lpsched.policies.local_search.adjacent_swaps`, at most ``max_passes`` passes).

Sorted-LP sits above the solvers and the aggregated LP of :mod:`lpsched.certify`
(``docs/architecture.md``).

Source: arXiv 2508.06133, section 5 (Sorted-LP, LP-Swap named); the classic LP-ordering idea of
Hall, Schulz, Shmoys and Wein (Math. Oper. Res. 1997); the aggregated LP and the swap reading
are ours.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..instance import Instance, is_int
from ..solvers.aggregated import aggregated_lp
from ..solvers.options import SolveOptions, check_max_nonzeros
from ..solvers.result import LPTooLargeError
from ..solvers.solve import solve_relaxation
from .local_search import adjacent_swaps, best_heuristic, list_policy_starts

__all__ = [
    "LP_KINDS",
    "AGGREGATED_ITERATIONS",
    "sorted_lp_order",
    "lp_swap_order",
    "lp_completion_times",
    "check_lp_options",
]

#: The LPs Sorted-LP can order by (module docstring).
LP_KINDS = ("auto", "full", "aggregated")
#: Master solves of the aggregated LP by default (a deterministic work limit).
AGGREGATED_ITERATIONS = 30

#: Fractional completion times are compared after rounding to this many decimals, so that
#: values equal up to solver tolerance tie and fall through to ``o_i`` and the index.
KEY_DECIMALS = 6


def _positive_int(name: str, value: Any) -> None:
    if not is_int(value) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")


def check_lp_options(
    *,
    lp: str = "auto",
    max_iterations: int = AGGREGATED_ITERATIONS,
    max_passes: int = 1,
    horizon: int | None = None,
    max_nonzeros: int | None = None,
) -> None:
    """Check the options of ``sorted-lp`` and ``lp-swap`` before any LP is built.

    Parameters
    ----------
    lp, max_iterations, max_passes, horizon, max_nonzeros
        As :func:`lp_completion_times` and :func:`lp_swap_order`.

    Raises
    ------
    ValueError
        ``lp`` not one of :data:`LP_KINDS`; ``max_iterations``, ``max_passes``, ``horizon``
        (when given) or ``max_nonzeros`` (when given) not a positive integer.

    Notes
    -----
    Source: ours. The policy registry calls it before a comparison starts
    (:func:`lpsched.policies.registry.check_policy_options`).
    """
    if lp not in LP_KINDS:
        raise ValueError(f"lp must be one of {', '.join(LP_KINDS)}, got {lp!r}")
    _positive_int("max_iterations", max_iterations)
    _positive_int("max_passes", max_passes)
    if horizon is not None:
        _positive_int("horizon", horizon)
    check_max_nonzeros(max_nonzeros)


def lp_completion_times(
    instance: Instance,
    horizon: int | None = None,
    max_nonzeros: int | None = None,
    lp: str = "auto",
    max_iterations: int = AGGREGATED_ITERATIONS,
) -> np.ndarray:
    """Fractional completion time ``sum_k (k + o_i) x_{i,k}`` of every request (rounds).

    Parameters
    ----------
    instance : Instance
    horizon : int, optional
        LP horizon ``T`` (rounds); default ``min(T1, T2)`` with start windows.
    max_nonzeros : int, optional
        Size limit of the full LP: a positive integer; None (default) means
        :data:`lpsched.solvers.options.LP_MAX_NONZEROS`.
    lp : {"auto", "full", "aggregated"}, default "auto"
        Which LP (module docstring).
    max_iterations : int, default 30
        Master solves of the aggregated LP (a positive integer).

    Returns
    -------
    ndarray of float, shape (n,)

    Raises
    ------
    LPTooLargeError
        ``lp="full"`` and the LP exceeds ``max_nonzeros``.
    ValueError
        ``max_nonzeros`` or ``max_iterations`` not a positive integer, an unknown ``lp``.
    """
    check_lp_options(lp=lp, max_iterations=max_iterations)
    limit = check_max_nonzeros(max_nonzeros)
    if lp != "aggregated":
        try:
            options = SolveOptions(time_limit=None, max_nonzeros=limit)
            sol = solve_relaxation(instance, best_heuristic(instance), options, horizon=horizon)
            return sol.fractional_completion()
        except LPTooLargeError:
            if lp == "full":
                raise
    res = aggregated_lp(
        instance,
        best_heuristic(instance),
        seeds=list_policy_starts(instance),
        horizon=horizon,
        time_limit=None,
        threads=1,
        max_iterations=int(max_iterations),
    )
    return np.asarray(res.info["mean_start"], dtype=np.float64) + instance.decode


def sorted_lp_order(
    instance: Instance,
    horizon: int | None = None,
    max_nonzeros: int | None = None,
    lp: str = "auto",
    max_iterations: int = AGGREGATED_ITERATIONS,
) -> np.ndarray:
    """The Sorted-LP priority list.

    Parameters
    ----------
    instance : Instance
    horizon, max_nonzeros, lp, max_iterations
        See :func:`lp_completion_times`.

    Returns
    -------
    ndarray of int64, shape (n,)
        Requests by fractional completion time (rounded to :data:`KEY_DECIMALS` decimals),
        then ``o_i``, then index. Source: SPEC section 4 (arXiv 2508.06133, section 5).

    Raises
    ------
    LPTooLargeError, ValueError
        As :func:`lp_completion_times`.
    """
    key = np.round(
        lp_completion_times(instance, horizon, max_nonzeros, lp, max_iterations), KEY_DECIMALS
    )
    return np.lexsort((np.arange(instance.n), instance.decode, key)).astype(np.int64)


def lp_swap_order(
    instance: Instance,
    horizon: int | None = None,
    max_nonzeros: int | None = None,
    lp: str = "auto",
    max_iterations: int = AGGREGATED_ITERATIONS,
    max_passes: int = 3,
) -> np.ndarray:
    """The LP-Swap priority list (our reading): Sorted-LP's list, improved by swaps of
    neighbours while the strict executor's TEL falls.

    Parameters
    ----------
    instance : Instance
    horizon, max_nonzeros, lp, max_iterations
        See :func:`lp_completion_times`.
    max_passes : int, default 3
        Passes of :func:`~lpsched.policies.local_search.adjacent_swaps`.

    Returns
    -------
    ndarray of int64, shape (n,)
        A list whose strict schedule's TEL is at most Sorted-LP's.

    Raises
    ------
    LPTooLargeError, ValueError
        As :func:`lp_completion_times`; ``max_passes`` not a positive integer.

    Notes
    -----
    The seed paper names LP-Swap (arXiv 2508.06133, "LP-guided extensions (Sorted-LP and
    LP-Swap)"); its rule was not recovered, so this is our reading (module docstring). SPEC
    section 4.
    """
    check_lp_options(max_passes=max_passes)  # before the LP is solved
    order = sorted_lp_order(instance, horizon, max_nonzeros, lp, max_iterations)
    return adjacent_swaps(instance, order, int(max_passes))[0]
