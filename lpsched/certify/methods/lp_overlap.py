"""Certify method ``lp-overlap``: the LP relaxation lifted by rounds of overlap cuts.

The LP of SPEC section 3 at the tight horizon of the best schedule, then rounds of the overlap
cuts of SPEC section 3.1 (:mod:`lpsched.formulations.overlap`), each round re-solved from the
last basis; every round's LP value is a lower bound on the optimal TEL (the cuts hold for
every schedule) and is reported as soon as it is found, so the method can stop at any time.
Where a few requests fill the KV cache it is the LP's value plus what the cuts add; where
no pair of requests is limited in how long it can run together no cut is found and it is the
LP.

Source: ours (SPEC section 3.1).
"""

from __future__ import annotations

import time
from typing import Any

from ...formulations.horizon import tight_horizon
from ...formulations.time_indexed import time_indexed_matrix
from ...instance import Instance
from ...schedule import Schedule
from ...solvers.backends.highs import add_cover_cuts, build_highs
from ...solvers.options import LP_MAX_NONZEROS, SolveOptions, check_size, shift_arrivals
from ...solvers.progress import Observer
from ..method import Method

__all__ = ["METHOD", "LP_OVERLAP_ROUNDS"]

#: Most rounds of overlap cuts (the loop also stops when the LP rises by less than 1e-4).
LP_OVERLAP_ROUNDS = 100


def run(
    instance: Instance, schedule: Schedule, options: SolveOptions, observer: Observer
) -> dict[str, Any]:
    """Report the LP value, then its value after each round of overlap cuts (rounds), to
    ``observer``; the contract is :class:`~lpsched.certify.method.Method`.

    ``options.method_options["lp-overlap"]`` may give ``rounds`` (default
    :data:`LP_OVERLAP_ROUNDS`).

    Returns
    -------
    dict
        ``horizon``, ``status`` (``time-limit`` when the limit stopped the loop), ``cuts``,
        ``cut_rounds``, ``lp_before``, ``lp_after`` and the model size.

    Raises
    ------
    LPTooLargeError
        Above ``options.max_nonzeros`` (None:
        :data:`~lpsched.solvers.options.LP_MAX_NONZEROS`), before anything is solved.
    KeyboardInterrupt
        Ctrl-C during an LP solve, after the values found were reported.
    """
    t0 = time.perf_counter()
    deadline = None if options.time_limit is None else t0 + options.time_limit
    rounds = int(options.method_options.get("lp-overlap", {}).get("rounds", LP_OVERLAP_ROUNDS))
    shifted, shift = shift_arrivals(instance)
    sched = Schedule(shifted, schedule.start - shift).check()
    hz = tight_horizon(shifted, sched)
    limit = LP_MAX_NONZEROS if options.max_nonzeros is None else options.max_nonzeros
    check_size(shifted, hz.T, hz.slack, limit)
    mat = time_indexed_matrix(shifted, hz, aggregate=True)
    h = build_highs(mat, relax=True, threads=options.threads)
    info = add_cover_cuts(
        h, mat, rounds=0, overlap=rounds, deadline=deadline, on_value=observer.on_bound
    )
    stopped = deadline is not None and time.perf_counter() >= deadline
    return info | {
        "horizon": hz.T,
        "status": "time-limit" if stopped else "bound",
        "columns": mat.ncol,
        "nonzeros": mat.nnz,
    }


METHOD = Method(
    "lp-overlap",
    "lower",
    "the LP relaxation lifted by rounds of overlap cuts (SPEC section 3.1); every round's "
    "value is a bound",
    run,
)
