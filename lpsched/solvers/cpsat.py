"""The CP-SAT back end (OR-Tools): the time-indexed model of SPEC section 3, run and mapped.

The cross-check of HiGHS.

Same columns and rows as :func:`~lpsched.formulations.time_indexed.time_indexed_matrix`: one
Boolean (or, aggregated, one integer in ``0..c_g``) per column, ``assign`` as equalities, one
linear ``memory[t] <= M`` per round, the TEL as objective. All coefficients are integers, so
CP-SAT's optimum is exact. Source: ours (OR-Tools CP-SAT, Perron and Didier).
"""

from __future__ import annotations

import time

import numpy as np

from ..formulations.time_indexed import TimeIndexedMatrix
from .result import Answer

__all__ = ["build_cpsat", "solve_mip"]


def build_cpsat(mat: TimeIndexedMatrix, start: np.ndarray | None = None):
    """A CP-SAT model of ``mat`` and its column variables.

    Parameters
    ----------
    mat : TimeIndexedMatrix
    start : ndarray, shape (ncol,), optional
        Integer column values of a feasible schedule, added as a solution hint.

    Returns
    -------
    model : ortools.sat.python.cp_model.CpModel
    x : list of IntVar, length ncol
    """
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    ub = mat.count[mat.col_unit].tolist()
    if mat.aggregated:
        x = [model.new_int_var(0, int(u), f"y_{c}") for c, u in enumerate(ub)]
    else:
        x = [model.new_bool_var(f"x_{c}") for c in range(mat.ncol)]
    rows: list[list[tuple[int, int]]] = [[] for _ in range(mat.nrow)]
    indptr, index, value = mat.indptr.tolist(), mat.index.tolist(), mat.value.tolist()
    for c in range(mat.ncol):
        for e in range(indptr[c], indptr[c + 1]):
            rows[index[e]].append((c, int(value[e])))
    U = mat.n_units
    for r, entries in enumerate(rows):
        if not entries:
            continue
        expr = sum(coef * x[c] for c, coef in entries)
        if r < U:
            model.add(expr == int(mat.count[r]))
        else:
            model.add(expr <= mat.instance.memory)
    model.minimize(sum(int(w) * x[c] for c, w in enumerate(mat.cost.tolist())))
    if start is not None:
        for c, v in enumerate(np.rint(start).astype(int).tolist()):
            model.add_hint(x[c], v)
    return model, x


def solve_mip(
    mat: TimeIndexedMatrix,
    *,
    start: np.ndarray | None = None,
    time_limit: float | None = None,
    mip_gap: float = 0.0,
    threads: int | None = None,
    verbose: bool = False,
) -> Answer:
    """Run CP-SAT on the model of ``mat`` and map its status.

    Parameters
    ----------
    mat : TimeIndexedMatrix
    start : ndarray, shape (ncol,), optional
        Column values of a feasible schedule, added as a hint.
    time_limit : float, optional
        Seconds (``max_time_in_seconds``).
    mip_gap : float
        ``relative_gap_limit``.
    threads : int, optional
        ``num_workers``.
    verbose : bool
        ``log_search_progress``.

    Returns
    -------
    Answer
        CP-SAT answers ``FEASIBLE`` or ``UNKNOWN`` when it stops unproven, and only a limit
        stops it, so with a time limit those are ``limit_reached``.
    """
    from ortools.sat.python import cp_model

    t0 = time.perf_counter()
    model, x = build_cpsat(mat, start=start)
    build_s = time.perf_counter() - t0
    s = cp_model.CpSolver()
    if time_limit is not None:
        s.parameters.max_time_in_seconds = float(time_limit)
    if threads is not None:
        s.parameters.num_workers = int(threads)
    s.parameters.relative_gap_limit = float(mip_gap)
    s.parameters.log_search_progress = bool(verbose)
    code = s.solve(model)
    sol = None
    if code in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        sol = mat.starts_from_values(np.array([s.value(v) for v in x], dtype=float))
    return Answer(
        start=sol,
        build_s=build_s,
        dual=float(s.best_objective_bound) if code != cp_model.INFEASIBLE else None,
        limit_reached=code in (cp_model.FEASIBLE, cp_model.UNKNOWN) and time_limit is not None,
        infeasible=code == cp_model.INFEASIBLE,
        status_text=s.status_name(code),
    )
