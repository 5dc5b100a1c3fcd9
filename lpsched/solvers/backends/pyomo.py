"""The Pyomo back end: the reference model of :func:`~lpsched.formulations.build_model` solved
by HiGHS through Pyomo's ``appsi_highs`` interface, for the MIP and the LP relaxation.

Slower to build than the matrix path (:mod:`.highs`), but it is the model the ``models/`` files
and the LP/MPS export show, so solving it directly cross-checks the matrix build. The solve runs
in a worker thread (:func:`~lpsched.solvers.result.run_interruptible`); Ctrl-C cancels it
through appsi's ``highspy.Highs`` object, whose interrupt callbacks appsi enables. With a
:class:`~lpsched.solvers.progress.Progress` whose ``log`` is on, the log appsi streams to
``sys.stdout`` is handed to it instead (incumbent and bound are known only at the end).
Source: ours (Pyomo, Bynum et al. 2021; appsi HiGHS interface).
"""

from __future__ import annotations

import contextlib
import time
from typing import Any

import numpy as np

from ...formulations.horizon import Horizon
from ...formulations.time_indexed import build_model, starts_from_pyomo
from ...instance import Instance
from ..progress import Observer
from ..result import Answer, run_interruptible

__all__ = ["appsi_highs", "solve_mip", "solve_lp"]


def appsi_highs(
    time_limit: float | None = None,
    mip_gap: float | None = None,
    verbose: bool = False,
    warm_start: bool = False,
):
    """An ``appsi`` HiGHS solver object with lpsched's options.

    Parameters
    ----------
    time_limit : float, optional
        Seconds.
    mip_gap : float, optional
        Relative MIP gap; 0 also sets HiGHS' absolute gap just below 1, which proves optimality
        since the TEL is an integer. None: an LP solve (no MIP options).
    verbose : bool
        Stream the HiGHS log.
    warm_start : bool
        Hand the variables' current values to HiGHS as a start.

    Returns
    -------
    pyomo.contrib.appsi.solvers.Highs
        With ``load_solution`` off: the caller loads the solution after checking the status.
    """
    from pyomo.contrib.appsi.solvers import Highs as AppsiHighs

    opt = AppsiHighs()
    opt.config.stream_solver = bool(verbose)
    opt.config.load_solution = False
    opt.config.warmstart = bool(warm_start)
    if time_limit is not None:
        opt.config.time_limit = float(time_limit)
    if mip_gap is not None:
        opt.config.mip_gap = float(mip_gap)
        if mip_gap == 0.0:
            opt.highs_options = {"mip_abs_gap": 1.0 - 1e-6}
    return opt


def solve_mip(
    instance: Instance,
    hz: Horizon,
    *,
    warm_start: bool = True,
    time_limit: float | None = None,
    mip_gap: float = 0.0,
    verbose: bool = False,
    progress: Observer | None = None,
    info: dict[str, Any] | None = None,
) -> Answer:
    """Build the Pyomo MIP at horizon ``hz`` and solve it with ``appsi_highs``.

    Parameters
    ----------
    instance : Instance
    hz : Horizon
        Horizon and windows; with ``warm_start`` its schedule is the MIP start.
    warm_start : bool
    time_limit : float, optional
        Seconds for the build and the solve together (HiGHS gets what the build left).
    mip_gap, verbose
        See :func:`appsi_highs`.
    progress : Observer, optional
        Receives the HiGHS log when its ``log`` is on, and the final incumbent and bound.
    info : dict, optional
        Receives the model size (``columns``, ``rows``, ``nonzeros``).

    Returns
    -------
    Answer
        A build that used up the time limit, or was interrupted, gives no incumbent.
    """
    import pyomo.environ as pyo
    from pyomo.contrib.appsi.base import TerminationCondition as TC

    t0 = time.perf_counter()
    try:
        m = build_model(instance, hz, relax=False)
    except KeyboardInterrupt:
        return Answer.without_run(
            time.perf_counter() - t0,
            "interrupted during the build",
            interrupted=True,
        )
    if info is not None:
        info.update(
            columns=len(m.IK),
            rows=len(m.assign) + len(m.memory),
            nonzeros=len(m.IK) + sum(int(pyo.value(m.o[i])) for i, _ in m.IK),
        )
    if warm_start and hz.schedule is not None:
        for (i, k), v in m.x.items():
            v.set_value(1 if hz.schedule.start[i] == k else 0)
    build_s = time.perf_counter() - t0
    remaining = None if time_limit is None else float(time_limit) - build_s
    if remaining is not None and remaining <= 0:
        return Answer.without_run(
            build_s,
            "time limit reached by the end of the build",
            limit_reached=True,
        )
    log = progress is not None and progress.log_enabled
    opt = appsi_highs(remaining, mip_gap, verbose or log, warm_start)
    with contextlib.redirect_stdout(_LogStream(progress)) if log else contextlib.nullcontext():
        res, interrupted = run_interruptible(lambda: opt.solve(m), lambda: _cancel(opt))
    tc = res.termination_condition
    if progress is not None:
        progress.update(incumbent=res.best_feasible_objective, bound=res.best_objective_bound)
    start: np.ndarray | None = None
    if res.best_feasible_objective is not None:
        res.solution_loader.load_vars()
        start = starts_from_pyomo(m)
    return Answer(
        start=start,
        build_s=build_s,
        dual=res.best_objective_bound,
        limit_reached=tc in (TC.maxTimeLimit, TC.maxIterations, TC.interrupted),
        interrupted=interrupted,
        infeasible=tc == TC.infeasible and not interrupted,
        status_text=str(tc),
    )


class _LogStream:
    """A text stream whose writes go to :meth:`Progress.log` (appsi streams to ``sys.stdout``)."""

    def __init__(self, progress: Observer | None) -> None:
        self.progress = progress

    def write(self, text: str) -> int:
        if self.progress is not None:
            self.progress.log(text)
        return len(text)

    def flush(self) -> None:
        pass


def _cancel(opt) -> None:
    """Ask appsi's HiGHS to stop (a no-op until appsi has made its ``highspy.Highs``)."""
    highs = getattr(opt, "_solver_model", None)  # appsi's solver object (not public API)
    if highs is not None:
        highs.cancelSolve()


def solve_lp(instance: Instance, hz: Horizon, time_limit: float | None = None) -> tuple[float, int]:
    """Build the Pyomo LP relaxation at horizon ``hz`` and solve it with ``appsi_highs``.

    Returns
    -------
    value : float
        The LP optimum (rounds).
    columns : int
        Number of columns of the model.

    Raises
    ------
    RuntimeError
        The LP was not solved to optimality (e.g. time limit), naming the condition.
    KeyboardInterrupt
        Ctrl-C during the solve (HiGHS is stopped first).
    """
    import pyomo.environ as pyo
    from pyomo.contrib.appsi.base import TerminationCondition as TC

    m = build_model(instance, hz, relax=True)
    opt = appsi_highs(time_limit)
    res, interrupted = run_interruptible(lambda: opt.solve(m), lambda: _cancel(opt))
    if interrupted:
        raise KeyboardInterrupt
    if res.termination_condition != TC.optimal:
        raise RuntimeError(
            f"{instance.name}: LP relaxation not solved: {res.termination_condition}"
        )
    res.solution_loader.load_vars()
    return float(pyo.value(m.tel)), len(m.IK)
