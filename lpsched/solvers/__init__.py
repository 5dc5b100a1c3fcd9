"""Solvers of the time-indexed model (SPEC section 3): the toolkit below the policies.

Every function here starts from a schedule or a horizon the caller gives; nothing here runs a
policy (the driver :func:`lpsched.certify.solve` finds the upper-bound schedule first).

* :mod:`.result` -- :class:`SolveStatus` and :class:`Result` (the one status and the one result
  of every solve), the mapping from a back end's :class:`~.result.Answer` to a result, and the
  interruptible run (Ctrl-C stops a solver and keeps what it found);
* :mod:`.options` -- :class:`SolveOptions` (checked once), the ``check_*`` helpers, the
  model-size limits and the shift of the time axis by the earliest arrival;
* :mod:`.progress` -- :class:`~.progress.Observer` (``on_incumbent`` / ``on_bound``), and
  :class:`~.progress.Progress`, the observer that shows the solver log and the incumbent /
  bound / gap line (nothing is printed without one);
* :mod:`.backends` -- :mod:`~.backends.highs`, :mod:`~.backends.cpsat`,
  :mod:`~.backends.pyomo`: each builds, runs and maps its own status;
* :mod:`.solve` -- :func:`~.solve.solve_time_indexed` (the MIP), :func:`~.solve.solve_relaxation`
  and :func:`~.solve.relaxation_bound` (the LP), :func:`~.solve.write_model`, and the back-end
  registry :data:`~.solve.SOLVERS`;
* :mod:`.pricing`, :mod:`.colgen`, :mod:`.aggregated` -- the LP by column generation, round by
  round and over windows of rounds (the anytime Lagrangian bounds).

The certify methods (:mod:`lpsched.certify.methods`) use the names of this package only: the
solves above, and for a model of their own the back ends' building blocks (HiGHS:
:func:`~.backends.highs.new_highs`, :func:`~.backends.highs.build_highs`,
:func:`~.backends.highs.set_start`,
:func:`~.backends.highs.run_highs`; CP-SAT: :func:`~.backends.cpsat.build_cpsat`,
:func:`~.backends.cpsat.configure_solver`, :func:`~.backends.cpsat.solution_callback`,
:class:`~.backends.cpsat.BuildTimeout`; and :func:`~.result.run_interruptible`).
"""

from .backends.cpsat import BuildTimeout, build_cpsat, configure_solver, solution_callback
from .backends.highs import build_highs, new_highs, run_highs, set_start
from .options import SolveOptions
from .result import Event, LPSolution, LPTooLargeError, Result, SolveStatus, run_interruptible
from .solve import (
    SOLVERS,
    relaxation_bound,
    solve_relaxation,
    solve_time_indexed,
    write_model,
)

__all__ = [
    "SolveStatus",
    "Result",
    "Event",
    "SolveOptions",
    "LPSolution",
    "LPTooLargeError",
    "SOLVERS",
    "solve_time_indexed",
    "solve_relaxation",
    "relaxation_bound",
    "write_model",
    "build_highs",
    "new_highs",
    "set_start",
    "run_highs",
    "build_cpsat",
    "configure_solver",
    "solution_callback",
    "BuildTimeout",
    "run_interruptible",
]
