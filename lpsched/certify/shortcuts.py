"""The driver's shortcuts: :func:`solve_exact`, :func:`certify`, :func:`best_bound`,
:func:`lp_bound`, and the upper-bound schedule's model (:func:`exact_horizon`,
:func:`solve_lp`, :func:`export_model`).

Each is one call of :func:`lpsched.certify.solve` (or of the solvers of :mod:`lpsched.solvers`
from the best heuristic schedule) with its defaults, kept for the command line and for
researchers' scripts:

===================  ===============================================================
shortcut             call
===================  ===============================================================
``solve_exact``      ``solve(instance, ("mip",), SolveOptions(local_search=4000, ...))``
``certify``          ``solve(instance, "auto", SolveOptions(time_limit, threads, seed))``
``best_bound``       ``solve(instance, (method,), ...)``; ``auto``: the LP when it is
                     small enough and solved in time, else the combinatorial bound
``lp_bound``         ``solve(instance, ("lp",), ...)``
===================  ===============================================================

Source: ours.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from ..bounds import combinatorial_bound
from ..formulations.horizon import Horizon
from ..instance import Instance
from ..policies.local_search import best_heuristic, improve_schedule
from ..schedule import Schedule
from ..solvers.options import (
    AUTO_LP_MAX_NONZEROS,
    LP_MAX_NONZEROS,
    PYOMO_MAX_NONZEROS,
    SolveOptions,
    check_max_nonzeros,
    check_time_limit,
    refuse_if_surely_too_large,
    shift_arrivals,
)
from ..solvers.progress import Observer, Progress
from ..solvers.result import LPSolution, LPTooLargeError, Result, SolveStatus
from ..solvers.solve import (
    check_export_options,
    check_mip_options,
    model_horizon,
    solve_relaxation,
    write_model,
)
from .driver import AUTO, LOCAL_SEARCH_SECONDS, solve
from .methods import bound_methods

__all__ = [
    "solve_exact",
    "certify",
    "best_bound",
    "bound_choices",
    "lp_bound",
    "solve_lp",
    "exact_horizon",
    "export_model",
]


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
    overlap_cuts: int = 0,
    max_nonzeros: int | None = None,
    schedule: Schedule | None = None,
    verbose: bool = False,
    progress: Observer | None = None,
    work_limit: float | None = None,
) -> Result:
    """Solve the time-indexed MIP of SPEC section 3: the optimal TEL, or a bound and a gap
    (``lpsched exact``; the plan ``("mip",)`` of :func:`lpsched.certify.solve`).

    Parameters
    ----------
    instance : Instance
        Requests ``(s_i, o_i, a_i)`` and KV-cache budget ``M``; arrivals allowed, from any
        round on (the schedule returned is on the instance's own axis).
    solver : str
        A back end of :data:`lpsched.solvers.solve.SOLVERS`: ``"highs"`` or ``"cpsat"``.
    time_limit : float or None, default 60
        Seconds for the whole call, None for no limit: the local search gets at most a
        quarter of it (and at most 5 s), the model build and the solver what is left.
        With ``work_limit`` a safety net (the local search then stops at its moves or at a
        quarter of it).
    mip_gap : float, default 0.0
        Relative gap in ``[0, 1]`` at which to stop; 0: until optimality is proven.
    warm_start : bool, default True
        Give the best heuristic schedule as MIP start (HiGHS) or hint (CP-SAT).
    horizon, windows, aggregate, backend, threads, cover_cuts, overlap_cuts, max_nonzeros
        As :func:`lpsched.solvers.solve.solve_time_indexed`.
    local_search : int, default 4000
        Moves of the list local search (:func:`~lpsched.policies.local_search.improve_schedule`)
        that improves the best list policy before the solve; 0 = the list policies only.
    schedule : Schedule, optional
        A feasible schedule of ``instance`` to start from instead of the list policies and the
        local search. Raises :class:`~lpsched.schedule.InfeasibleScheduleError` when
        infeasible.
    verbose : bool, default False
        Without ``progress``: the solver log and an incumbent / bound / gap line every 2 s on
        standard error.
    progress : Observer, optional
        Receives the stages, the heuristic's TEL, the combinatorial bound and the solver's
        incumbents, bounds and log; the caller starts and closes it.
    work_limit : float, optional
        The solver's deterministic work (:class:`~lpsched.solvers.options.SolveOptions`:
        HiGHS' branch-and-bound nodes, a whole number; CP-SAT's deterministic seconds): a
        result that does not change with the machine's load, status ``work-limit`` when it
        stops the solve. None: none.

    Returns
    -------
    Result
        ``status`` ``optimal`` only when proven; ``work-limit`` or ``time-limit`` as the limit
        that stopped it (:attr:`~lpsched.solvers.result.Result.stopped_by`); ``interrupted``
        on Ctrl-C, with the best checked schedule so far (None when the list policies had not
        finished) and the best proven bound (the combinatorial one before the solver gave
        one). ``info`` has ``solver``, ``build_s``, ``solve_s``, ``T1``, ``T2``,
        ``heuristic_tel``, the model size and ``incumbent`` (``"solver"`` or
        ``"heuristic"``).

    Raises
    ------
    HorizonError
        ``horizon`` below ``min(T1, T2)``.
    LPTooLargeError
        The model would exceed ``max_nonzeros`` non-zeros.
    ValueError
        Unknown solver or backend; ``time_limit``, ``work_limit``, ``mip_gap`` or ``threads``
        out of range (:func:`~lpsched.solvers.solve.check_mip_options`).

    Notes
    -----
    Source: SPEC section 3 (the hindsight IP of Jaillet et al., arXiv 2502.07115).
    """
    max_nonzeros, time_limit, mip_gap, threads = check_mip_options(
        solver,
        backend,
        cover_cuts,
        max_nonzeros,
        time_limit,
        mip_gap,
        threads,
        overlap_cuts,
        work_limit,
    )
    if progress is None and verbose:
        with Progress("lines", log=True, label=f"exact {solver}") as own:
            return solve_exact(
                instance, solver, time_limit, mip_gap, warm_start, horizon=horizon,
                windows=windows, aggregate=aggregate, backend=backend, threads=threads,
                local_search=local_search, cover_cuts=cover_cuts, overlap_cuts=overlap_cuts,
                max_nonzeros=max_nonzeros, schedule=schedule, progress=own, work_limit=work_limit,
            )  # fmt: skip
    refuse_if_surely_too_large(shift_arrivals(instance)[0], max_nonzeros)
    mip = {
        "solver": solver,
        "warm_start": warm_start,
        "horizon": horizon,
        "windows": windows,
        "aggregate": aggregate,
        "backend": backend,
        "cover_cuts": cover_cuts,
        "overlap_cuts": overlap_cuts,
    }
    params = SolveOptions(
        time_limit=time_limit,
        threads=threads,
        mip_gap=mip_gap,
        max_nonzeros=max_nonzeros,
        local_search=local_search,
        method_options={"mip": mip},
        work_limit=work_limit,
    )
    return solve(instance, ("mip",), params, progress, start=schedule)


def certify(
    instance: Instance,
    time_limit: float | None = 60.0,
    *,
    threads: int | None = None,
    seed: int = 0,
    progress: Observer | None = None,
) -> Result:
    """The best schedule, the best valid lower bound and the gap of ``instance`` in
    ``time_limit`` seconds, by the automatic plan (``lpsched certify``).

    Parameters
    ----------
    instance : Instance
        Arrivals allowed (the schedule returned is on the instance's own axis).
    time_limit : float or None, default 60
        Seconds of wall time for the whole call; None: each method runs to its own end. The
        list policies and the combinatorial bound always run, so a very small limit can be
        overrun by their time (a second at n = 2000).
    threads : int, optional
        Threads of HiGHS and CP-SAT (a positive integer); default: theirs.
    seed : int, default 0
        Seed of the randomised searches (local search, LNS).
    progress : Observer, optional
        As :func:`lpsched.certify.solve`.

    Returns
    -------
    Result
        ``status`` ``optimal`` only when the bound meets the TEL, ``interrupted`` on Ctrl-C,
        else ``gap``; ``log`` has every improvement, ``info["plan"]`` the size class and the
        methods, ``info["methods"]`` the outcome of each.

    Raises
    ------
    TypeError
        ``instance`` not an :class:`Instance` (a path: the message says to read it with
        :func:`lpsched.read_instance`).
    ValueError
        ``time_limit``, ``threads`` or ``seed`` out of range.

    Notes
    -----
    Source: ours (:mod:`lpsched.certify.driver`).
    """
    if not isinstance(instance, Instance):
        hint = (
            ": read the file first, certify(lpsched.read_instance(path))"
            if isinstance(instance, (str, os.PathLike))
            else ""
        )
        raise TypeError(
            f"certify takes an Instance, got {type(instance).__name__} {instance!r:.60}{hint}"
        )
    params = SolveOptions(time_limit=time_limit, threads=threads, seed=seed)
    return solve(instance, AUTO, params, progress)


def bound_choices() -> list[str]:
    """The choices of :func:`best_bound` and ``lpsched bound --method``: ``auto`` and every
    lower-side method of :data:`~lpsched.certify.methods.METHODS`, in the registry's order."""
    return [AUTO, *bound_methods()]


def best_bound(
    instance: Instance,
    time_limit: float | None = 60.0,
    *,
    method: str = AUTO,
    max_nonzeros: int | None = None,
    progress: Observer | None = None,
) -> Result:
    """The best lower bound affordable in ``time_limit`` seconds, saying which it is
    (``lpsched bound``).

    Parameters
    ----------
    instance : Instance
        Arrivals from any round on (every bound is taken on the axis shifted by the earliest
        arrival, which changes none).
    time_limit : float or None, default 60
        Seconds for the bound: None (no limit) or a finite number ``> 0``.
    method : str, default "auto"
        ``auto``: the LP relaxation when its matrix has at most ``max_nonzeros`` non-zeros
        and HiGHS solves it within ``time_limit``, else the combinatorial bound; the larger of
        the LP and the combinatorial value is returned. Any other name is a lower-side method
        of :data:`~lpsched.certify.methods.METHODS` (:func:`bound_choices`), run alone (the
        plan ``(method,)``): on the best list schedule when it needs one.
    max_nonzeros : int or None
        Size limit of the LP: above it ``auto`` gives the combinatorial bound and ``lp``
        raises. None: :data:`AUTO_LP_MAX_NONZEROS` for ``auto`` (see
        ``benchmarks/bench_exact.py``), :data:`LP_MAX_NONZEROS` for ``lp``, the method's own
        for the others.
    progress : Observer, optional
        Receives the stage, the bound and the solver log.

    Returns
    -------
    Result
        ``bound_method`` (also ``method``) names the bound used, ``horizon`` the ``T`` of its
        model (None for the combinatorial bound); with ``auto``, ``info["reason"]`` says why
        and ``info`` has the other candidate's value when computed. Ctrl-C returns the best
        bound found so far with status ``interrupted`` (with ``auto``: the combinatorial one),
        never raises.

    Raises
    ------
    ValueError
        Unknown method; ``time_limit`` out of range; a budget below the method's minimum.
    LPTooLargeError
        ``method="lp"`` above ``max_nonzeros``.
    RuntimeError
        ``method="lp"`` not solved in time; a method's bound above the TEL of a feasible
        schedule (a bug in the method).

    Notes
    -----
    Source: SPEC sections 3 and 7; ours (the ``auto`` rule, measured in
    ``benchmarks/bench_exact.py``).
    """
    choices = bound_choices()
    if method not in choices:
        raise ValueError(f"unknown bound method {method!r}; choose from {', '.join(choices)}")
    given = max_nonzeros  # a method run alone applies its own default to None
    max_nonzeros = check_max_nonzeros(
        max_nonzeros, AUTO_LP_MAX_NONZEROS if method == AUTO else LP_MAX_NONZEROS
    )
    time_limit = check_time_limit(time_limit)
    if method == AUTO:
        return _auto_bound(instance, time_limit, max_nonzeros, progress)
    limit = max_nonzeros if method == "lp" else given
    params = SolveOptions(time_limit=time_limit, max_nonzeros=limit)
    res = solve(instance, (method,), params, progress)
    if "rejected" in res.info:
        raise RuntimeError(
            f"{method} reported a bound above the TEL of a feasible schedule (a bug in the "
            f"method): {res.info['rejected'][0]}"
        )
    return res


def _auto_bound(
    instance: Instance, time_limit: float | None, max_nonzeros: int, progress: Observer | None
) -> Result:
    """``best_bound(method="auto")``: the LP when small enough and solved in time, else (or
    when larger) the combinatorial bound, saying why."""
    t0 = time.perf_counter()
    shifted, _ = shift_arrivals(instance)
    comb = Result.of_bound(
        "combinatorial",
        float(combinatorial_bound(shifted)),
        time.perf_counter() - t0,
        info={"offline": shifted.offline},
    )
    try:  # before the heuristic: even the smallest horizon possible is too large
        refuse_if_surely_too_large(shifted, max_nonzeros)
        lp = lp_bound(instance, max_nonzeros=max_nonzeros, time_limit=time_limit, progress=progress)
    except KeyboardInterrupt:  # the combinatorial bound is what was found
        comb.status = SolveStatus.INTERRUPTED
        comb.info.update(reason="interrupted while solving the LP", interrupted=True)
        comb.runtime_s = time.perf_counter() - t0
        return comb
    except LPTooLargeError as exc:
        reason = f"LP too large: {exc}"
    except RuntimeError as exc:
        within = "" if time_limit is None else f" in {time_limit:g} s"
        reason = f"LP not solved{within} ({exc})"
    else:
        if lp.bound >= comb.bound:
            lp.info.update(reason=f"LP solved in {lp.runtime_s:.2f} s", combinatorial=comb.bound)
            lp.runtime_s = time.perf_counter() - t0
            return lp
        reason = f"combinatorial {comb.bound:g} above the LP value {lp.bound:g}"
        comb.info["lp"] = lp.bound
    comb.info["reason"] = reason
    comb.runtime_s = time.perf_counter() - t0
    return comb


def lp_bound(
    instance: Instance,
    horizon: int | None = None,
    *,
    windows: bool | None = None,
    backend: str = "matrix",
    max_nonzeros: int | None = None,
    time_limit: float | None = None,
    progress: Observer | None = None,
) -> Result:
    """The LP relaxation's value: a lower bound on the optimal TEL (rounds); the plan
    ``("lp",)`` of :func:`lpsched.certify.solve` (the LP at the tight horizon of the best
    list schedule).

    Parameters
    ----------
    instance : Instance
        Arrivals from any round on.
    horizon : int, optional
        ``T`` (rounds after the earliest arrival); default ``min(T1, T2)`` (with start
        windows). At ``T = T1`` this is the plain LP of SPEC section 3.
    windows : bool, optional
        Start windows; default: on when ``horizon`` is None, off when a horizon is given.
    backend : {"matrix", "pyomo"}
        ``matrix`` (fast, HiGHS via highspy) or the reference Pyomo model (``appsi_highs``).
    max_nonzeros : int or None
        Size limit (:class:`LPTooLargeError` above it); None: :data:`LP_MAX_NONZEROS`,
        :data:`PYOMO_MAX_NONZEROS` with ``backend="pyomo"``.
    time_limit : float, optional
        Seconds for HiGHS: None or a finite number ``> 0``.
    progress : Observer, optional
        Receives the stage and HiGHS' log.

    Returns
    -------
    Result
        ``bound_method="lp"``, ``bound`` the LP value (unrounded), ``horizon``, ``runtime_s``;
        ``info`` has ``build_s``, ``solve_s`` and the model size.

    Raises
    ------
    HorizonError, LPTooLargeError, RuntimeError, ValueError
        As :func:`lpsched.solvers.solve.relaxation_bound`.
    KeyboardInterrupt
        Ctrl-C during the solve (HiGHS is stopped first).
    """
    max_nonzeros = check_max_nonzeros(
        max_nonzeros, PYOMO_MAX_NONZEROS if backend == "pyomo" else LP_MAX_NONZEROS
    )
    if backend not in ("matrix", "pyomo"):
        raise ValueError(f"unknown backend {backend!r}; choose 'matrix' or 'pyomo'")
    params = SolveOptions(
        time_limit=check_time_limit(time_limit),
        max_nonzeros=max_nonzeros,
        method_options={"lp": {"backend": backend, "horizon": horizon, "windows": windows}},
    )
    return solve(instance, ("lp",), params, progress).check_interrupted()


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
    return model_horizon(instance, _upper_schedule(instance, local_search), horizon, windows)


def _upper_schedule(
    instance: Instance, local_search: int, time_limit: float | None = None
) -> Schedule:
    """The best list policy, improved by ``local_search`` moves (within ``time_limit`` s)."""
    sched = best_heuristic(instance)
    if local_search > 0:
        sched = improve_schedule(instance, sched, local_search, time_limit=time_limit)
    return sched


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
    """Solve the LP relaxation of the time-indexed model with HiGHS at the tight horizon of
    the best list schedule: :func:`lpsched.solvers.solve.solve_relaxation` from
    :func:`~lpsched.policies.local_search.best_heuristic`.

    Parameters
    ----------
    instance : Instance
    horizon, windows, aggregate, max_nonzeros, time_limit, progress
        As :func:`lpsched.solvers.solve.solve_relaxation`.

    Returns
    -------
    LPSolution

    Raises
    ------
    HorizonError, LPTooLargeError, RuntimeError, ValueError, KeyboardInterrupt
        As :func:`lpsched.solvers.solve.solve_relaxation`.
    """
    options = SolveOptions(time_limit=time_limit, max_nonzeros=max_nonzeros)
    if progress is not None:
        progress.set_stage("heuristic")
    return solve_relaxation(
        instance,
        best_heuristic(instance),
        options,
        horizon=horizon,
        windows=windows,
        aggregate=aggregate,
        progress=progress,
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
    """Write the time-indexed model (SPEC section 3) as an LP or MPS file for any solver, at
    the horizon ``lpsched exact`` uses (``lpsched export``).

    Parameters
    ----------
    instance, path, format, relax, backend, max_nonzeros, info
        As :func:`lpsched.solvers.solve.write_model`.
    horizon : int, optional
        ``T`` in rounds after the earliest arrival; default ``min(T1, T2)`` with start
        windows, ``UB`` from the same heuristic as :func:`solve_exact` (list policies and
        ``local_search`` moves within 5 s), hence the same ``T`` as ``lpsched exact``.
    local_search : int, default 4000
        Moves of the local search behind ``UB``; 0: list policies.

    Returns
    -------
    Path
        ``path``, once the whole file is written.

    Raises
    ------
    ValueError, LPTooLargeError, OSError
        As :func:`lpsched.solvers.solve.write_model`.
    """
    _, _, limit = check_export_options(path, format, backend, max_nonzeros)
    refuse_if_surely_too_large(shift_arrivals(instance)[0], limit)
    return write_model(
        instance,
        _upper_schedule(instance, local_search, LOCAL_SEARCH_SECONDS),
        path,
        format,
        backend,
        limit,
        relax=relax,
        horizon=horizon,
        info=info,
    )
