"""Certify method ``mip``: HiGHS on the full time-indexed MIP, started from the best schedule.

Source: SPEC section 3 (:func:`lpsched.solvers.solve.solve_exact`); ours as a method.
"""

from __future__ import annotations

from ...instance import Instance
from ...schedule import Schedule
from ...solvers.options import SolveOptions
from ...solvers.progress import Observer
from ...solvers.result import SolveInterrupted
from ...solvers.solve import solve_exact
from ..method import Method

__all__ = ["METHOD"]


def run(instance: Instance, schedule: Schedule, options: SolveOptions, observer: Observer) -> None:
    """Report HiGHS' incumbent and dual bound to ``observer``; the contract is
    :class:`~lpsched.certify.method.Method`.

    Raises
    ------
    SolveInterrupted
        Ctrl-C, after the best schedule and bound so far were reported.
    """
    try:
        res = solve_exact(
            instance,
            "highs",
            options.time_limit,
            schedule=schedule,
            threads=options.threads,
            max_nonzeros=options.max_nonzeros,
            progress=observer,
        )
    except SolveInterrupted as exc:
        _report(exc.result, observer)
        raise
    _report(res, observer)


def _report(res, observer: Observer) -> None:
    if res.schedule is not None:
        observer.on_incumbent(res.schedule)
    observer.on_bound(res.bound)


METHOD = Method(
    "mip",
    "both",
    "HiGHS on the full time-indexed MIP from the best schedule: its incumbent and dual bound",
    run,
)
