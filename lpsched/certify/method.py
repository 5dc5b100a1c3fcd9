"""The contract of a certify method: one :class:`Method`, run on the best schedule so far.

A method improves the upper side (a better schedule), the lower side (a better valid lower
bound on the optimal TEL) or both. The driver :func:`lpsched.certify.solve` runs the methods of
a plan (:mod:`lpsched.certify.plan`, or a tuple of names) one after the other within one
wall-clock budget; ``lpsched bound --method NAME`` runs one lower-side method alone. Every
method is an entry of :data:`lpsched.certify.methods.METHODS`; a new one is one module in
``certify/methods/`` and one line there (``docs/architecture.md``, "A bound method").

Source: ours (one home and one signature for every method).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..instance import Instance
from ..schedule import Schedule
from ..solvers.options import SolveOptions
from ..solvers.progress import Observer

__all__ = ["Method", "SIDES", "solver_options"]

#: What a method improves: ``lower`` (bounds), ``upper`` (schedules) or ``both``.
SIDES = ("lower", "upper", "both")
#: A method's name: lower-case letters, digits and inner hyphens (a command-line choice).
_NAME = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*")


@dataclass(frozen=True)
class Method:
    """One certify method: its name, the side it improves, and how to run it.

    Attributes
    ----------
    name : str
        The name in the plans, in ``lpsched bound --method`` and in the certify log.
    side : {"lower", "upper", "both"}
        What it improves (:data:`SIDES`); ``lower`` and ``both`` methods are choices of
        ``lpsched bound --method``.
    summary : str
        One line for the command line's help and the docs.
    run : callable
        ``run(instance, schedule, options, observer) -> None``:

        * ``instance`` -- the :class:`~lpsched.instance.Instance`, arrivals shifted to start
          at round 0 (:func:`~lpsched.solvers.options.shift_arrivals`);
        * ``schedule`` -- a feasible :class:`~lpsched.schedule.Schedule` of it, the best so
          far (its TEL fixes the tight horizon, SPEC section 3);
        * ``options`` -- :class:`~lpsched.solvers.options.SolveOptions`: ``time_limit`` is the
          method's budget in seconds (None: run to its end), ``threads``, ``seed``;
        * ``observer`` -- :class:`~lpsched.solvers.progress.Observer`: the method reports each
          better schedule to ``on_incumbent`` and each better valid lower bound (rounds) to
          ``on_bound`` as it finds them, and solver log lines to ``log``.

        It returns None, or a dict of facts about its run that the driver adds to the
        result's ``info`` (``horizon``: the ``T`` of its model, in rounds; ``status``: how
        it ended, a :class:`~lpsched.solvers.result.SolveStatus` value; the model size; the
        solver): what it found went to the observer. A method that Ctrl-C stopped returns
        its facts with ``status`` ``interrupted``, or raises ``KeyboardInterrupt`` after
        reporting what it found. It may raise
        :class:`~lpsched.solvers.result.LPTooLargeError`, ``ValueError``, ``RuntimeError`` or
        ``MemoryError`` (recorded as the method's failure; the next method runs) and
        ``KeyboardInterrupt`` on Ctrl-C, after reporting what it found.
    needs_schedule : bool, default True
        False when the method ignores ``schedule``: ``lpsched bound`` then skips the list
        policies that give one.

    Raises
    ------
    ValueError
        A ``name`` that is not lower-case letters, digits and inner hyphens (or is ``auto``,
        the rule of ``lpsched bound``), an unknown ``side``, a ``run`` that is not callable or
        a ``needs_schedule`` that is not a bool.
    """

    name: str
    side: str
    summary: str
    run: Callable[[Instance, Schedule, SolveOptions, Observer], dict[str, Any] | None]
    needs_schedule: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.fullmatch(self.name) or self.name == "auto":
            raise ValueError(
                "a method's name is lower-case letters, digits and inner hyphens, and not "
                f"'auto', got {self.name!r}"
            )
        if not isinstance(self.side, str) or self.side not in SIDES:
            raise ValueError(
                f"method {self.name!r}: side must be one of {', '.join(SIDES)}, got {self.side!r}"
            )
        if not callable(self.run):
            raise ValueError(f"method {self.name!r}: run must be callable, got {self.run!r}")
        if not isinstance(self.needs_schedule, bool):
            raise ValueError(
                f"method {self.name!r}: needs_schedule must be a bool, got {self.needs_schedule!r}"
            )

    @property
    def bounds(self) -> bool:
        """True for a method that proves lower bounds (``lower`` or ``both``)."""
        return self.side in ("lower", "both")


def solver_options(options: SolveOptions, observer: Observer) -> dict[str, Any]:
    """What a method hands its solver from the driver: the budget and the observer.

    Parameters
    ----------
    options : SolveOptions
        The method's options (``time_limit``: its budget in seconds, None for none;
        ``threads``).
    observer : Observer
        The driver's observer, which the solver reports to as it finds.

    Returns
    -------
    dict
        ``{"time_limit", "threads", "observer"}``: the keyword options of the solvers of
        ``lns``, ``lp-colgen``, ``cpsat-intervals`` and ``partial-integrality``.

    Notes
    -----
    Source: ours.
    """
    return {"time_limit": options.time_limit, "threads": options.threads, "observer": observer}
