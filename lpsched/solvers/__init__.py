"""Solvers of the time-indexed model (SPEC section 3): one module per back end, one front door.

* :mod:`.result` -- :class:`SolveStatus`, :class:`ExactResult`, :class:`BoundResult`, the one
  mapping from a back end's :class:`~.result.Answer` to a result, and the interruptible run
  (Ctrl-C stops a solver; :class:`SolveInterrupted` carries what it found);
* :mod:`.highs`, :mod:`.cpsat`, :mod:`.pyomo` -- each builds, runs and maps its own status;
* :mod:`.solve` -- :func:`solve_exact`, :func:`solve_lp`, :func:`lp_bound`, :func:`best_bound`,
  :func:`export_model`, the back-end registry :data:`SOLVERS` and the model-size limits;
* :mod:`.progress` -- :class:`~.progress.Progress`: the solver log and the incumbent / bound /
  gap line that every back end feeds (nothing is printed without one);
* :mod:`.certify` -- :func:`~.certify.certify` (``lpsched.certify``): the best schedule, the
  best valid lower bound and the gap at any size, from the methods of :mod:`.lns`,
  :mod:`.cpsat_intervals`, :mod:`.partial_integrality` and :mod:`.colgen`
  (:mod:`.window_configuration`: the research relaxation of the README);
* :mod:`.cache` -- exact optima of small instances, memoised.
"""

from .result import (
    BoundResult,
    ExactResult,
    LPSolution,
    LPTooLargeError,
    SolveInterrupted,
    SolveStatus,
)
from .solve import SOLVERS, best_bound, export_model, lp_bound, solve_exact, solve_lp

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
    "best_bound",
    "export_model",
]
