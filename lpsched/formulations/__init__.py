"""Mathematical models of the KV-cache batch scheduling problem (SPEC section 3).

* :mod:`.horizon` -- the horizon ``T = min(T1, T2)`` and the start windows, with their argument
  (pure functions of an upper-bound schedule they are given);
* :mod:`.time_indexed` -- the time-indexed MIP: the Pyomo model (:func:`build_model`,
  ``relax=True`` for the LP relaxation) and the same model as a sparse matrix
  (:func:`time_indexed_matrix`);
* :mod:`.cuts` -- valid inequalities on the memory rows (GUB covers).

The solvers that run these models are in :mod:`lpsched.solvers`. Every formulation is written out
in ``models/README.md`` with the names used here.
"""

from .horizon import (
    Horizon,
    HorizonError,
    horizon_line,
    horizon_t1,
    horizon_t2,
    min_horizon,
    start_windows,
    tight_horizon,
)
from .time_indexed import (
    TimeIndexedMatrix,
    build_model,
    matrix_size,
    starts_from_pyomo,
    time_indexed_matrix,
)

__all__ = [
    "Horizon",
    "HorizonError",
    "horizon_line",
    "horizon_t1",
    "horizon_t2",
    "min_horizon",
    "start_windows",
    "tight_horizon",
    "TimeIndexedMatrix",
    "build_model",
    "matrix_size",
    "starts_from_pyomo",
    "time_indexed_matrix",
]
