"""Exact TEL and lower bounds from the time-indexed model (SPEC section 3), reported honestly.

* :func:`solve_exact` -- the MIP with a back end of :data:`SOLVERS` (HiGHS, CP-SAT) or the Pyomo
  reference model; the best heuristic schedule (list policies, then a local search over priority
  lists, :mod:`lpsched.policies.local_search`) is the MIP start. The status says ``optimal``
  only when proven (:func:`~lpsched.solvers.result.exact_result`); otherwise the result carries
  the best bound and the gap.
* :func:`solve_lp` / :func:`lp_bound` -- the LP relaxation: a lower bound on the optimal TEL,
  and the fractional solution that Sorted-LP orders by.
* :func:`export_model` -- the model as an LP or MPS file for any solver.

The horizon is ``min(T1, T2)`` with per-request start windows (:func:`exact_horizon`; the
argument is in :mod:`lpsched.formulations.horizon`); a caller's horizon below that is refused
with :class:`~lpsched.formulations.horizon.HorizonError`.

Model-size limits, the checks of the options and the shift of the time axis by the earliest
arrival live in :mod:`lpsched.solvers.options` (one :class:`~lpsched.solvers.options.SolveOptions`,
checked once). ``time_limit`` covers the whole call. Ctrl-C stops a running solver and
:func:`solve_exact` raises :class:`~lpsched.solvers.result.SolveInterrupted` with the best
schedule and bound so far.

Nothing is printed (the HiGHS banner included) unless asked: ``verbose=True`` writes the
solver log and an incumbent / bound / gap line every 2 s on standard error, and a
:class:`~lpsched.solvers.progress.Progress` passed as ``progress=`` receives the same updates
(the command line's live line, ``lpsched exact -v``).

Source: SPEC section 3; the reporting rules follow PyJobShop's result object (ours otherwise).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..bounds import combinatorial_bound
from ..formulations.horizon import Horizon, horizon_t1, tight_horizon
from ..formulations.time_indexed import build_model, time_indexed_matrix
from ..instance import Instance
from ..io.atomic import install_file
from ..policies.local_search import best_heuristic, improve_schedule
from ..schedule import Schedule
from .backends import cpsat, highs, pyomo
from .options import (
    LP_MAX_NONZEROS,
    PYOMO_MAX_NONZEROS,
    check_max_nonzeros,
    check_mip_gap,
    check_size,
    check_threads,
    check_time_limit,
    refuse_if_surely_too_large,
    shift_arrivals,
)
from .progress import Observer, Progress
from .result import (
    Answer,
    BoundResult,
    ExactResult,
    LPSolution,
    SolveInterrupted,
    SolveStatus,
    exact_result,
)

__all__ = [
    "SOLVERS",
    "EXPORT_FORMATS",
    "EXPORT_BACKENDS",
    "exact_horizon",
    "solve_exact",
    "solve_lp",
    "lp_bound",
    "export_model",
]

#: Exact back ends of :func:`solve_exact`: name -> ``solve_mip(mat, *, start, time_limit,
#: mip_gap, threads, verbose, progress, **options) -> Answer`` (``progress`` a
#: :class:`~lpsched.solvers.progress.Progress` or None). A new back end is one module and one line.
SOLVERS: dict[str, Callable[..., Answer]] = {
    "highs": highs.solve_mip,
    "cpsat": cpsat.solve_mip,
}
#: File formats and builders of :func:`export_model`.
EXPORT_FORMATS = ("lp", "mps")
EXPORT_BACKENDS = ("pyomo", "highs")


def _unshift(result: ExactResult, instance: Instance, shift: int) -> ExactResult:
    """``result`` of the shifted instance as a result of ``instance`` (starts ``+ shift``)."""
    if shift:
        result.info["time_shift"] = shift
        if result.schedule is not None:
            sched = result.schedule
            result.schedule = Schedule(
                instance, sched.start + shift, policy=sched.policy, info=sched.info
            )
    return result


def exact_horizon(
    instance: Instance, horizon: int | None = None, windows: bool = True, local_search: int = 0
) -> Horizon:
    """The horizon of the exact model, from the best heuristic schedule.

    Parameters
    ----------
    instance : Instance
    horizon : int, optional
        A caller's ``T`` (rounds), checked against ``min(T1, T2)``.
    windows : bool, default True
        Keep the start windows of the waiting slack; False gives ``K_i = {a_i .. T - o_i}``.
    local_search : int, default 0
        Moves of :func:`~lpsched.policies.local_search.improve_schedule` on the best list
        policy's schedule (a smaller ``UB``).

    Returns
    -------
    Horizon
        Its ``schedule`` is the upper-bound schedule (the MIP start).

    Raises
    ------
    HorizonError
        ``horizon`` below ``min(T1, T2)``.

    Notes
    -----
    Source: SPEC section 3 (argument in :mod:`lpsched.formulations.horizon`).
    """
    sched = best_heuristic(instance)
    if local_search > 0:
        sched = improve_schedule(instance, sched, local_search)
    return _horizon_of(instance, sched, horizon, windows)


def _horizon_of(instance: Instance, sched: Schedule, horizon: int | None, windows: bool) -> Horizon:
    hz = tight_horizon(instance, sched, horizon)
    if not windows:
        return Horizon(hz.T, hz.T1, hz.T2, hz.upper_bound, None, hz.schedule)
    return hz


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
    max_nonzeros: int | None = None,
    schedule: Schedule | None = None,
    verbose: bool = False,
    progress: Observer | None = None,
) -> ExactResult:
    """Solve the time-indexed MIP of SPEC section 3: the optimal TEL, or a bound and a gap.

    Parameters
    ----------
    instance : Instance
        Requests ``(s_i, o_i, a_i)`` and KV-cache budget ``M``; arrivals allowed, from any
        round on (the model works on the axis shifted by the earliest arrival; the schedule
        returned is on the instance's own axis, ``info["time_shift"]`` the shift).
    solver : str
        A back end of :data:`SOLVERS`: ``"highs"`` (branch and cut) or ``"cpsat"`` (OR-Tools
        CP-SAT) on the same model.
    time_limit : float or None, default 60
        Seconds for the whole call, None for no limit: the local search gets at most a
        quarter of it (and at most 5 s), the model build and the solver what is left; a
        build cut short by the limit ends with ``time-limit`` and the heuristic schedule.
    mip_gap : float, default 0.0
        Relative gap in ``[0, 1]`` at which to stop; with 0 the solver runs until optimality
        is proven.
    warm_start : bool, default True
        Give the best heuristic schedule as MIP start (HiGHS) or hint (CP-SAT); it is also the
        fallback incumbent.
    horizon : int, optional
        ``T`` in rounds after the earliest arrival; default ``min(T1, T2)``. Must be
        ``>= min(T1, T2)``.
    windows : bool, default True
        Cut every start window to ``p_i <= a_i + UB - sum o`` (keeps all optimal schedules).
    aggregate : bool, default True
        One integer column per class of identical requests (removes their symmetry).
    backend : {"matrix", "pyomo"}
        ``matrix``: the numpy build handed to highspy / CP-SAT. ``pyomo``: the reference Pyomo
        model solved by ``appsi_highs`` (HiGHS only; ``aggregate`` ignored).
    threads : int, optional
        Solver threads (HiGHS threads, CP-SAT workers): a positive integer.
    local_search : int, default 4000
        Moves of the list local search (:func:`~lpsched.policies.local_search.improve_schedule`)
        that improves the best list policy before the solve; 0 = the list policies only. The
        better schedule is the MIP start, the fallback incumbent and the ``UB`` behind ``T2``
        and the windows.
    cover_cuts : int, default 0
        Rounds of GUB-cover cuts on the memory rows (:mod:`lpsched.formulations.cuts`) added
        to the HiGHS model in a cut loop on its LP before the MIP; 0 = none (HiGHS' own cuts
        only). Matrix backend and HiGHS only.
    max_nonzeros : int or None
        Largest model to build (a positive integer); None: :data:`LP_MAX_NONZEROS`, or
        :data:`PYOMO_MAX_NONZEROS` with ``backend="pyomo"``. A larger one is refused before
        any memory is spent on it (checked first with the smallest horizon the tight rule
        could choose, then exactly).
    schedule : Schedule, optional
        A feasible schedule of ``instance`` to start from instead of the list policies and the
        local search: the MIP start, the fallback incumbent and the ``UB`` behind ``T2`` and
        the windows (:func:`lpsched.certify` passes its best). Raises
        :class:`~lpsched.schedule.InfeasibleScheduleError` when infeasible.
    verbose : bool, default False
        Without ``progress``: the solver log and an incumbent / bound / gap line every 2 s on
        standard error (otherwise nothing is printed).
    progress : Observer, optional
        Receives the stage (``heuristic``, ``build``, ``solve``), the heuristic's TEL, the
        combinatorial bound and the solver's incumbents, bounds and log; the caller starts
        and closes it.

    Returns
    -------
    ExactResult
        ``status`` is ``optimal`` only when the solver proved it; the schedule passes
        :meth:`Schedule.check`. A HiGHS schedule that overflows the KV cache (floating-point
        tolerance) is cut off with exact cover cuts and the model solved again
        (``info["retry"]``, :func:`lpsched.solvers.backends.highs.solve_mip`).

    Raises
    ------
    HorizonError
        If ``horizon`` is given and below ``min(T1, T2)`` (or cannot hold any schedule).
    LPTooLargeError
        If the model would exceed ``max_nonzeros`` non-zeros.
    ValueError
        Unknown solver or backend; ``time_limit``, ``mip_gap`` or ``threads`` out of range.
    SolveInterrupted
        Ctrl-C (a ``KeyboardInterrupt``): the solver was stopped; ``.result`` has status
        ``interrupted``, the best checked schedule so far (None when the list policies had
        not finished) and the best proven bound.

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
    if cover_cuts and (solver != "highs" or backend != "matrix"):
        raise ValueError("cover_cuts needs solver='highs' and backend='matrix'")
    max_nonzeros = check_max_nonzeros(
        max_nonzeros, PYOMO_MAX_NONZEROS if backend == "pyomo" else LP_MAX_NONZEROS
    )
    time_limit = check_time_limit(time_limit)
    mip_gap = check_mip_gap(mip_gap)
    threads = check_threads(threads)
    if progress is None and verbose:
        with Progress("lines", log=True, label=f"exact {solver}") as own:
            return solve_exact(
                instance,
                solver,
                time_limit,
                mip_gap,
                warm_start,
                horizon=horizon,
                windows=windows,
                aggregate=aggregate,
                backend=backend,
                threads=threads,
                local_search=local_search,
                cover_cuts=cover_cuts,
                max_nonzeros=max_nonzeros,
                schedule=schedule,
                progress=own,
            )
    report = progress if progress is not None else Progress("quiet")
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + time_limit
    original, (instance, shift) = instance, shift_arrivals(instance)
    refuse_if_surely_too_large(instance, max_nonzeros)
    report.set_stage("heuristic")
    report.update(bound=combinatorial_bound(instance))
    if schedule is not None:
        given = Schedule(instance, schedule.start - shift, policy=schedule.policy).check()
    try:
        sched = given if schedule is not None else best_heuristic(instance)
    except KeyboardInterrupt:
        raise SolveInterrupted(_before_any_schedule(instance, solver, t0, shift)) from None
    report.update(incumbent=sched.tel)
    interrupted = False
    if local_search > 0 and schedule is None:
        budget = 5.0 if time_limit is None else min(5.0, time_limit / 4)
        try:
            sched = improve_schedule(instance, sched, local_search, time_limit=budget)
        except KeyboardInterrupt:  # keep the list policies' schedule
            interrupted = True
        report.update(incumbent=sched.tel)
    report.set_stage("build")
    hz = _horizon_of(instance, sched, horizon, windows)
    if not interrupted:
        check_size(instance, hz.T, hz.slack if windows else None, max_nonzeros)
    info: dict[str, Any] = {
        "T1": hz.T1,
        "T2": hz.T2,
        "heuristic_tel": hz.upper_bound,
        "heuristic": hz.schedule.policy if hz.schedule is not None else None,
        "backend": backend,
        "aggregate": aggregate and backend == "matrix",
        "windows": windows,
    }
    answer: Answer | None = None
    if interrupted:
        answer = Answer(None, None, interrupted=True, status_text="interrupted before the build")
    prep_s = time.perf_counter() - t0
    if answer is None and backend == "pyomo":
        answer = pyomo.solve_mip(
            instance,
            hz,
            warm_start=warm_start,
            time_limit=_remaining(deadline),
            mip_gap=mip_gap,
            progress=progress,
            info=info,
        )
    elif answer is None:
        try:
            mat = time_indexed_matrix(instance, hz if windows else hz.T, aggregate=aggregate)
            info.update(columns=mat.ncol, rows=mat.nrow, nonzeros=mat.nnz)
            start_x = None
            if warm_start and hz.schedule is not None and mat.fits(hz.schedule.start):
                start_x = mat.values_from_starts(hz.schedule.start)
        except KeyboardInterrupt:
            answer = Answer(None, None, interrupted=True, status_text="interrupted in the build")
        prep_s = time.perf_counter() - t0
        left = _remaining(deadline)
        if answer is None and left is not None and left <= 0:
            answer = Answer(None, None, limit_reached=True, status_text="time limit reached")
        if answer is None:
            options = {"cover_cuts": cover_cuts} if cover_cuts else {}
            report.set_stage("solve")
            answer = SOLVERS[solver](
                mat,
                start=start_x,
                time_limit=left,
                mip_gap=mip_gap,
                threads=threads,
                verbose=False,
                progress=progress,  # None: no callbacks at all (they cost a little)
                **options,
            )
    build_s = prep_s + answer.build_s
    solve_s = time.perf_counter() - t0 - build_s
    res = exact_result(
        instance,
        answer,
        solver=solver,
        hz=hz,
        warm_start=warm_start,
        t0=t0,
        build_s=build_s,
        solve_s=solve_s,
        info=info,
    )
    res = _unshift(res, original, shift)
    report.set_stage(str(res.status))
    report.update(incumbent=res.objective, bound=res.bound)
    if answer.interrupted:
        raise SolveInterrupted(res)
    return res


def _remaining(deadline: float | None) -> float | None:
    """Seconds left until ``deadline`` (a ``time.perf_counter()`` value), None without one."""
    return None if deadline is None else deadline - time.perf_counter()


def _before_any_schedule(instance: Instance, solver: str, t0: float, shift: int) -> ExactResult:
    """The result of a run interrupted before the list policies gave a schedule."""
    runtime = time.perf_counter() - t0
    return ExactResult(
        status=SolveStatus.INTERRUPTED,
        objective=None,
        bound=float(combinatorial_bound(instance)),
        gap=None,
        runtime_s=runtime,
        build_s=runtime,
        solve_s=0.0,
        horizon=horizon_t1(instance),
        solver=solver,
        schedule=None,
        info={"incumbent": None, "solver_status": "interrupted in the heuristic"}
        | ({"time_shift": shift} if shift else {}),
    )


def solve_lp(
    instance: Instance,
    horizon: int | None = None,
    *,
    windows: bool | None = None,
    aggregate: bool = True,
    max_nonzeros: int | None = None,
    time_limit: float | None = None,
    progress: Observer | None = None,
) -> LPSolution:
    """Solve the LP relaxation of the time-indexed model with HiGHS (the fast matrix path).

    Parameters
    ----------
    instance : Instance
        Arrivals from any round on (solved on the axis shifted by the earliest arrival).
    horizon : int, optional
        ``T`` (rounds after the earliest arrival); default ``min(T1, T2)``. Must be
        ``>= min(T1, T2)``.
    windows : bool, optional
        Start windows ``p_i <= a_i + UB - sum o``; default: on when ``horizon`` is None, off
        when a horizon is given (so ``horizon=T1`` is exactly the LP of SPEC section 3).
    aggregate : bool, default True
        Classes of identical requests (same LP value; :mod:`lpsched.formulations.time_indexed`).
    max_nonzeros : int or None
        Refuse larger models with :class:`LPTooLargeError` (a positive integer; None: the
        default :data:`LP_MAX_NONZEROS`).
    time_limit : float, optional
        Seconds for HiGHS: None or a finite number ``> 0``.
    progress : Observer, optional
        Receives the stage and HiGHS' log (when its ``log`` is on).

    Returns
    -------
    LPSolution
        Its ``matrix`` is the model of the shifted instance, ``shift`` the earliest arrival;
        :meth:`~lpsched.solvers.result.LPSolution.fractional_completion` is on the instance's
        own axis.

    Raises
    ------
    HorizonError
        ``horizon`` below ``min(T1, T2)``.
    LPTooLargeError
        The model exceeds ``max_nonzeros``.
    RuntimeError
        HiGHS did not reach an optimal LP solution (e.g. time limit).
    ValueError
        ``time_limit`` out of range.
    KeyboardInterrupt
        Ctrl-C during the solve (HiGHS is stopped first).

    Notes
    -----
    Source: SPEC section 3 (LP relaxation, ``0 <= x <= 1``). With windows the LP is that of a
    MIP with the same optimum, hence still a lower bound (:mod:`lpsched.formulations.horizon`).
    """
    max_nonzeros = check_max_nonzeros(max_nonzeros)
    time_limit = check_time_limit(time_limit)
    t0 = time.perf_counter()
    instance, shift = shift_arrivals(instance)
    if windows is None:
        windows = horizon is None
    if progress is not None:
        progress.set_stage("heuristic")
    hz = exact_horizon(instance, horizon, windows)
    check_size(instance, hz.T, hz.slack, max_nonzeros)
    if progress is not None:
        progress.set_stage("build")
    mat = time_indexed_matrix(instance, hz, aggregate=aggregate)
    build_s = time.perf_counter() - t0
    if progress is not None:
        progress.set_stage("LP")
    value, x = highs.solve_lp(mat, time_limit, progress)
    if progress is not None:
        progress.update(bound=value)
    solve_s = time.perf_counter() - t0 - build_s
    return LPSolution(value=value, x=x, matrix=mat, build_s=build_s, solve_s=solve_s, shift=shift)


def lp_bound(
    instance: Instance,
    horizon: int | None = None,
    *,
    windows: bool | None = None,
    backend: str = "matrix",
    max_nonzeros: int | None = None,
    time_limit: float | None = None,
    progress: Observer | None = None,
) -> BoundResult:
    """The LP relaxation's value: a lower bound on the optimal TEL (rounds).

    Parameters
    ----------
    instance : Instance
        Arrivals from any round on (solved on the axis shifted by the earliest arrival).
    horizon : int, optional
        ``T`` (rounds after the earliest arrival); default ``min(T1, T2)`` (with start
        windows). At ``T = T1`` this is the plain LP of SPEC section 3; a smaller valid ``T``
        gives a value at least as large.
    windows : bool, optional
        See :func:`solve_lp`.
    backend : {"matrix", "pyomo"}
        ``matrix`` (fast, HiGHS via highspy) or the reference Pyomo model (``appsi_highs``).
    max_nonzeros : int or None
        Size limit (:class:`LPTooLargeError` above it); a positive integer, None: the default
        (:data:`LP_MAX_NONZEROS`, :data:`PYOMO_MAX_NONZEROS` with ``backend="pyomo"``).
    time_limit : float, optional
        Seconds for HiGHS: None or a finite number ``> 0``.
    progress : Observer, optional
        See :func:`solve_lp` (matrix backend).

    Returns
    -------
    BoundResult
        ``method="lp"``, ``bound`` the LP value (unrounded), ``horizon``, ``runtime_s``;
        ``info`` has ``build_s``, ``solve_s`` and the model size.

    Raises
    ------
    HorizonError, LPTooLargeError, RuntimeError, ValueError, KeyboardInterrupt
        As :func:`solve_lp`.
    """
    max_nonzeros = check_max_nonzeros(
        max_nonzeros, PYOMO_MAX_NONZEROS if backend == "pyomo" else LP_MAX_NONZEROS
    )
    time_limit = check_time_limit(time_limit)
    t0 = time.perf_counter()
    if backend == "matrix":
        sol = solve_lp(
            instance,
            horizon,
            windows=windows,
            max_nonzeros=max_nonzeros,
            time_limit=time_limit,
            progress=progress,
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
    if windows is None:
        windows = horizon is None
    instance, _ = shift_arrivals(instance)
    hz = exact_horizon(instance, horizon, windows)
    check_size(instance, hz.T, hz.slack, max_nonzeros)
    value, columns = pyomo.solve_lp(instance, hz, time_limit)
    return BoundResult(
        method="lp",
        bound=value,
        runtime_s=time.perf_counter() - t0,
        horizon=hz.T,
        info={"columns": columns, "backend": backend},
    )


def export_model(
    instance: Instance,
    path: str | os.PathLike[str],
    format: str = "lp",
    *,
    relax: bool = False,
    horizon: int | None = None,
    backend: str = "pyomo",
    max_nonzeros: int | None = None,
    local_search: int = 4000,
    info: dict[str, Any] | None = None,
) -> Path:
    """Write the time-indexed model (SPEC section 3) as an LP or MPS file for any solver.

    Parameters
    ----------
    instance : Instance
        Arrivals from any round on: the model is written on the time axis shifted by the
        earliest arrival ``a_min`` (start ``k`` in the file is round ``k + a_min``; the same
        TEL).
    path : path-like
        Output file. Written through a temporary file in the same folder, renamed once
        complete, so a failed write leaves no file.
    format : {"lp", "mps"}
    relax : bool, default False
        Write the LP relaxation instead of the MIP.
    horizon : int, optional
        ``T`` in rounds after the earliest arrival; default ``min(T1, T2)`` with start
        windows, ``UB`` from the same heuristic as :func:`solve_exact` (list policies and
        ``local_search`` moves within 5 s), hence the same ``T`` as ``lpsched exact``.
        Must be ``>= min(T1, T2)``.
    backend : {"pyomo", "highs"}
        ``pyomo``: the reference model with its names (``x[i,k]``, ``assign[i]``,
        ``memory[t]``), for small and medium instances. ``highs``: the matrix build written
        by HiGHS (generic names, fast for large instances).
    max_nonzeros : int or None
        Size limit; None: :data:`PYOMO_MAX_NONZEROS` (``pyomo``) or :data:`LP_MAX_NONZEROS`
        (``highs``).
    local_search : int, default 4000
        Moves of the local search behind ``UB`` (as :func:`solve_exact`); 0: list policies.
    info : dict, optional
        Receives ``horizon``, ``T1``, ``T2``, ``heuristic_tel`` (rounds), ``time_shift``
        and ``windows``; the same facts head the file as comment lines.

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    ValueError
        Unknown format or backend. :class:`HorizonError` for a too short horizon.
    LPTooLargeError
        The model would have more than ``max_nonzeros`` non-zeros (module docstring).
    OSError
        Naming ``path``: its folder does not exist or cannot be written, or the writer failed.
    """
    fmt = format.lower()
    if fmt not in EXPORT_FORMATS:
        raise ValueError(f"unknown format {format!r}; choose 'lp' or 'mps'")
    if backend not in EXPORT_BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose 'pyomo' or 'highs'")
    p = Path(path)
    if not p.parent.is_dir():
        raise OSError(f"{p}: cannot write the model: no folder {p.parent}")
    limit = check_max_nonzeros(
        max_nonzeros, LP_MAX_NONZEROS if backend == "highs" else PYOMO_MAX_NONZEROS
    )
    original = instance
    instance, shift = shift_arrivals(instance)
    refuse_if_surely_too_large(instance, limit)
    sched = best_heuristic(instance)
    if local_search > 0:
        sched = improve_schedule(instance, sched, local_search, time_limit=5.0)
    windows = horizon is None
    hz = _horizon_of(instance, sched, horizon, windows)
    check_size(instance, hz.T, hz.slack if windows else None, limit)
    facts = {
        "horizon": hz.T,
        "T1": hz.T1,
        "T2": hz.T2,
        "heuristic_tel": hz.upper_bound,
        "time_shift": shift,
        "windows": windows,
    }
    if info is not None:
        info.update(facts)
    header = [
        f"lpsched {'LP relaxation' if relax else 'MIP'} of {original.name}: n = {instance.n}, "
        f"M = {instance.memory}",
        f"horizon T = {hz.T} (T1 = {hz.T1}, T2 = {hz.T2}, heuristic TEL {hz.upper_bound}"
        f"{', start windows' if windows else ''}); start k is round k + {shift}",
    ]
    if backend == "highs":
        mat = time_indexed_matrix(instance, hz, aggregate=False)
        highs.write_model(mat, p, relax=relax, format=fmt, header=header)
        return p
    from pyomo.opt import ProblemFormat

    m = build_model(instance, hz, relax=relax)
    pformat = ProblemFormat.cpxlp if fmt == "lp" else ProblemFormat.mps
    tmp = p.with_name(f".{p.stem}.tmp-{os.getpid()}.{fmt}")
    try:
        m.write(str(tmp), format=pformat, io_options={"symbolic_solver_labels": True})
        if not tmp.is_file():
            raise OSError("Pyomo wrote no file")
        highs.prepend_header(tmp, fmt, header)
        install_file(tmp, p)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise OSError(f"{p}: cannot write the model: {exc.strerror or exc}") from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return p
