"""The CP-SAT back end (OR-Tools): the time-indexed model of SPEC section 3, run and mapped.

The cross-check of HiGHS.

Same columns and rows as :func:`~lpsched.formulations.time_indexed.time_indexed_matrix`: one
Boolean (or, aggregated, one integer in ``0..c_g``) per column, ``assign`` as equalities, one
linear ``memory[t] <= M`` per round, the TEL as objective. All coefficients are integers, so
CP-SAT's optimum is exact. The model is written straight into CP-SAT's ``CpModelProto`` row by
row from the column-wise matrix (no Python expression objects), with a deadline, so that the
time limit covers the build too; the run goes through
:func:`~lpsched.solvers.result.run_interruptible` (``CpSolver.solve`` releases the GIL) and
Ctrl-C calls ``stop_search``. A :class:`~lpsched.solvers.progress.Progress` receives CP-SAT's log
(``log_callback``, with ``log_to_stdout`` off), every solution (a solution callback) and every
new bound (``best_bound_callback``); :func:`configure_solver` and :func:`solution_callback` are
that set-up, shared with :mod:`.cpsat_intervals`. Source: ours (OR-Tools CP-SAT, Perron and
Didier).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable

import numpy as np

from ...formulations.time_indexed import TimeIndexedMatrix
from ..progress import Observer
from ..result import Answer, run_interruptible

__all__ = ["BuildTimeout", "build_cpsat", "configure_solver", "solution_callback", "solve_mip"]

#: Rows (or variables) written between two looks at the deadline.
_CHECK_EVERY = 2048


class BuildTimeout(TimeoutError):
    """The CP-SAT model was not finished by the deadline. Source: ours."""


def _past(deadline: float | None) -> bool:
    return deadline is not None and time.perf_counter() >= deadline


def build_cpsat(
    mat: TimeIndexedMatrix, start: np.ndarray | None = None, *, deadline: float | None = None
):
    """A CP-SAT model of ``mat``: variable ``c`` is column ``c``.

    Parameters
    ----------
    mat : TimeIndexedMatrix
    start : ndarray, shape (ncol,), optional
        Integer column values of a feasible schedule, added as a solution hint.
    deadline : float, optional
        ``time.perf_counter()`` value by which the model must be built.

    Returns
    -------
    ortools.sat.python.cp_model.CpModel
        Variables ``0 .. ncol - 1`` in column order (Booleans, or integers ``0..c_u`` when
        aggregated); rows ``assign`` (``== c_u``) and ``memory`` (``0 .. M``); the TEL.

    Raises
    ------
    BuildTimeout
        The deadline passed before the model was complete.

    Notes
    -----
    O(nnz): the column-wise matrix is turned row-wise with one stable sort. Source: ours.
    """
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    proto = model.proto
    ub = mat.count[mat.col_unit].tolist()
    for c, u in enumerate(ub):
        proto.variables.add().domain.extend([0, int(u)])
        if c % _CHECK_EVERY == 0 and _past(deadline):
            raise BuildTimeout(f"CP-SAT model: {c:,} of {mat.ncol:,} variables by the deadline")
    col_of = np.repeat(np.arange(mat.ncol, dtype=np.int64), np.diff(mat.indptr))
    order = np.argsort(mat.index, kind="stable")
    row_cols = col_of[order]
    row_coef = np.rint(mat.value[order]).astype(np.int64)
    cut = np.searchsorted(mat.index[order], np.arange(mat.nrow + 1)).tolist()
    U = mat.n_units
    M = int(mat.instance.memory)
    for r in range(mat.nrow):
        a, b = cut[r], cut[r + 1]
        if a == b:
            continue
        lin = proto.constraints.add().linear
        lin.vars.extend(row_cols[a:b].tolist())
        lin.coeffs.extend(row_coef[a:b].tolist())
        lin.domain.extend([int(mat.count[r])] * 2 if r < U else [0, M])
        if r % _CHECK_EVERY == 0 and _past(deadline):
            raise BuildTimeout(f"CP-SAT model: {r:,} of {mat.nrow:,} rows by the deadline")
    proto.objective.vars.extend(range(mat.ncol))
    proto.objective.coeffs.extend(np.rint(mat.cost).astype(np.int64).tolist())
    if start is not None:
        hint = np.rint(start).astype(np.int64)
        proto.solution_hint.vars.extend(range(mat.ncol))
        proto.solution_hint.values.extend(hint.tolist())
    return model


def configure_solver(
    solver,
    *,
    remaining: float | None,
    threads: int | None,
    mip_gap: float = 0.0,
    verbose: bool = False,
    progress: Observer | None = None,
    on_bound: Callable[[float], None] | None = None,
    work_limit: float | None = None,
) -> None:
    """Set up a ``CpSolver`` as every lpsched CP-SAT run is: limits, workers, log, bound feed.

    Parameters
    ----------
    solver : ortools.sat.python.cp_model.CpSolver
    remaining : float or None
        ``max_time_in_seconds`` (seconds), None for no limit.
    threads : int or None
        ``num_workers`` (None: CP-SAT's choice, its full portfolio on every core).
    mip_gap : float
        ``relative_gap_limit``.
    verbose : bool
        ``log_search_progress`` on the standard output (without ``progress``).
    progress : Observer, optional
        Receives the log (when its ``log`` is on) and each new bound.
    on_bound : callable, optional
        Called with each bound CP-SAT reports (``best_bound_callback``, rounds).
    work_limit : float, optional
        ``max_deterministic_time`` (CP-SAT's deterministic seconds, a count of its work that
        does not depend on the machine's load; the search is deterministic with one worker).

    Notes
    -----
    CP-SAT's own SIGINT handler aborts the process when the solve runs in a worker thread
    (``std::bad_function_call``), so it is off: Python's handler and ``stop_search`` do the job
    (:func:`~lpsched.solvers.result.run_interruptible`). Source: ours.
    """
    p = solver.parameters
    if remaining is not None:
        p.max_time_in_seconds = float(remaining)
    if work_limit is not None:
        p.max_deterministic_time = float(work_limit)
    if threads is not None:
        p.num_workers = int(threads)
    p.relative_gap_limit = float(mip_gap)
    p.log_search_progress = bool(verbose)
    p.catch_sigint_signal = False
    if progress is not None:
        p.log_search_progress = progress.log_enabled
        p.log_to_stdout = False
        solver.log_callback = progress.log_line
    if progress is not None or on_bound is not None:

        def bound_feed(b: float) -> None:
            if progress is not None:
                progress.update(bound=b)
            if on_bound is not None:
                on_bound(b)

        solver.best_bound_callback = bound_feed


def solve_mip(
    mat: TimeIndexedMatrix,
    *,
    start: np.ndarray | None = None,
    time_limit: float | None = None,
    mip_gap: float = 0.0,
    threads: int | None = None,
    verbose: bool = False,
    progress: Observer | None = None,
    work_limit: float | None = None,
) -> Answer:
    """Build and run CP-SAT on the model of ``mat`` and map its status.

    Parameters
    ----------
    mat : TimeIndexedMatrix
    start : ndarray, shape (ncol,), optional
        Column values of a feasible schedule, added as a hint.
    time_limit : float, optional
        Seconds for the build and the run together: the build stops at the limit, and CP-SAT
        gets what the build left (``max_time_in_seconds``).
    mip_gap : float
        ``relative_gap_limit``.
    threads : int, optional
        ``num_workers``.
    verbose : bool
        ``log_search_progress`` on the standard output (without ``progress``).
    progress : Observer, optional
        Receives the log (when its ``log`` is on), each solution's TEL and each new bound.
    work_limit : float, optional
        Deterministic seconds (:func:`configure_solver`).

    Returns
    -------
    Answer
        CP-SAT answers ``FEASIBLE`` or ``UNKNOWN`` when it stops unproven, and only a limit
        stops it, so with a time or work limit those are ``limit_reached`` (the work limit's
        when CP-SAT's deterministic time reached it); after Ctrl-C
        (``stop_search``) they are ``interrupted``. ``MODEL_INVALID`` and any other status
        become ``error`` (with CP-SAT's reason). A build cut short by the time limit or
        Ctrl-C gives no incumbent and no bound.
    """
    from ortools.sat.python import cp_model

    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + float(time_limit)
    try:
        model = build_cpsat(mat, start=start, deadline=deadline)
    except BuildTimeout as exc:
        return Answer.without_run(
            time.perf_counter() - t0,
            f"time limit reached during the build ({exc})",
            limit_reached=True,
        )
    except KeyboardInterrupt:
        return Answer.without_run(
            time.perf_counter() - t0,
            "interrupted during the build",
            interrupted=True,
        )
    build_s = time.perf_counter() - t0
    s = cp_model.CpSolver()
    remaining = None if deadline is None else deadline - time.perf_counter()
    if remaining is not None and remaining <= 0:
        return Answer.without_run(
            build_s,
            "time limit reached by the end of the build",
            limit_reached=True,
        )
    configure_solver(
        s,
        remaining=remaining,
        threads=threads,
        mip_gap=mip_gap,
        verbose=verbose,
        progress=progress,
        work_limit=work_limit,
    )
    callback = None if progress is None else solution_callback(progress)
    code, interrupted = run_interruptible(lambda: s.solve(model, callback), s.stop_search, deadline)
    text = s.status_name(code)
    known = (cp_model.OPTIMAL, cp_model.FEASIBLE, cp_model.INFEASIBLE, cp_model.UNKNOWN)
    if code not in known:
        why = ""
        if code == cp_model.MODEL_INVALID:
            why = model.validate() or "the model is valid, so a parameter is out of range"
        return Answer(
            start=None,
            dual=None,
            build_s=build_s,
            interrupted=interrupted,
            error=f"CP-SAT stopped with status '{text}'" + (f": {why}" if why else ""),
            status_text=text,
        )
    sol = None
    if code in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        values = np.asarray(s.response_proto.solution, dtype=float)[: mat.ncol]
        sol = mat.starts_from_values(values)
    unproven = code in (cp_model.FEASIBLE, cp_model.UNKNOWN) and not interrupted
    worked = work_limit is not None and s.response_proto.deterministic_time >= work_limit
    return Answer(
        start=sol,
        build_s=build_s,
        dual=float(s.best_objective_bound) if code != cp_model.INFEASIBLE else None,
        limit_reached=unproven and (time_limit is not None or work_limit is not None),
        interrupted=interrupted,
        infeasible=code == cp_model.INFEASIBLE,
        status_text=text,
        work_limit_reached=unproven and worked,
    )


@functools.cache
def _solution_callback_class() -> type:
    from ortools.sat.python import cp_model

    class SolutionsToProgress(cp_model.CpSolverSolutionCallback):
        """Hands each CP-SAT solution's TEL and the bound at that moment to a Progress, and the
        callback itself (to read the solution's values) to ``on_solution``."""

        def __init__(
            self, progress: Observer | None, on_solution: Callable[[object], None] | None
        ) -> None:
            super().__init__()
            self.progress = progress
            self.on_solution = on_solution

        def on_solution_callback(self) -> None:
            if self.progress is not None:
                self.progress.update(
                    incumbent=self.objective_value, bound=self.best_objective_bound
                )
            if self.on_solution is not None:
                self.on_solution(self)

    return SolutionsToProgress


def solution_callback(
    progress: Observer | None = None, on_solution: Callable[[object], None] | None = None
):
    """A ``CpSolverSolutionCallback`` feeding ``progress`` and calling ``on_solution(cb)`` on
    each solution, from CP-SAT's thread (OR-Tools imported on first use). Source: ours."""
    return _solution_callback_class()(progress, on_solution)
