"""The time-indexed model (SPEC section 3) handed to HiGHS directly through highspy.

The matrix comes from :func:`~lpsched.formulations.time_indexed.time_indexed_matrix`; this module
only fills a ``HighsLp`` and sets options, so there is no second copy of a constraint.
Source: ours (HiGHS: Huangfu and Hall, Math. Prog. Comp. 2018; highspy API).
"""

from __future__ import annotations

import numpy as np

from .time_indexed import TimeIndexedMatrix

__all__ = ["build_highs"]


def build_highs(
    mat: TimeIndexedMatrix,
    *,
    relax: bool = False,
    time_limit: float | None = None,
    mip_gap: float = 0.0,
    threads: int | None = None,
    verbose: bool = False,
    start: np.ndarray | None = None,
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
    start : ndarray of float, shape (ncol,), optional
        A feasible integer column vector given to HiGHS as the MIP start.

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
    if start is not None and not relax:
        idx = np.flatnonzero(start).astype(np.int32)
        h.setSolution(int(idx.size), idx, np.asarray(start, dtype=np.float64)[idx])
    return h
