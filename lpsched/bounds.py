"""Lower bounds on the optimal TEL (SPEC section 7), and a chooser between them.

* :func:`trivial_bound` -- ``sum_i o_i``: every latency is at least the decode length.
* :func:`combinatorial_bound` -- the O(n log n) bound of SPEC section 7, extended to arrivals.
* :func:`best_bound` -- the LP relaxation (:func:`lpsched.exact.lp_bound`) when the model is
  small enough to solve in the time limit, otherwise the combinatorial bound; it says which.
"""

from __future__ import annotations

import time

import numpy as np

from .exact import LP_MAX_NONZEROS, BoundResult, LPTooLargeError, lp_bound
from .formulations.horizon import horizon_t1
from .formulations.time_indexed import matrix_size
from .instance import Instance

__all__ = [
    "trivial_bound",
    "combinatorial_bound",
    "combinatorial_value",
    "best_bound",
    "BOUND_METHODS",
]

#: Methods of ``lpsched bound --method``.
BOUND_METHODS = ("lp", "combinatorial", "trivial", "auto")


def trivial_bound(instance: Instance) -> BoundResult:
    """``sum_i o_i`` (rounds): every latency ``C_i - a_i`` is at least ``o_i``.

    Returns
    -------
    BoundResult
        ``method="trivial"``, ``horizon=None``. Source: SPEC section 7.
    """
    t0 = time.perf_counter()
    value = float(instance.decode.sum())
    return BoundResult("trivial", value, time.perf_counter() - t0, None)


def combinatorial_value(instance: Instance) -> int:
    """The combinatorial lower bound on TEL as an integer (rounds); see
    :func:`combinatorial_bound` for the argument."""
    s = instance.prefill.astype(np.int64)
    o = instance.decode.astype(np.int64)
    a = instance.arrival.astype(np.int64)
    area = o * s + o * (o + 1) // 2  # token-rounds A_i
    k_area = np.cumsum(np.sort(area))
    by_area = -(-k_area // instance.memory)  # ceil(sum of the k smallest A / M)
    by_length = np.sort(a + o)  # k-th smallest a_i + o_i
    completions = int(np.maximum(by_area, by_length).sum())
    return max(completions - int(a.sum()), int(o.sum()))


def combinatorial_bound(instance: Instance) -> BoundResult:
    """The combinatorial lower bound of SPEC section 7, O(n log n).

    Request ``i`` occupies ``A_i = o_i s_i + o_i (o_i + 1) / 2`` token-rounds of KV cache. The
    ``k`` requests that complete first have used ``sum A`` token-rounds within rounds
    ``1 .. C_(k)``, at most ``M`` per round, so the ``k``-th smallest completion satisfies
    ``C_(k) >= ceil((sum of the k smallest A) / M)``; also ``C_(k) >= `` the ``k``-th smallest
    ``a_i + o_i`` (each ``C_i >= a_i + o_i``; sorting keeps a componentwise bound). Summing the
    larger of the two over ``k`` bounds ``sum C_i``.

    Offline (``a_i = 0``) this is exactly SPEC section 7. With arrivals we use
    ``TEL = sum C_i - sum a_i`` (ours: the same argument, arrivals only delay completions) and
    take the larger of that and :func:`trivial_bound`, so the bound is valid for every instance;
    with late arrivals it is often no better than ``sum o_i``.

    Returns
    -------
    BoundResult
        ``method="combinatorial"``, ``bound`` an integer-valued float (rounds),
        ``horizon=None``.

    Notes
    -----
    Source: SPEC section 7 (arXiv 2508.06133); the arrival version is ours (argument above).
    """
    t0 = time.perf_counter()
    value = combinatorial_value(instance)
    return BoundResult(
        "combinatorial",
        float(value),
        time.perf_counter() - t0,
        None,
        info={"offline": instance.offline},
    )


def best_bound(
    instance: Instance,
    time_limit: float = 60.0,
    *,
    method: str = "auto",
    max_nonzeros: int = 5_000_000,
) -> BoundResult:
    """The best lower bound affordable in ``time_limit`` seconds, saying which it is.

    Parameters
    ----------
    instance : Instance
    time_limit : float, default 60
        Seconds for the LP solve.
    method : {"auto", "lp", "combinatorial", "trivial"}
        ``auto``: the LP relaxation when its matrix has at most ``max_nonzeros`` non-zeros
        and HiGHS solves it within ``time_limit``, else the combinatorial bound; the larger of
        the LP and the combinatorial value is returned. The others force one method.
    max_nonzeros : int, default 5,000,000
        Size above which ``auto`` does not try the LP (about 60 s of HiGHS on 2 cores, see
        ``benchmarks/bench_exact.py``).

    Returns
    -------
    BoundResult
        ``method`` names the bound used; ``info["reason"]`` says why, ``info`` also has the
        other candidate's value when computed.

    Raises
    ------
    ValueError
        Unknown method. ``method="lp"`` raises :class:`~lpsched.exact.LPTooLargeError` above
        :data:`~lpsched.exact.LP_MAX_NONZEROS` and ``RuntimeError`` on an LP time-out.
    """
    if method not in BOUND_METHODS:
        raise ValueError(f"unknown bound method {method!r}; choose from {', '.join(BOUND_METHODS)}")
    if method == "trivial":
        return trivial_bound(instance)
    if method == "combinatorial":
        return combinatorial_bound(instance)
    if method == "lp":
        return lp_bound(instance, max_nonzeros=LP_MAX_NONZEROS, time_limit=time_limit)
    t0 = time.perf_counter()
    comb = combinatorial_bound(instance)
    _, nnz_t1 = matrix_size(instance, horizon_t1(instance))
    reason = None
    if nnz_t1 > 20 * max_nonzeros:  # even the tight horizon cannot shrink it enough
        reason = f"LP too large ({nnz_t1:,} non-zeros at T1 > {max_nonzeros:,})"
    else:
        try:
            lp = lp_bound(instance, max_nonzeros=max_nonzeros, time_limit=time_limit)
        except LPTooLargeError as exc:
            reason = f"LP too large ({exc})"
        except RuntimeError as exc:
            reason = f"LP not solved in {time_limit:g} s ({exc})"
        else:
            if lp.bound >= comb.bound:
                lp.info.update(
                    reason=f"LP solved in {lp.runtime_s:.2f} s", combinatorial=comb.bound
                )
                lp.runtime_s = time.perf_counter() - t0
                return lp
            reason = f"combinatorial {comb.bound:g} above the LP value {lp.bound:g}"
            comb.info["lp"] = lp.bound
    comb.info["reason"] = reason
    comb.runtime_s = time.perf_counter() - t0
    return comb
