"""Solvers of the time-indexed model (SPEC section 3): one front door over the back ends.

* :mod:`.result` -- :class:`SolveStatus` (the one status enum of every result),
  :class:`ExactResult`, :class:`BoundResult`, the one mapping from a back end's
  :class:`~.result.Answer` to a result, and the interruptible run (Ctrl-C stops a solver;
  :class:`SolveInterrupted` carries what it found);
* :mod:`.options` -- :class:`~.options.SolveOptions` (checked once), the ``check_*`` helpers,
  the model-size limits and the shift of the time axis by the earliest arrival;
* :mod:`.progress` -- :class:`~.progress.Observer` (``on_incumbent`` / ``on_bound``), and
  :class:`~.progress.Progress`, the observer that shows the solver log and the incumbent /
  bound / gap line (nothing is printed without one);
* :mod:`.backends` -- :mod:`~.backends.highs`, :mod:`~.backends.cpsat`,
  :mod:`~.backends.pyomo`: each builds, runs and maps its own status;
* :mod:`.solve` -- :func:`solve_exact`, :func:`solve_lp`, :func:`lp_bound`,
  :func:`export_model` and the back-end registry :data:`SOLVERS`.

The certified gaps and their methods are :mod:`lpsched.certify`, above this package.
"""

from .result import (
    BoundResult,
    ExactResult,
    LPSolution,
    LPTooLargeError,
    SolveInterrupted,
    SolveStatus,
)
from .solve import SOLVERS, export_model, lp_bound, solve_exact, solve_lp

__all__ = [
    "SolveStatus",
    "ExactResult",
    "BoundResult",
    "LPSolution",
    "LPTooLargeError",
    "SolveInterrupted",
    "SOLVERS",
    "solve_exact",
    "solve_lp",
    "lp_bound",
    "export_model",
]
