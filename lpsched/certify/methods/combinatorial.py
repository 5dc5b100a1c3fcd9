"""Certify method ``combinatorial``: the combinatorial lower bound of SPEC section 7.

Source: SPEC section 7 (:func:`lpsched.bounds.combinatorial_bound`); ours as a method.
"""

from __future__ import annotations

from ...bounds import combinatorial_bound
from ...instance import Instance
from ...schedule import Schedule
from ...solvers.options import SolveOptions
from ...solvers.progress import Observer
from ..method import Method

__all__ = ["METHOD"]


def run(instance: Instance, schedule: Schedule, options: SolveOptions, observer: Observer) -> None:
    """Report :func:`~lpsched.bounds.combinatorial_bound` (rounds) to ``observer``; the
    contract is :class:`~lpsched.certify.method.Method`."""
    observer.on_bound(float(combinatorial_bound(instance)))


METHOD = Method(
    "combinatorial",
    "lower",
    "the combinatorial bound of SPEC section 7 (milliseconds at any size)",
    run,
    needs_schedule=False,
)
