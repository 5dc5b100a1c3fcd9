"""The time-indexed model (SPEC section 3) in OR-Tools CP-SAT, the cross-check of HiGHS.

Same columns and rows as :func:`~lpsched.formulations.time_indexed.time_indexed_matrix`: one
Boolean (or, aggregated, one integer in ``0..c_g``) per column, ``assign`` as equalities, one
linear ``memory[t] <= M`` per round, the TEL as objective. All coefficients are integers, so
CP-SAT's optimum is exact. Source: ours (OR-Tools CP-SAT, Perron and Didier).
"""

from __future__ import annotations

import numpy as np

from .time_indexed import TimeIndexedMatrix

__all__ = ["build_cpsat"]


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
