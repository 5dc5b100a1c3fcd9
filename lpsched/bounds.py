"""Lower bounds on the optimal TEL (SPEC section 7), each with its validity argument.

* :func:`trivial_bound` -- ``sum_i o_i``: every latency is at least the decode length.
* :func:`combinatorial_bound` -- the O(n log n) bound of SPEC section 7, extended to arrivals.

Both return integers (rounds). The LP relaxation and the chooser between the bounds, which need a
solver, are :func:`lpsched.certify.lp_bound` and :func:`lpsched.certify.best_bound`.
"""

from __future__ import annotations

import numpy as np

from .instance import Instance

__all__ = ["trivial_bound", "combinatorial_bound"]


def trivial_bound(instance: Instance) -> int:
    """``sum_i o_i`` (rounds): every latency ``C_i - a_i`` is at least ``o_i``.

    Returns
    -------
    int
        Source: SPEC section 7.
    """
    return int(instance.decode.sum())


def combinatorial_bound(instance: Instance) -> int:
    """The combinatorial lower bound of SPEC section 7 on TEL (rounds), O(n log n).

    Request ``i`` occupies ``A_i = o_i s_i + o_i (o_i + 1) / 2`` token-rounds of KV cache. The
    ``k`` requests that complete first have used ``sum A`` token-rounds within rounds
    ``1 .. C_(k)``, at most ``M`` per round, so the ``k``-th smallest completion satisfies
    ``C_(k) >= ceil((sum of the k smallest A) / M)``; also ``C_(k) >= `` the ``k``-th smallest
    ``a_i + o_i`` (each ``C_i >= a_i + o_i``; sorting keeps a componentwise bound). Summing the
    larger of the two over ``k`` bounds ``sum C_i``.

    Offline (``a_i = 0``) this is exactly SPEC section 7. With arrivals we use
    ``TEL = sum C_i - sum a_i`` (ours: the same argument, arrivals only delay completions) and
    take the larger of that and :func:`trivial_bound`, so the bound is valid for every instance;
    with late arrivals it is often no better than ``sum o_i``. Rounds are counted from the
    earliest arrival (``a_i - min_j a_j``; no round before it holds a request, and the shift
    changes no TEL, SPEC section 9), so arrivals in epoch seconds give the same bound as the
    same instance starting at round 0.

    Returns
    -------
    int
        The bound in rounds.

    Notes
    -----
    Source: SPEC section 7 (arXiv 2508.06133); the arrival version is ours (argument above).
    """
    s = instance.prefill.astype(np.int64)
    o = instance.decode.astype(np.int64)
    a = instance.arrival.astype(np.int64)
    a = a - a.min()  # the time axis from the earliest arrival
    area = o * s + o * (o + 1) // 2  # token-rounds A_i
    k_area = np.cumsum(np.sort(area))
    by_area = -(-k_area // instance.memory)  # ceil(sum of the k smallest A / M)
    by_length = np.sort(a + o)  # k-th smallest a_i + o_i
    completions = int(np.maximum(by_area, by_length).sum())
    return max(completions - int(a.sum()), trivial_bound(instance))
