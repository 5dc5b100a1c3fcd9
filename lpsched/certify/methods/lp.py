"""Certify method ``lp``: the LP relaxation of the time-indexed model, solved whole by HiGHS.

Source: SPEC section 3 (:func:`lpsched.solvers.solve.lp_bound`); ours as a method.
"""

from __future__ import annotations

from ...formulations.horizon import tight_horizon
from ...instance import Instance
from ...schedule import Schedule
from ...solvers.options import SolveOptions
from ...solvers.progress import Observer
from ...solvers.solve import lp_bound
from ..method import Method

__all__ = ["METHOD"]


def run(instance: Instance, schedule: Schedule, options: SolveOptions, observer: Observer) -> None:
    """Report the LP value at the tight horizon of ``schedule`` (rounds) to ``observer``; the
    contract is :class:`~lpsched.certify.method.Method`.

    Raises
    ------
    LPTooLargeError
        The model has more than ``options.max_nonzeros`` non-zeros (default
        :data:`~lpsched.solvers.options.LP_MAX_NONZEROS`).
    RuntimeError
        HiGHS did not solve the LP within ``options.time_limit``.
    """
    res = lp_bound(
        instance,
        tight_horizon(instance, schedule).T,
        max_nonzeros=options.max_nonzeros,
        time_limit=options.time_limit,
        progress=observer,
    )
    observer.on_bound(res.bound)


METHOD = Method(
    "lp",
    "lower",
    "the LP relaxation of the time-indexed model, built whole and solved by HiGHS",
    run,
)
