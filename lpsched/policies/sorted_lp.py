"""Sorted-LP: order by the LP relaxation's fractional completion times (SPEC section 4).

Solve the LP relaxation of the time-indexed model (SPEC section 3), give each request its
fractional completion time ``sum_k (k + o_i) x_{i,k}`` (rounds), and list the requests by that
value, then by ``o_i``, then by index; the executor runs the list. The LP is built as a sparse
matrix and solved by HiGHS directly (:func:`lpsched.solvers.solve.solve_lp`); instances whose
LP would exceed ``max_nonzeros`` are refused with :class:`lpsched.solvers.result.LPTooLargeError`.
This is the one policy that sits above the solvers (``docs/architecture.md``).

Source: arXiv 2508.06133, section 5 (Sorted-LP); the classic LP-ordering idea of Hall, Schulz,
Shmoys and Wein (Math. Oper. Res. 1997).
"""

from __future__ import annotations

import numpy as np

from ..instance import Instance
from ..solvers.options import check_max_nonzeros
from ..solvers.solve import solve_lp

__all__ = ["sorted_lp_order", "lp_completion_times"]

#: Fractional completion times are compared after rounding to this many decimals, so that
#: values equal up to solver tolerance tie and fall through to ``o_i`` and the index.
KEY_DECIMALS = 6


def lp_completion_times(
    instance: Instance,
    horizon: int | None = None,
    max_nonzeros: int | None = None,
) -> np.ndarray:
    """Fractional completion time ``sum_k (k + o_i) x_{i,k}`` of every request (rounds).

    Parameters
    ----------
    instance : Instance
    horizon : int, optional
        LP horizon ``T`` (rounds); default ``min(T1, T2)`` with start windows.
    max_nonzeros : int, optional
        Size limit of the LP: a positive integer; None (default) means
        :data:`lpsched.solvers.options.LP_MAX_NONZEROS`.

    Returns
    -------
    ndarray of float, shape (n,)

    Raises
    ------
    LPTooLargeError
        The LP exceeds ``max_nonzeros``.
    ValueError
        ``max_nonzeros`` is not a positive integer or None.
    """
    sol = solve_lp(instance, horizon, max_nonzeros=check_max_nonzeros(max_nonzeros))
    return sol.fractional_completion()


def sorted_lp_order(
    instance: Instance,
    horizon: int | None = None,
    max_nonzeros: int | None = None,
) -> np.ndarray:
    """The Sorted-LP priority list.

    Parameters
    ----------
    instance : Instance
    horizon, max_nonzeros
        See :func:`lp_completion_times`.

    Returns
    -------
    ndarray of int64, shape (n,)
        Requests by fractional completion time (rounded to :data:`KEY_DECIMALS` decimals),
        then ``o_i``, then index. Source: SPEC section 4 (arXiv 2508.06133, section 5).
    """
    key = np.round(lp_completion_times(instance, horizon, max_nonzeros), KEY_DECIMALS)
    return np.lexsort((np.arange(instance.n), instance.decode, key)).astype(np.int64)
