"""The HiGHS back end (highspy): builds the time-indexed model, runs it, maps its status.

The matrix comes from :func:`~lpsched.formulations.time_indexed.time_indexed_matrix`; this module
only fills a ``HighsLp`` and sets options, so there is no second copy of a constraint. It owns
the MIP run (:func:`solve_mip`, with the optional cover-cut loop of
:mod:`lpsched.formulations.cuts`), the LP relaxation (:func:`solve_lp`) and the LP/MPS writer
(:func:`write_model`).
Source: ours (HiGHS: Huangfu and Hall, Math. Prog. Comp. 2018; highspy API).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ..formulations.cuts import MemoryRows, separate_cover_cuts
from ..formulations.time_indexed import TimeIndexedMatrix
from .result import Answer

__all__ = ["build_highs", "set_start", "add_cover_cuts", "solve_mip", "solve_lp", "write_model"]


def build_highs(
    mat: TimeIndexedMatrix,
    *,
    relax: bool = False,
    time_limit: float | None = None,
    mip_gap: float = 0.0,
    threads: int | None = None,
    verbose: bool = False,
):
    """A ``highspy.Highs`` holding the model, ready to ``run()``.

    Parameters
    ----------
    mat : TimeIndexedMatrix
    relax : bool, default False
        Continuous columns (the LP relaxation) instead of integer ones.
    time_limit : float, optional
        Seconds of wall time for ``run()``.
    mip_gap : float, default 0.0
        Relative MIP gap at which HiGHS stops. With 0 the absolute gap is set just below 1,
        which proves optimality because the TEL is an integer.
    threads : int, optional
        HiGHS ``threads`` option.
    verbose : bool, default False
        HiGHS log on stdout.

    Returns
    -------
    highspy.Highs
    """
    import highspy

    h = highspy.Highs()
    h.setOptionValue("output_flag", bool(verbose))
    if time_limit is not None:
        h.setOptionValue("time_limit", float(time_limit))
    if threads is not None:
        # HiGHS keeps one thread pool per process, sized by the first solve; a later solve that
        # asks for another size fails ("Not Set") unless the pool is reset first.
        highspy.Highs.resetGlobalScheduler(True)
        h.setOptionValue("threads", int(threads))
    if not relax:
        h.setOptionValue("mip_rel_gap", float(mip_gap))
        if mip_gap == 0.0:
            h.setOptionValue("mip_abs_gap", 1.0 - 1e-6)
    lp = highspy.HighsLp()
    lp.num_col_ = mat.ncol
    lp.num_row_ = mat.nrow
    lp.col_cost_ = mat.cost
    lp.col_lower_ = np.zeros(mat.ncol)
    lp.col_upper_ = mat.count[mat.col_unit].astype(np.float64)
    lp.row_lower_ = mat.row_lower
    lp.row_upper_ = mat.row_upper
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.num_col_ = mat.ncol
    lp.a_matrix_.num_row_ = mat.nrow
    lp.a_matrix_.start_ = mat.indptr.astype(np.int32)
    lp.a_matrix_.index_ = mat.index
    lp.a_matrix_.value_ = mat.value
    if not relax:
        lp.integrality_ = [highspy.HighsVarType.kInteger] * mat.ncol
    h.passModel(lp)
    return h


def set_start(h, start: np.ndarray) -> None:
    """Give HiGHS the integer column vector ``start`` (shape (ncol,)) as its MIP start."""
    idx = np.flatnonzero(start).astype(np.int32)
    h.setSolution(int(idx.size), idx, np.asarray(start, dtype=np.float64)[idx])


def add_cover_cuts(h, mat: TimeIndexedMatrix, rounds: int = 30, tol: float = 1e-4) -> dict:
    """Cut loop on the LP relaxation held by the ``highspy.Highs`` object ``h``.

    Solves the LP (columns relaxed temporarily), separates GUB-cover cuts, adds them as rows,
    re-solves, for at most ``rounds`` rounds or until the LP value rises by less than ``tol``
    (relative) in a round; then restores the integrality of ``mat``'s columns. The cuts are
    valid for every schedule (module docstring), so the MIP optimum is unchanged.

    Returns
    -------
    dict
        ``cuts`` (number added), ``cut_rounds``, ``lp_before`` and ``lp_after`` (LP values).
    """
    import highspy

    integrality = [highspy.HighsVarType.kInteger] * mat.ncol
    idx = np.arange(mat.ncol, dtype=np.int32)
    h.changeColsIntegrality(mat.ncol, idx, np.array([highspy.HighsVarType.kContinuous] * mat.ncol))
    rows = MemoryRows(mat)
    info: dict[str, Any] = {"cuts": 0, "cut_rounds": 0, "lp_before": None, "lp_after": None}
    try:
        h.run()
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return info
        val = h.getInfo().objective_function_value
        info["lp_before"] = info["lp_after"] = val
        for r in range(rounds):
            cuts = separate_cover_cuts(rows, np.asarray(h.getSolution().col_value))
            if not cuts:
                break
            for cols, rhs in cuts:
                h.addRow(-highspy.kHighsInf, float(rhs), int(cols.size), cols, np.ones(cols.size))
            info["cuts"] += len(cuts)
            info["cut_rounds"] = r + 1
            h.run()
            if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
                break
            new = h.getInfo().objective_function_value
            info["lp_after"] = new
            if new - val <= tol * max(1.0, abs(val)):
                break
            val = new
    finally:
        h.changeColsIntegrality(mat.ncol, idx, np.array(integrality))
    return info


def solve_mip(
    mat: TimeIndexedMatrix,
    *,
    start: np.ndarray | None = None,
    time_limit: float | None = None,
    mip_gap: float = 0.0,
    threads: int | None = None,
    verbose: bool = False,
    cover_cuts: int = 0,
) -> Answer:
    """Run HiGHS branch and cut on the MIP of ``mat`` and map its status.

    Parameters
    ----------
    mat : TimeIndexedMatrix
    start : ndarray, shape (ncol,), optional
        Column values of a feasible schedule, the MIP start.
    time_limit, mip_gap, threads, verbose
        See :func:`build_highs`.
    cover_cuts : int, default 0
        Rounds of the cover-cut loop (:func:`add_cover_cuts`) before the MIP; 0 = none.

    Returns
    -------
    Answer
        Starts of the incumbent, HiGHS' dual bound, whether a limit stopped it; HiGHS' load,
        model, presolve, solve and postsolve failures become ``error``.
    """
    import highspy

    t0 = time.perf_counter()
    h = build_highs(mat, time_limit=time_limit, mip_gap=mip_gap, threads=threads, verbose=verbose)
    info: dict = {}
    if cover_cuts:
        info.update(add_cover_cuts(h, mat, rounds=cover_cuts))
    if start is not None:
        set_start(h, start)
    build_s = time.perf_counter() - t0
    h.run()
    st = h.getModelStatus()
    hinfo = h.getInfo()
    info["nodes"] = int(hinfo.mip_node_count)
    text = h.modelStatusToString(st)
    sol = None
    if hinfo.primal_solution_status == 2:  # kSolutionStatusFeasible
        sol = mat.starts_from_values(np.asarray(h.getSolution().col_value))
    MS = highspy.HighsModelStatus
    failed = st in (
        MS.kNotset,
        MS.kLoadError,
        MS.kModelError,
        MS.kPresolveError,
        MS.kSolveError,
        MS.kPostsolveError,
        MS.kUnknown,
    )
    limits = (
        MS.kTimeLimit,
        MS.kInterrupt,
        MS.kIterationLimit,
        MS.kSolutionLimit,
        MS.kMemoryLimit,
        MS.kHighsInterrupt,  # type: ignore[attr-defined]  # at runtime; absent from highspy's stubs
    )
    return Answer(
        start=sol,
        build_s=build_s,
        dual=float(hinfo.mip_dual_bound) if st != MS.kInfeasible else None,
        limit_reached=st in limits,
        infeasible=st == MS.kInfeasible,
        error=f"HiGHS stopped with status '{text}'" if failed else None,
        status_text=text,
        info=info,
    )


def solve_lp(mat: TimeIndexedMatrix, time_limit: float | None = None) -> tuple[float, np.ndarray]:
    """Solve the LP relaxation of ``mat`` with HiGHS.

    Returns
    -------
    value : float
        The LP optimum (rounds).
    x : ndarray of float, shape (ncol,)
        Its column values.

    Raises
    ------
    RuntimeError
        HiGHS did not reach an optimal LP solution (e.g. time limit), naming the status.
    """
    import highspy

    h = build_highs(mat, relax=True, time_limit=time_limit)
    h.run()
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        raise RuntimeError(
            f"{mat.instance.name}: LP relaxation not solved: "
            f"{h.modelStatusToString(h.getModelStatus())}"
        )
    return float(h.getInfo().objective_function_value), np.asarray(h.getSolution().col_value)


def write_model(mat: TimeIndexedMatrix, path: str, *, relax: bool = False) -> None:
    """Write the model of ``mat`` (the MIP, or with ``relax`` its LP relaxation) with HiGHS'
    own writer; the format follows the suffix of ``path`` (``.lp`` or ``.mps``)."""
    h = build_highs(mat, relax=relax)
    h.writeModel(str(path))
