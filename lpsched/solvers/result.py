"""Solver-independent results: statuses, exact results, bounds, and the mapping to them.

Every back end returns an :class:`Answer`; :func:`exact_result` checks the schedule and decides
the status, so the rule "``optimal`` only when proven" lives in one place.
Source: ours; the result objects follow PyJobShop's and PyVRP's (``to_dict``, ``summary``).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import numpy as np

from ..bounds import combinatorial_bound
from ..formulations.horizon import Horizon
from ..formulations.time_indexed import TimeIndexedMatrix
from ..instance import Instance
from ..schedule import Schedule

__all__ = [
    "SolveStatus",
    "LPTooLargeError",
    "ExactResult",
    "BoundResult",
    "LPSolution",
    "Answer",
    "exact_result",
]

_EPS = 1e-6


class SolveStatus(str, Enum):
    """Outcome of :func:`~lpsched.solvers.solve.solve_exact` (``lpsched exact --json``).

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
    """The time-indexed model would exceed a size limit; the message gives its size and the
    limit. Use the combinatorial bound (:func:`lpsched.bounds.combinatorial_bound`) instead.
    Source: ours."""


@dataclass
class ExactResult:
    """Result of :func:`~lpsched.solvers.solve.solve_exact`.

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
        """The ``exact`` JSON object of ``docs/architecture.md``: status, objective, bound, gap,
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
    """A lower bound on the optimal TEL (:func:`~lpsched.solvers.solve.best_bound`).

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
        """The ``bound`` JSON object of ``docs/architecture.md``: method, bound, runtime_s,
        horizon."""
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
    """An optimal solution of the LP relaxation (:func:`~lpsched.solvers.solve.solve_lp`).

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


@dataclass
class Answer:
    """What a back end reports after a MIP run, in solver-neutral terms.

    Every back end (:mod:`.highs`, :mod:`.cpsat`, :mod:`.pyomo`) maps its own status codes to
    this; :func:`exact_result` turns it into an :class:`ExactResult`.

    Attributes
    ----------
    start : ndarray of int, shape (n,), or None
        Starts ``p_i`` (rounds) of the solver's incumbent, None without one.
    dual : float or None
        The solver's dual (lower) bound on the TEL (rounds); None when it has none.
    limit_reached : bool
        Stopped by a time, node, solution or memory limit, or interrupted.
    infeasible : bool
        The solver proved the model infeasible.
    error : str or None
        Why the solver failed, if it did.
    status_text : str
        The solver's own status name (reported in ``info["solver_status"]``).
    info : dict
        Solver statistics (``nodes``, cut counts).
    build_s : float
        Seconds the back end spent building its own model before the run.

    Notes
    -----
    Source: ours (PyJobShop's pattern: each back end owns its status mapping).
    """

    start: np.ndarray | None
    dual: float | None
    build_s: float = 0.0
    limit_reached: bool = False
    infeasible: bool = False
    error: str | None = None
    status_text: str = ""
    info: dict[str, Any] = field(default_factory=dict)


def _proven_bound(instance: Instance, dual: float | None) -> float:
    """The solver's dual bound rounded up (TEL is an integer), never below the combinatorial
    bound of SPEC section 7 (itself at least ``sum o_i``)."""
    floor = float(combinatorial_bound(instance))
    if dual is None or not math.isfinite(dual):
        return floor
    return max(floor, float(math.ceil(dual - _EPS)))


def exact_result(
    instance: Instance,
    answer: Answer,
    *,
    solver: str,
    hz: Horizon,
    warm_start: bool,
    t0: float,
    build_s: float,
    solve_s: float,
    info: dict[str, Any],
) -> ExactResult:
    """The :class:`ExactResult` of a back end's :class:`Answer`, checking every schedule.

    Parameters
    ----------
    instance : Instance
    answer : Answer
    solver : str
        Back-end name recorded in the result.
    hz : Horizon
        The horizon solved at; its schedule is the fallback incumbent with ``warm_start``.
    warm_start : bool
        Whether the heuristic schedule may be the incumbent.
    t0 : float
        ``time.perf_counter()`` at the start of the solve (for ``runtime_s``).
    build_s, solve_s : float
        Seconds of model build and solve.
    info : dict
        Model facts to report; updated with the answer's statistics.

    Returns
    -------
    ExactResult
        ``optimal`` only when the best schedule's TEL meets the proven bound (the solver's
        dual bound rounded up, never below the combinatorial bound); ``error`` when the
        solver failed, its schedule fails the feasibility check, or its bound exceeds a
        feasible TEL.

    Notes
    -----
    Source: ours (the reporting rules of ``docs/architecture.md``).
    """
    info.update(answer.info)
    info["solver_status"] = answer.status_text
    if answer.error is not None:
        info["error"] = answer.error
    sched: Schedule | None = None
    info["incumbent"] = None
    if answer.start is not None:
        cand = Schedule(instance, answer.start, policy=f"exact-{solver}")
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
    bound = _proven_bound(instance, None if answer.infeasible else answer.dual)
    objective = None if sched is None else sched.tel
    if "error" in info:
        status = SolveStatus.ERROR
    elif answer.infeasible:
        status = SolveStatus.INFEASIBLE
    elif objective is not None and objective <= bound + _EPS:
        status = SolveStatus.OPTIMAL
        bound = float(objective)
    elif answer.limit_reached:
        status = SolveStatus.TIME_LIMIT
    elif objective is not None:  # stopped without proof, e.g. at the requested gap
        status = SolveStatus.FEASIBLE
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
