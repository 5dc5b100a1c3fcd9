"""Certify method ``local-search``: the list local search from the best schedule so far.

Source: ours (:func:`lpsched.policies.local_search.improve_schedule`).
"""

from __future__ import annotations

from ...instance import Instance
from ...policies.local_search import improve_schedule
from ...schedule import Schedule
from ...solvers.options import SolveOptions
from ...solvers.progress import Observer
from ..method import Method

__all__ = ["METHOD"]


def run(instance: Instance, schedule: Schedule, options: SolveOptions, observer: Observer) -> None:
    """Report the schedule of :func:`~lpsched.policies.local_search.improve_schedule` to
    ``observer``; the contract is :class:`~lpsched.certify.method.Method`."""
    better = improve_schedule(instance, schedule, seed=options.seed, time_limit=options.time_limit)
    observer.on_incumbent(better)


METHOD = Method(
    "local-search",
    "upper",
    "swaps and moves in the priority list of the best list schedule",
    run,
)
