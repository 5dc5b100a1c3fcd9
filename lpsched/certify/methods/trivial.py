"""Certify method ``trivial``: every request runs at least its decode length, TEL >= sum o_i.

Source: SPEC section 7 (:func:`lpsched.bounds.trivial_bound`); ours as a method.
"""

from __future__ import annotations

from ...bounds import trivial_bound
from ...instance import Instance
from ...schedule import Schedule
from ...solvers.options import SolveOptions
from ...solvers.progress import Observer
from ..method import Method

__all__ = ["METHOD"]


def run(instance: Instance, schedule: Schedule, options: SolveOptions, observer: Observer) -> None:
    """Report :func:`~lpsched.bounds.trivial_bound` (rounds) to ``observer``; the contract is
    :class:`~lpsched.certify.method.Method`."""
    observer.on_bound(float(trivial_bound(instance)))


METHOD = Method("trivial", "lower", "sum of the decode lengths o_i", run, needs_schedule=False)
