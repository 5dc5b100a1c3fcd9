"""Exact TEL and LP lower bounds from the time-indexed model (SPEC section 3), reported honestly.

* :func:`solve_exact` -- the MIP with HiGHS (highspy, or Pyomo's ``appsi_highs``) or OR-Tools
  CP-SAT; the best heuristic schedule (list policies, then a local search over priority lists,
  :func:`~lpsched.formulations.horizon.improve_schedule`) is the MIP start. The status says
  ``optimal`` only when the solver proved it (objective equal to the rounded-up best bound);
  otherwise the result carries the best bound and the gap.
* :func:`lp_bound` / :func:`solve_lp` -- the LP relaxation: a lower bound on the optimal TEL, and
  the fractional solution that Sorted-LP orders by.
* :func:`export_model` -- the model as an LP or MPS file for any solver.

The horizon is ``min(T1, T2)`` with per-request start windows (see
:mod:`lpsched.formulations.horizon` for the argument); a caller's horizon below that is refused
with :class:`~lpsched.formulations.horizon.HorizonError`.

Source: SPEC section 3; the reporting rules follow PyJobShop's result object (ours otherwise).
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

import numpy as np

from .formulations.horizon import (
    Horizon,
    HorizonError,
    best_heuristic,
    improve_schedule,
    tight_horizon,
)
from .formulations.time_indexed import (
    TimeIndexedMatrix,
    build_model,
    matrix_size,
    starts_from_pyomo,
    time_indexed_matrix,
)
from .instance import Instance
from .schedule import Schedule

__all__ = [
    "SolveStatus",
    "ExactResult",
    "BoundResult",
    "LPSolution",
    "LPTooLargeError",
    "SOLVERS",
    "solve_exact",
    "solve_lp",
    "lp_bound",
    "export_model",
    "LP_MAX_NONZEROS",
    "MAX_HORIZON",
    "PYOMO_MAX_NONZEROS",
    "HorizonError",
]

#: Exact back ends of :func:`solve_exact`.
SOLVERS = ("highs", "cpsat")
#: Default size limit of the LP relaxation (constraint-matrix non-zeros), about 0.5 GB.
LP_MAX_NONZEROS = 20_000_000
MAX_HORIZON = 1_000_000  # rounds, i.e. memory rows of the time-indexed model
PYOMO_MAX_NONZEROS = 2_000_000
_EPS = 1e-6


class SolveStatus(str, Enum):
    """Outcome of :func:`solve_exact` (the ``status`` key of ``lpsched exact --json``).

    ``optimal``: proven by the solver. ``feasible``: a schedule without proof (a gap stop).
    ``infeasible``: the model has no solution (cannot happen at a valid horizon).
    ``time-limit``: stopped by the time limit (objective and bound, if any, still reported).
    ``error``: the solver failed, or its answer did not pass the schedule check.
    """

    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    INFEASIBLE = "infeasible"
    TIME_LIMIT = "time-limit"
    ERROR = "error"

    def __str__(self) -> str:
        return self.value


class LPTooLargeError(ValueError):
    """The LP relaxation would exceed the non-zero limit; the message gives its size.
    Use :func:`lpsched.bounds.combinatorial_bound` instead. Source: ours."""


@dataclass
class ExactResult:
    """Result of :func:`solve_exact`.

    Attributes
    ----------
    status : SolveStatus
    objective : int or None
        TEL of ``schedule`` (rounds), None if no schedule is known.
    bound : float
        Best proven lower bound on the optimal TEL (rounds): the solver's dual bound rounded
        up (TEL is an integer), never below the combinatorial bound (SPEC section 7, itself at
        least ``sum o_i``).
    gap : float or None
        ``(objective - bound) / objective``; 0 when optimal; None without objective.
    runtime_s : float
        Total wall time (seconds): heuristic, horizon, model build and solve.
    build_s, solve_s : float
        Model build (heuristic and horizon included) and solver time, seconds.
    horizon : int
        ``T`` in rounds.
    solver : str
        ``"highs"`` or ``"cpsat"``.
    schedule : Schedule or None
        The best schedule found (checked feasible).
    info : dict
        Model size (``columns``, ``rows``, ``nonzeros``), ``heuristic_tel``, ``T1``, ``T2``,
        solver status text, ``incumbent`` (``"solver"`` or ``"heuristic"``), messages.
    """

    status: SolveStatus
    objective: int | None
    bound: float
    gap: float | None
    runtime_s: float
    build_s: float
    solve_s: float
    horizon: int
    solver: str
    schedule: Schedule | None
    info: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The ``exact`` JSON object of ARCHITECTURE.md: status, objective, bound, gap,
        runtime_s, horizon, solver."""
        return {
            "status": str(self.status),
            "objective": self.objective,
            "bound": float(self.bound),
            "gap": self.gap,
            "runtime_s": float(self.runtime_s),
            "horizon": int(self.horizon),
            "solver": self.solver,
        }

    def summary(self) -> str:
        """One readable paragraph: status, TEL, bound, gap, times, model size."""
        gap = "-" if self.gap is None else f"{100 * self.gap:.2f}%"
        lines = [
            f"status      {self.status}  ({self.solver})",
            f"TEL         {self.objective}",
            f"bound       {self.bound:g}   gap {gap}",
            f"horizon     T = {self.horizon}  (T1 = {self.info.get('T1')}, "
            f"T2 = {self.info.get('T2')})",
            f"heuristic   TEL {self.info.get('heuristic_tel')} ({self.info.get('heuristic', '-')})",
            f"model       {self.info.get('columns')} columns, {self.info.get('rows')} rows, "
            f"{self.info.get('nonzeros')} non-zeros",
            f"time        {self.runtime_s:.2f} s (build {self.build_s:.2f} s, "
            f"solve {self.solve_s:.2f} s)",
        ]
        return "\n".join(lines)


@dataclass
class BoundResult:
    """A lower bound on the optimal TEL (:func:`lp_bound`, :mod:`lpsched.bounds`).

    Attributes
    ----------
    method : str
        ``"lp"``, ``"combinatorial"`` or ``"trivial"``.
    bound : float
        The lower bound (rounds). The LP value is reported unrounded.
    runtime_s : float
        Wall time (seconds), build included.
    horizon : int or None
        ``T`` of the LP (rounds); None for the combinatorial bounds.
    info : dict
        ``build_s``, ``solve_s``, model size, why a method was chosen.
    """

    method: str
    bound: float
    runtime_s: float
    horizon: int | None = None
    info: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The ``bound`` JSON object of ARCHITECTURE.md: method, bound, runtime_s, horizon."""
        return {
            "method": self.method,
            "bound": float(self.bound),
            "runtime_s": float(self.runtime_s),
            "horizon": None if self.horizon is None else int(self.horizon),
        }

    def summary(self) -> str:
        """One readable line: method, value, horizon and time (and why, when chosen)."""
        why = f"; {self.info['reason']}" if "reason" in self.info else ""
        hz = "" if self.horizon is None else f" at horizon T = {self.horizon}"
        value = f"{int(self.bound):,}" if float(self.bound).is_integer() else f"{self.bound:,.6f}"
        return f"{self.method} lower bound {value}{hz} ({self.runtime_s:.2f} s{why})"


@dataclass
class LPSolution:
    """An optimal solution of the LP relaxation (:func:`solve_lp`).

    Attributes
    ----------
    value : float
        LP optimum, a lower bound on the optimal TEL (rounds).
    x : ndarray of float, shape (ncol,)
        Column values (class counts when aggregated).
    matrix : TimeIndexedMatrix
        The model solved.
    build_s, solve_s : float
        Seconds.
    """

    value: float
    x: np.ndarray
    matrix: TimeIndexedMatrix
    build_s: float
    solve_s: float

    @property
    def horizon(self) -> int:
        """``T`` in rounds."""
        return self.matrix.T

    def fractional_completion(self) -> np.ndarray:
        """``sum_k (k + o_i) x_{i,k}`` per request (rounds), shape (n,) (Sorted-LP's key)."""
        return self.matrix.fractional_completion(self.x)


# =========================================================================== helpers


def _refuse_if_surely_too_large(instance: Instance, max_nonzeros: int) -> None:
    """Refuse before any heuristic runs when even the smallest horizon the tight rule could
    choose gives too large a model: ``T2 >= LB - sum o + max (o + a)`` and the start windows
    have slack ``>= LB - sum o`` for the combinatorial lower bound ``LB``."""
    from .bounds import combinatorial_value

    lb = combinatorial_value(instance)
    total = int(instance.decode.sum())
    t1 = int(instance.arrival.max()) + total
    t_lo = min(t1, lb - total + int((instance.decode + instance.arrival).max()))
    _check_size(instance, t_lo, lb - total, max_nonzeros)


def _horizon(
    instance: Instance, horizon: int | None, windows: bool, local_search: int = 0
) -> Horizon:
    sched = best_heuristic(instance)
    if local_search > 0:
        sched = improve_schedule(instance, sched, local_search)
    hz = tight_horizon(instance, horizon, sched)
    if not windows:
        return Horizon(hz.T, hz.T1, hz.T2, hz.upper_bound, None, hz.schedule)
    return hz


def _check_size(instance: Instance, T: int, slack: int | None, max_nonzeros: int) -> None:
    if T > MAX_HORIZON:
        raise LPTooLargeError(
            f"{instance.name}: the time-indexed model needs horizon T = {T:,} rounds (one "
            f"memory row each), above the limit of {MAX_HORIZON:,}; use the combinatorial "
            "bound (lpsched.bounds)"
        )
    cols, nnz = matrix_size(instance, T, slack)
    if nnz > max_nonzeros:
        raise LPTooLargeError(
            f"{instance.name}: the time-indexed model at horizon T = {T} has {cols:,} columns "
            f"and {nnz:,} non-zeros, above the limit of {max_nonzeros:,}; use the "
            "combinatorial bound (lpsched.bounds) or raise max_nonzeros"
        )


def _proven_bound(instance: Instance, dual: float | None) -> float:
    """The solver's dual bound rounded up (TEL is an integer), never below the combinatorial
    bound of SPEC section 7 (itself at least ``sum o_i``)."""
    from .bounds import combinatorial_value

    floor = float(combinatorial_value(instance))
    if dual is None or not math.isfinite(dual):
        return floor
    return max(floor, float(math.ceil(dual - _EPS)))


def _finish(
    instance: Instance,
    *,
    solver: str,
    hz: Horizon,
    start: np.ndarray | None,
    dual: float | None,
    stopped_by_time: bool,
    solver_says_optimal: bool,
    infeasible: bool,
    warm_start: bool,
    t0: float,
    build_s: float,
    solve_s: float,
    info: dict[str, Any],
) -> ExactResult:
    """Map a solver's answer to an :class:`ExactResult`, checking the schedule."""
    sched: Schedule | None = None
    info["incumbent"] = None
    if start is not None:
        cand = Schedule(instance, start, policy=f"exact-{solver}")
        bad = cand.violations()
        if bad:
            info["error"] = "solver schedule fails the check: " + "; ".join(bad)
        else:
            sched, info["incumbent"] = cand, "solver"
    if warm_start and hz.schedule is not None and (sched is None or hz.schedule.tel < sched.tel):
        sched = Schedule(
            instance, hz.schedule.start, policy=f"exact-{solver}", info={"from": hz.schedule.policy}
        )
        info["incumbent"] = "heuristic"
    bound = _proven_bound(instance, dual)
    objective = None if sched is None else sched.tel
    if "error" in info:
        status = SolveStatus.ERROR
    elif infeasible:
        status = SolveStatus.INFEASIBLE
    elif objective is not None and objective <= bound + _EPS:
        status = SolveStatus.OPTIMAL
        bound = float(objective)
    elif stopped_by_time:
        status = SolveStatus.TIME_LIMIT
    elif objective is not None and not solver_says_optimal:
        status = SolveStatus.FEASIBLE
    elif objective is not None:
        status = SolveStatus.FEASIBLE  # stopped at a positive gap
    else:
        status = SolveStatus.ERROR
    if objective is not None and bound > objective + _EPS:
        status = SolveStatus.ERROR
        info["error"] = f"bound {bound} above the objective {objective}"
    gap = (
        None
        if objective is None
        else (0.0 if objective == 0 else max(0.0, (objective - bound) / objective))
    )
    if sched is not None:
        sched.info.update(status=str(status), bound=bound)
    return ExactResult(
        status=status,
        objective=objective,
        bound=bound,
        gap=gap,
        runtime_s=time.perf_counter() - t0,
        build_s=build_s,
        solve_s=solve_s,
        horizon=hz.T,
        solver=solver,
        schedule=sched,
        info=info,
    )


# =========================================================================== exact


def solve_exact(
    instance: Instance,
    solver: str = "highs",
    time_limit: float | None = 60.0,
    mip_gap: float = 0.0,
    warm_start: bool = True,
    *,
    horizon: int | None = None,
    windows: bool = True,
    aggregate: bool = True,
    backend: str = "matrix",
    threads: int | None = None,
    local_search: int = 4000,
    cover_cuts: int = 0,
    max_nonzeros: int = LP_MAX_NONZEROS,
    verbose: bool = False,
) -> ExactResult:
    """Solve the time-indexed MIP of SPEC section 3: the optimal TEL, or a bound and a gap.

    Parameters
    ----------
    instance : Instance
        Requests ``(s_i, o_i, a_i)`` and KV-cache budget ``M``; arrivals allowed.
    solver : {"highs", "cpsat"}
        HiGHS (branch and cut) or OR-Tools CP-SAT on the same model.
    time_limit : float or None, default 60
        Seconds for the solver (the heuristic and the build come on top).
    mip_gap : float, default 0.0
        Relative gap at which to stop; with 0 the solver runs until optimality is proven.
    warm_start : bool, default True
        Give the best heuristic schedule as MIP start (HiGHS) or hint (CP-SAT); it is also the
        fallback incumbent.
    horizon : int, optional
        ``T`` in rounds; default ``min(T1, T2)``. Must be ``>= min(T1, T2)``.
    windows : bool, default True
        Cut every start window to ``p_i <= a_i + UB - sum o`` (keeps all optimal schedules).
    aggregate : bool, default True
        One integer column per class of identical requests (removes their symmetry).
    backend : {"matrix", "pyomo"}
        ``matrix``: the numpy build handed to highspy / CP-SAT. ``pyomo``: the reference Pyomo
        model solved by ``appsi_highs`` (HiGHS only; ``aggregate`` ignored).
    threads : int, optional
        Solver threads (CP-SAT workers).
    local_search : int, default 4000
        Moves of the list local search (:func:`~lpsched.formulations.horizon.improve_schedule`)
        that improves the best list policy before the solve; 0 = the list policies only. The
        better schedule is the MIP start, the fallback incumbent and the ``UB`` behind ``T2``
        and the windows. About 1.5 s at n = 30.
    cover_cuts : int, default 0
        Rounds of GUB-cover cuts on the memory rows (:mod:`lpsched.formulations.cuts`) added
        to the HiGHS model in a cut loop on its LP before the MIP; 0 = none (HiGHS' own cuts
        only). Matrix backend and HiGHS only.
    max_nonzeros : int, default LP_MAX_NONZEROS
        Largest model to build; a larger one is refused before any memory is spent on it
        (checked first with the smallest horizon the tight rule could choose, then exactly).
    verbose : bool
        Solver log on stdout.

    Returns
    -------
    ExactResult
        ``status`` is ``optimal`` only when the solver proved it; the schedule passes
        :meth:`Schedule.check`.

    Raises
    ------
    HorizonError
        If ``horizon`` is given and below ``min(T1, T2)`` (or cannot hold any schedule).
    LPTooLargeError
        If the model would exceed ``max_nonzeros`` non-zeros.
    ValueError
        Unknown solver or backend.

    Notes
    -----
    Source: SPEC section 3 (the hindsight IP of Jaillet et al., arXiv 2502.07115). Windows and
    aggregation are ours; their effect is measured in ``benchmarks/bench_exact.py``.
    """
    if solver not in SOLVERS:
        raise ValueError(f"unknown solver {solver!r}; choose from {', '.join(SOLVERS)}")
    if backend not in ("matrix", "pyomo"):
        raise ValueError(f"unknown backend {backend!r}; choose 'matrix' or 'pyomo'")
    if backend == "pyomo" and solver != "highs":
        raise ValueError("the pyomo backend solves with HiGHS only")
    t0 = time.perf_counter()
    _refuse_if_surely_too_large(instance, max_nonzeros)
    hz = _horizon(instance, horizon, windows, local_search)
    _check_size(instance, hz.T, hz.slack if windows else None, max_nonzeros)
    info: dict[str, Any] = {
        "T1": hz.T1,
        "T2": hz.T2,
        "heuristic_tel": hz.upper_bound,
        "heuristic": hz.schedule.policy if hz.schedule is not None else None,
        "backend": backend,
        "aggregate": aggregate and backend == "matrix",
        "windows": windows,
    }
    if backend == "pyomo":
        return _solve_pyomo(instance, hz, time_limit, mip_gap, warm_start, verbose, t0, info)
    mat = time_indexed_matrix(instance, hz if windows else hz.T, aggregate=aggregate)
    info.update(columns=mat.ncol, rows=mat.nrow, nonzeros=mat.nnz)
    start_x = None
    if warm_start and hz.schedule is not None and mat.fits(hz.schedule.start):
        start_x = mat.values_from_starts(hz.schedule.start)
    if solver == "highs":
        return _solve_highs(
            instance,
            mat,
            hz,
            start_x,
            time_limit,
            mip_gap,
            warm_start,
            threads,
            verbose,
            t0,
            info,
            cover_cuts,
        )
    return _solve_cpsat(
        instance, mat, hz, start_x, time_limit, mip_gap, warm_start, threads, verbose, t0, info
    )


def _solve_highs(
    instance,
    mat,
    hz,
    start_x,
    time_limit,
    mip_gap,
    warm_start,
    threads,
    verbose,
    t0,
    info,
    cover_cuts=0,
) -> ExactResult:
    import highspy

    from .formulations.highs import build_highs

    h = build_highs(
        mat,
        time_limit=time_limit,
        mip_gap=mip_gap,
        threads=threads,
        verbose=verbose,
        start=None if cover_cuts else start_x,
    )
    if cover_cuts:
        from .formulations.cuts import add_cover_cuts

        info.update(add_cover_cuts(h, mat, rounds=cover_cuts))
        if start_x is not None:
            idx = np.flatnonzero(start_x).astype(np.int32)
            h.setSolution(int(idx.size), idx, np.asarray(start_x, dtype=np.float64)[idx])
    build_s = time.perf_counter() - t0
    h.run()
    solve_s = time.perf_counter() - t0 - build_s
    st = h.getModelStatus()
    hinfo = h.getInfo()
    info["solver_status"] = h.modelStatusToString(st)
    info["nodes"] = int(hinfo.mip_node_count)
    start = None
    if hinfo.primal_solution_status == 2:  # kSolutionStatusFeasible
        start = mat.starts_from_values(np.asarray(h.getSolution().col_value))
    MS = highspy.HighsModelStatus
    if st in (
        MS.kNotset,
        MS.kLoadError,
        MS.kModelError,
        MS.kPresolveError,
        MS.kSolveError,
        MS.kPostsolveError,
        MS.kUnknown,
    ):
        info["error"] = f"HiGHS stopped with status '{info['solver_status']}'"
    return _finish(
        instance,
        solver="highs",
        hz=hz,
        start=start,
        dual=float(hinfo.mip_dual_bound) if st != MS.kInfeasible else None,
        stopped_by_time=st
        in (
            MS.kTimeLimit,
            MS.kInterrupt,
            MS.kIterationLimit,
            MS.kSolutionLimit,
            MS.kMemoryLimit,
            MS.kHighsInterrupt,
        ),
        solver_says_optimal=st == MS.kOptimal,
        infeasible=st == MS.kInfeasible,
        warm_start=warm_start,
        t0=t0,
        build_s=build_s,
        solve_s=solve_s,
        info=info,
    )


def _solve_cpsat(
    instance, mat, hz, start_x, time_limit, mip_gap, warm_start, threads, verbose, t0, info
) -> ExactResult:
    from ortools.sat.python import cp_model

    from .formulations.cpsat import build_cpsat

    model, x = build_cpsat(mat, start=start_x)
    build_s = time.perf_counter() - t0
    s = cp_model.CpSolver()
    if time_limit is not None:
        s.parameters.max_time_in_seconds = float(time_limit)
    if threads is not None:
        s.parameters.num_workers = int(threads)
    s.parameters.relative_gap_limit = float(mip_gap)
    s.parameters.log_search_progress = bool(verbose)
    code = s.solve(model)
    solve_s = time.perf_counter() - t0 - build_s
    info["solver_status"] = s.status_name(code)
    start = None
    if code in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        start = mat.starts_from_values(np.array([s.value(v) for v in x], dtype=float))
    # CP-SAT answers FEASIBLE or UNKNOWN when it stops unproven, and only a limit stops it
    timed_out = code in (cp_model.FEASIBLE, cp_model.UNKNOWN) and time_limit is not None
    return _finish(
        instance,
        solver="cpsat",
        hz=hz,
        start=start,
        dual=float(s.best_objective_bound) if code != cp_model.INFEASIBLE else None,
        stopped_by_time=timed_out,
        solver_says_optimal=code == cp_model.OPTIMAL,
        infeasible=code == cp_model.INFEASIBLE,
        warm_start=warm_start,
        t0=t0,
        build_s=build_s,
        solve_s=solve_s,
        info=info,
    )


def _solve_pyomo(instance, hz, time_limit, mip_gap, warm_start, verbose, t0, info):
    import pyomo.environ as pyo
    from pyomo.contrib.appsi.base import TerminationCondition as TC
    from pyomo.contrib.appsi.solvers import Highs as AppsiHighs

    m = build_model(instance, hz, relax=False)
    info.update(
        columns=len(m.IK),
        rows=len(m.assign) + len(m.memory),
        nonzeros=len(m.IK) + sum(int(pyo.value(m.o[i])) for i, _ in m.IK),
    )
    if warm_start and hz.schedule is not None:
        for (i, k), v in m.x.items():
            v.set_value(1 if hz.schedule.start[i] == k else 0)
    opt = AppsiHighs()
    opt.config.stream_solver = bool(verbose)
    opt.config.load_solution = False
    opt.config.warmstart = bool(warm_start)
    if time_limit is not None:
        opt.config.time_limit = float(time_limit)
    opt.config.mip_gap = float(mip_gap)
    if mip_gap == 0.0:
        opt.highs_options = {"mip_abs_gap": 1.0 - 1e-6}
    build_s = time.perf_counter() - t0
    res = opt.solve(m)
    solve_s = time.perf_counter() - t0 - build_s
    tc = res.termination_condition
    info["solver_status"] = str(tc)
    start = None
    if res.best_feasible_objective is not None:
        res.solution_loader.load_vars()
        start = starts_from_pyomo(m)
    return _finish(
        instance,
        solver="highs",
        hz=hz,
        start=start,
        dual=res.best_objective_bound,
        stopped_by_time=tc in (TC.maxTimeLimit, TC.maxIterations, TC.interrupted),
        solver_says_optimal=tc == TC.optimal,
        infeasible=tc == TC.infeasible,
        warm_start=warm_start,
        t0=t0,
        build_s=build_s,
        solve_s=solve_s,
        info=info,
    )


# =========================================================================== LP


def solve_lp(
    instance: Instance,
    horizon: int | None = None,
    *,
    windows: bool | None = None,
    aggregate: bool = True,
    max_nonzeros: int = LP_MAX_NONZEROS,
    time_limit: float | None = None,
) -> LPSolution:
    """Solve the LP relaxation of the time-indexed model with HiGHS (the fast matrix path).

    Parameters
    ----------
    instance : Instance
    horizon : int, optional
        ``T`` (rounds); default ``min(T1, T2)``. Must be ``>= min(T1, T2)``.
    windows : bool, optional
        Start windows ``p_i <= a_i + UB - sum o``; default: on when ``horizon`` is None, off
        when a horizon is given (so ``horizon=T1`` is exactly the LP of SPEC section 3).
    aggregate : bool, default True
        Classes of identical requests (same LP value; module :mod:`.time_indexed`).
    max_nonzeros : int
        Refuse larger models with :class:`LPTooLargeError`.
    time_limit : float, optional
        Seconds for HiGHS.

    Returns
    -------
    LPSolution

    Raises
    ------
    HorizonError
        ``horizon`` below ``min(T1, T2)``.
    LPTooLargeError
        The model exceeds ``max_nonzeros``.
    RuntimeError
        HiGHS did not reach an optimal LP solution (e.g. time limit).

    Notes
    -----
    Source: SPEC section 3 (LP relaxation, ``0 <= x <= 1``). With windows the LP is that of a
    MIP with the same optimum, hence still a lower bound (module :mod:`.horizon`).
    """
    import highspy

    from .formulations.highs import build_highs

    t0 = time.perf_counter()
    if windows is None:
        windows = horizon is None
    hz = _horizon(instance, horizon, windows)
    _check_size(instance, hz.T, hz.slack, max_nonzeros)
    mat = time_indexed_matrix(instance, hz, aggregate=aggregate)
    h = build_highs(mat, relax=True, time_limit=time_limit)
    build_s = time.perf_counter() - t0
    h.run()
    solve_s = time.perf_counter() - t0 - build_s
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        raise RuntimeError(
            f"{instance.name}: LP relaxation not solved: "
            f"{h.modelStatusToString(h.getModelStatus())}"
        )
    x = np.asarray(h.getSolution().col_value)
    return LPSolution(
        value=float(h.getInfo().objective_function_value),
        x=x,
        matrix=mat,
        build_s=build_s,
        solve_s=solve_s,
    )


def lp_bound(
    instance: Instance,
    horizon: int | None = None,
    *,
    windows: bool | None = None,
    backend: str = "matrix",
    max_nonzeros: int = LP_MAX_NONZEROS,
    time_limit: float | None = None,
) -> BoundResult:
    """The LP relaxation's value: a lower bound on the optimal TEL (rounds).

    Parameters
    ----------
    instance : Instance
    horizon : int, optional
        ``T`` (rounds); default ``min(T1, T2)`` (with start windows). At ``T = T1`` this is the
        plain LP of SPEC section 3; a smaller valid ``T`` gives a value at least as large.
    windows : bool, optional
        See :func:`solve_lp`.
    backend : {"matrix", "pyomo"}
        ``matrix`` (fast, HiGHS via highspy) or the reference Pyomo model (``appsi_highs``).
    max_nonzeros : int
        Size limit (:class:`LPTooLargeError` above it).
    time_limit : float, optional
        Seconds for HiGHS.

    Returns
    -------
    BoundResult
        ``method="lp"``, ``bound`` the LP value (unrounded), ``horizon``, ``runtime_s``;
        ``info`` has ``build_s``, ``solve_s`` and the model size.

    Raises
    ------
    HorizonError, LPTooLargeError, RuntimeError
        As :func:`solve_lp`.
    """
    t0 = time.perf_counter()
    if backend == "matrix":
        sol = solve_lp(
            instance, horizon, windows=windows, max_nonzeros=max_nonzeros, time_limit=time_limit
        )
        mat = sol.matrix
        return BoundResult(
            method="lp",
            bound=sol.value,
            runtime_s=time.perf_counter() - t0,
            horizon=sol.horizon,
            info={
                "build_s": sol.build_s,
                "solve_s": sol.solve_s,
                "columns": mat.ncol,
                "nonzeros": mat.nnz,
                "backend": backend,
            },
        )
    if backend != "pyomo":
        raise ValueError(f"unknown backend {backend!r}; choose 'matrix' or 'pyomo'")
    import pyomo.environ as pyo
    from pyomo.contrib.appsi.base import TerminationCondition as TC
    from pyomo.contrib.appsi.solvers import Highs as AppsiHighs

    if windows is None:
        windows = horizon is None
    hz = _horizon(instance, horizon, windows)
    _check_size(instance, hz.T, hz.slack, max_nonzeros)
    m = build_model(instance, hz, relax=True)
    build_s = time.perf_counter() - t0
    opt = AppsiHighs()
    if time_limit is not None:
        opt.config.time_limit = float(time_limit)
    res = opt.solve(m)
    if res.termination_condition != TC.optimal:
        raise RuntimeError(
            f"{instance.name}: LP relaxation not solved: {res.termination_condition}"
        )
    return BoundResult(
        method="lp",
        bound=float(pyo.value(m.tel)),
        runtime_s=time.perf_counter() - t0,
        horizon=hz.T,
        info={
            "build_s": build_s,
            "solve_s": time.perf_counter() - t0 - build_s,
            "columns": len(m.IK),
            "backend": backend,
        },
    )


# =========================================================================== export


def export_model(
    instance: Instance,
    path: str | os.PathLike[str],
    format: str = "lp",
    *,
    relax: bool = False,
    horizon: int | None = None,
    backend: str = "pyomo",
) -> Path:
    """Write the time-indexed model (SPEC section 3) as an LP or MPS file for any solver.

    Parameters
    ----------
    instance : Instance
    path : path-like
        Output file.
    format : {"lp", "mps"}
    relax : bool, default False
        Write the LP relaxation instead of the MIP.
    horizon : int, optional
        ``T`` in rounds; default ``min(T1, T2)`` with start windows. Must be ``>= min(T1, T2)``.
    backend : {"pyomo", "highs"}
        ``pyomo``: the reference model with its names (``x[i,k]``, ``assign[i]``,
        ``memory[t]``), for small and medium instances. ``highs``: the matrix build written
        by HiGHS (generic names, fast for large instances).

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    ValueError
        Unknown format or backend. :class:`HorizonError` for a too short horizon.
    LPTooLargeError
        The model would have more than ``PYOMO_MAX_NONZEROS`` (backend ``pyomo``, which needs
        about 1 kB of memory per non-zero) or ``LP_MAX_NONZEROS`` (``highs``) non-zeros.
    """
    fmt = format.lower()
    if fmt not in ("lp", "mps"):
        raise ValueError(f"unknown format {format!r}; choose 'lp' or 'mps'")
    p = Path(path)
    limit = LP_MAX_NONZEROS if backend == "highs" else PYOMO_MAX_NONZEROS
    _refuse_if_surely_too_large(instance, limit)
    hz = _horizon(instance, horizon, windows=horizon is None)
    _check_size(instance, hz.T, hz.slack if horizon is None else None, limit)
    if backend == "pyomo":
        m = build_model(instance, hz, relax=relax)
        from pyomo.opt import ProblemFormat

        pformat = ProblemFormat.cpxlp if fmt == "lp" else ProblemFormat.mps
        m.write(str(p), format=pformat, io_options={"symbolic_solver_labels": True})
    elif backend == "highs":
        from .formulations.highs import build_highs

        mat = time_indexed_matrix(instance, hz, aggregate=False)
        h = build_highs(mat, relax=relax)
        target = p if p.suffix == f".{fmt}" else p.with_name(p.name + f".{fmt}")
        h.writeModel(str(target))
        if target != p:
            target.replace(p)
    else:
        raise ValueError(f"unknown backend {backend!r}; choose 'pyomo' or 'highs'")
    return p
