"""The time-indexed model of SPEC section 3, solved from a given upper-bound schedule.

The toolkit below the policies: every function takes a feasible ``schedule`` of the instance
(its TEL is the ``UB`` behind the horizon ``min(T1, T2)`` and the start windows, and the MIP
start), so nothing here runs a policy. The driver (:func:`lpsched.certify.solve`) and its
shortcuts (:func:`lpsched.solve_exact`, :func:`lpsched.lp_bound`, :func:`lpsched.export_model`)
find that schedule first.

* :func:`solve_time_indexed` -- the MIP with a back end of :data:`SOLVERS` (HiGHS, CP-SAT) or
  the Pyomo reference model; the status says ``optimal`` only when proven
  (:func:`~lpsched.solvers.result.exact_result`), otherwise the result carries the best bound
  and the gap; Ctrl-C stops the solver and returns what it found (status ``interrupted``).
* :func:`solve_relaxation` / :func:`relaxation_bound` -- the LP relaxation: a lower bound on
  the optimal TEL, and the fractional solution that Sorted-LP orders by.
* :func:`write_model` -- the model as an LP or MPS file for any solver.

Model-size limits, the checks of the options and the shift of the time axis by the earliest
arrival live in :mod:`lpsched.solvers.options`. Nothing is printed (the HiGHS banner
included): a :class:`~lpsched.solvers.progress.Progress` passed as ``progress=`` receives the
stage, the incumbents, the bounds and the solver log.

Source: SPEC section 3; the reporting rules follow PyJobShop's result object (ours otherwise).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..formulations.horizon import Horizon, tight_horizon
from ..formulations.time_indexed import build_model, time_indexed_matrix
from ..instance import Instance
from ..io.atomic import install_file
from ..plugins import Registry
from ..schedule import Schedule
from .backends import cpsat, highs, pyomo
from .options import (
    LP_MAX_NONZEROS,
    PYOMO_MAX_NONZEROS,
    SolveOptions,
    check_max_nonzeros,
    check_mip_gap,
    check_size,
    check_threads,
    check_time_limit,
    check_work_limit,
    refuse_if_surely_too_large,
    shift_arrivals,
)
from .progress import Observer, Progress
from .result import Answer, LPSolution, Result, exact_result

__all__ = [
    "SOLVERS",
    "EXPORT_FORMATS",
    "EXPORT_BACKENDS",
    "LP_OPTIONS",
    "WORK_UNITS",
    "model_horizon",
    "check_mip_options",
    "check_export_options",
    "solve_time_indexed",
    "solve_relaxation",
    "relaxation_bound",
    "write_model",
]

#: Exact back ends of :func:`solve_time_indexed`: name -> ``solve_mip(mat, *, start,
#: time_limit, mip_gap, threads, verbose, progress, **options) -> Answer`` (``progress`` a
#: :class:`~lpsched.solvers.progress.Progress` or None), a :class:`~lpsched.plugins.Registry`
#: whose built-ins are these. A new back end is one module and one line.
SOLVERS: Registry[Callable[..., Answer]] = Registry(
    "solver",
    {
        "highs": highs.solve_mip,
        "cpsat": cpsat.solve_mip,
    },
)
#: The back ends that take a work limit, and its unit (:class:`SolveOptions`).
WORK_UNITS = {"highs": "branch-and-bound nodes", "cpsat": "deterministic seconds"}
#: The options of the LP solves given none: no time limit, the default size limit.
LP_OPTIONS = SolveOptions(time_limit=None)
#: File formats and builders of :func:`write_model`.
EXPORT_FORMATS = ("lp", "mps")
EXPORT_BACKENDS = ("pyomo", "highs")


def model_horizon(
    instance: Instance, schedule: Schedule, horizon: int | None = None, windows: bool = True
) -> Horizon:
    """The horizon of the time-indexed model from a feasible ``schedule`` (its TEL is ``UB``).

    Parameters
    ----------
    instance : Instance
    schedule : Schedule
        Feasible; its TEL gives ``T2`` and the waiting slack ``UB - sum o``.
    horizon : int, optional
        A caller's ``T`` (rounds), checked against ``min(T1, T2)``.
    windows : bool, default True
        Keep the start windows of the waiting slack; False gives ``K_i = {a_i .. T - o_i}``.

    Returns
    -------
    Horizon
        Its ``schedule`` is ``schedule`` (the MIP start).

    Raises
    ------
    HorizonError
        ``horizon`` below ``min(T1, T2)``.
    InfeasibleScheduleError
        ``schedule`` infeasible.

    Notes
    -----
    Source: SPEC section 3 (argument in :mod:`lpsched.formulations.horizon`).
    """
    hz = tight_horizon(instance, schedule, horizon)
    if not windows:
        return Horizon(hz.T, hz.T1, hz.T2, hz.upper_bound, None, hz.schedule)
    return hz


def check_mip_options(
    solver: str,
    backend: str,
    cover_cuts: int,
    max_nonzeros: int | None,
    time_limit: float | None,
    mip_gap: float,
    threads: int | None,
    overlap_cuts: int = 0,
    work_limit: float | None = None,
) -> tuple[int, float | None, float, int | None]:
    """Check the options of :func:`solve_time_indexed` before any work.

    Returns
    -------
    tuple
        ``(max_nonzeros, time_limit, mip_gap, threads)`` checked, the size limit's default
        (:data:`LP_MAX_NONZEROS`, :data:`PYOMO_MAX_NONZEROS` with ``backend="pyomo"``) filled in.

    Raises
    ------
    ValueError
        Unknown solver or backend, ``cover_cuts`` or ``overlap_cuts`` without HiGHS' matrix
        build, an option out of range; a ``work_limit`` (:func:`check_work_limit`) on another
        back end than HiGHS' or CP-SAT's matrix build, or not a whole number of nodes for
        HiGHS.

    Notes
    -----
    Source: ours.
    """
    if solver not in SOLVERS:
        raise ValueError(f"unknown solver {solver!r}; choose from {', '.join(SOLVERS)}")
    if backend not in ("matrix", "pyomo"):
        raise ValueError(f"unknown backend {backend!r}; choose 'matrix' or 'pyomo'")
    if backend == "pyomo" and solver != "highs":
        raise ValueError("the pyomo backend solves with HiGHS only")
    for name, rounds in (("cover_cuts", cover_cuts), ("overlap_cuts", overlap_cuts)):
        if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 0:
            raise ValueError(f"{name} must be a non-negative integer (rounds), got {rounds!r}")
        if rounds and (solver != "highs" or backend != "matrix"):
            raise ValueError(f"{name} needs solver='highs' and backend='matrix'")
    if check_work_limit(work_limit, solver) is not None and (
        solver not in WORK_UNITS or backend != "matrix"
    ):
        raise ValueError(
            f"work_limit needs backend='matrix' and solver {' or '.join(map(repr, WORK_UNITS))}"
        )
    limit = check_max_nonzeros(
        max_nonzeros, PYOMO_MAX_NONZEROS if backend == "pyomo" else LP_MAX_NONZEROS
    )
    return limit, check_time_limit(time_limit), check_mip_gap(mip_gap), check_threads(threads)


def _unshift(result: Result, instance: Instance, shift: int) -> Result:
    """``result`` of the shifted instance as a result of ``instance`` (starts ``+ shift``)."""
    if shift:
        result.info["time_shift"] = shift
        if result.schedule is not None:
            sched = result.schedule
            result.schedule = Schedule(
                instance, sched.start + shift, policy=sched.policy, info=sched.info
            )
    return result


def solve_time_indexed(
    instance: Instance,
    schedule: Schedule,
    options: SolveOptions | None = None,
    *,
    solver: str = "highs",
    warm_start: bool = True,
    horizon: int | None = None,
    windows: bool = True,
    aggregate: bool = True,
    backend: str = "matrix",
    cover_cuts: int = 0,
    overlap_cuts: int = 0,
    progress: Observer | None = None,
) -> Result:
    """Solve the time-indexed MIP of SPEC section 3 from ``schedule``: the optimal TEL, or a
    bound and a gap.

    Parameters
    ----------
    instance : Instance
        Requests ``(s_i, o_i, a_i)`` and KV-cache budget ``M``; arrivals from any round on
        (the model works on the axis shifted by the earliest arrival; the schedule returned is
        on the instance's own axis, ``info["time_shift"]`` the shift).
    schedule : Schedule
        A feasible schedule of ``instance``: the ``UB`` behind ``T2`` and the windows, the MIP
        start (HiGHS) or hint (CP-SAT) and the fallback incumbent.
    options : SolveOptions, optional
        ``time_limit``: seconds for the build and the solve (default 60; None: no limit; a
        build cut short by the limit ends with ``time-limit`` and ``schedule``); ``mip_gap``:
        the relative gap in ``[0, 1]`` at which to stop (0: until optimality is proven);
        ``threads``: solver threads (HiGHS threads, CP-SAT workers); ``work_limit``: the
        solver's deterministic work (HiGHS nodes, CP-SAT deterministic seconds; status
        ``work-limit`` when it stops the solve); ``max_nonzeros``: the
        largest model to build (None: :data:`LP_MAX_NONZEROS`, or :data:`PYOMO_MAX_NONZEROS`
        with ``backend="pyomo"``). Default: ``SolveOptions()``.
    solver : str
        A back end of :data:`SOLVERS`: ``"highs"`` (branch and cut) or ``"cpsat"`` (OR-Tools
        CP-SAT) on the same model.
    warm_start : bool, default True
        Give ``schedule`` as MIP start or hint, and keep it as the fallback incumbent.
    horizon : int, optional
        ``T`` in rounds after the earliest arrival; default ``min(T1, T2)``.
    windows : bool, default True
        Cut every start window to ``p_i <= a_i + UB - sum o`` (keeps all optimal schedules).
    aggregate : bool, default True
        One integer column per class of identical requests (removes their symmetry).
    backend : {"matrix", "pyomo"}
        ``matrix``: the numpy build handed to highspy / CP-SAT. ``pyomo``: the reference Pyomo
        model solved by ``appsi_highs`` (HiGHS only; ``aggregate`` ignored).
    cover_cuts : int, default 0
        Rounds of GUB-cover cuts on the memory rows (:mod:`lpsched.formulations.cuts`) added
        to the HiGHS model before the MIP; matrix backend and HiGHS only.
    overlap_cuts : int, default 0
        Rounds of overlap clique cuts (:mod:`lpsched.formulations.overlap`, SPEC section 3.1)
        added the same way: what the certify method ``mip-overlap`` runs.
    progress : Observer, optional
        Receives the stage (``build``, ``solve``), the solver's incumbents, bounds and log.

    Returns
    -------
    Result
        ``status`` is ``optimal`` only when proven; ``interrupted`` when Ctrl-C stopped the
        build or the solver (the best checked schedule and bound so far). The schedule passes
        :meth:`Schedule.check`. ``info`` has ``solver``, ``build_s``, ``solve_s``, ``T1``,
        ``T2``, ``heuristic_tel``, ``heuristic`` (the policy of ``schedule``), the model size,
        ``incumbent`` (``"solver"`` or ``"heuristic"``) and the solver's status text.

    Raises
    ------
    HorizonError, InfeasibleScheduleError
        As :func:`model_horizon`.
    LPTooLargeError
        The model would exceed ``max_nonzeros`` non-zeros.
    ValueError
        As :func:`check_mip_options`.

    Notes
    -----
    Source: SPEC section 3 (the hindsight IP of Jaillet et al., arXiv 2502.07115). Windows and
    aggregation are ours; their effect is measured in ``benchmarks/bench_exact.py``.
    """
    opts = SolveOptions() if options is None else options
    max_nonzeros, time_limit, mip_gap, threads = check_mip_options(
        solver,
        backend,
        cover_cuts,
        opts.max_nonzeros,
        opts.time_limit,
        opts.mip_gap,
        opts.threads,
        overlap_cuts,
        opts.work_limit,
    )
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + time_limit
    original, (instance, shift) = instance, shift_arrivals(instance)
    sched = Schedule(instance, schedule.start - shift, policy=schedule.policy).check()
    report = progress if progress is not None else Progress("quiet")
    report.set_stage("build")
    hz = model_horizon(instance, sched, horizon, windows)
    check_size(instance, hz.T, hz.slack if windows else None, max_nonzeros)
    info: dict[str, Any] = {
        "T1": hz.T1,
        "T2": hz.T2,
        "heuristic_tel": hz.upper_bound,
        "heuristic": schedule.policy,
        "backend": backend,
        "aggregate": aggregate and backend == "matrix",
        "windows": windows,
    }
    answer: Answer | None = None
    prep_s = time.perf_counter() - t0
    if backend == "pyomo":
        answer = pyomo.solve_mip(
            instance,
            hz,
            warm_start=warm_start,
            time_limit=_remaining(deadline),
            mip_gap=mip_gap,
            progress=progress,
            info=info,
        )
    else:
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
            cuts: dict[str, float] = {"cover_cuts": cover_cuts} if cover_cuts else {}
            if overlap_cuts:
                cuts["overlap_cuts"] = overlap_cuts
            if opts.work_limit is not None:  # a plug-in back end is never given one
                cuts["work_limit"] = opts.work_limit
            report.set_stage("solve")
            answer = SOLVERS[solver](
                mat,
                start=start_x,
                time_limit=left,
                mip_gap=mip_gap,
                threads=threads,
                verbose=False,
                progress=progress,  # None: no callbacks at all (they cost a little)
                **cuts,
            )
    build_s = prep_s + answer.build_s
    res = exact_result(
        instance,
        answer,
        solver=solver,
        hz=hz,
        warm_start=warm_start,
        t0=t0,
        build_s=build_s,
        solve_s=time.perf_counter() - t0 - build_s,
        info=info,
    )
    res = _unshift(res, original, shift)
    report.set_stage(str(res.status))
    report.update(incumbent=res.objective, bound=res.bound)
    return res


def _shifted_horizon(
    instance: Instance,
    schedule: Schedule,
    horizon: int | None,
    windows: bool,
    max_nonzeros: int,
) -> tuple[Instance, int, Horizon]:
    """The shifted instance, the shift, and the size-checked horizon of ``schedule`` there."""
    instance, shift = shift_arrivals(instance)
    sched = Schedule(instance, schedule.start - shift, policy=schedule.policy)
    hz = model_horizon(instance, sched, horizon, windows)
    check_size(instance, hz.T, hz.slack, max_nonzeros)
    return instance, shift, hz


def _remaining(deadline: float | None) -> float | None:
    """Seconds left until ``deadline`` (a ``time.perf_counter()`` value), None without one."""
    return None if deadline is None else deadline - time.perf_counter()


def solve_relaxation(
    instance: Instance,
    schedule: Schedule,
    options: SolveOptions | None = None,
    *,
    horizon: int | None = None,
    windows: bool | None = None,
    aggregate: bool = True,
    progress: Observer | None = None,
) -> LPSolution:
    """Solve the LP relaxation of the time-indexed model with HiGHS (the fast matrix path): a
    lower bound on the optimal TEL and the fractional solution that Sorted-LP orders by.

    Parameters
    ----------
    instance : Instance
        Arrivals from any round on (solved on the axis shifted by the earliest arrival).
    schedule : Schedule
        A feasible schedule of ``instance``: its TEL is the ``UB`` behind ``T2`` and the
        windows.
    options : SolveOptions, optional
        ``time_limit``: seconds for HiGHS (None: no limit); ``max_nonzeros``: refuse larger
        models with :class:`LPTooLargeError` (None: :data:`LP_MAX_NONZEROS`). Default: no time
        limit, the default size limit (:data:`LP_OPTIONS`).
    horizon : int, optional
        ``T`` (rounds after the earliest arrival); default ``min(T1, T2)``. Must be
        ``>= min(T1, T2)``.
    windows : bool, optional
        Start windows ``p_i <= a_i + UB - sum o``; default: on when ``horizon`` is None, off
        when a horizon is given (so ``horizon=T1`` is exactly the LP of SPEC section 3).
    aggregate : bool, default True
        Classes of identical requests (same LP value; :mod:`lpsched.formulations.time_indexed`).
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
    KeyboardInterrupt
        Ctrl-C during the solve (HiGHS is stopped first).

    Notes
    -----
    Source: SPEC section 3 (LP relaxation, ``0 <= x <= 1``). With windows the LP is that of a
    MIP with the same optimum, hence still a lower bound (:mod:`lpsched.formulations.horizon`).
    """
    opts = LP_OPTIONS if options is None else options
    max_nonzeros = check_max_nonzeros(opts.max_nonzeros)
    t0 = time.perf_counter()
    windows = horizon is None if windows is None else windows
    instance, shift, hz = _shifted_horizon(instance, schedule, horizon, windows, max_nonzeros)
    if progress is not None:
        progress.set_stage("build")
    mat = time_indexed_matrix(instance, hz, aggregate=aggregate)
    build_s = time.perf_counter() - t0
    if progress is not None:
        progress.set_stage("LP")
    value, x = highs.solve_lp(mat, opts.time_limit, progress)
    if progress is not None:
        progress.update(bound=value)
    solve_s = time.perf_counter() - t0 - build_s
    return LPSolution(value=value, x=x, matrix=mat, build_s=build_s, solve_s=solve_s, shift=shift)


def relaxation_bound(
    instance: Instance,
    schedule: Schedule,
    options: SolveOptions | None = None,
    *,
    backend: str = "matrix",
    horizon: int | None = None,
    windows: bool | None = None,
    progress: Observer | None = None,
) -> Result:
    """The LP relaxation's value, a lower bound on the optimal TEL (rounds), by either build of
    the model: :func:`solve_relaxation`'s matrix, or the reference Pyomo model.

    Parameters
    ----------
    instance, schedule, windows
        As :func:`solve_relaxation`.
    options : SolveOptions, optional
        ``time_limit`` (seconds for HiGHS) and ``max_nonzeros`` (the size limit,
        :class:`LPTooLargeError` above it; None: :data:`LP_MAX_NONZEROS`, or
        :data:`PYOMO_MAX_NONZEROS` with ``backend="pyomo"``). Default: :data:`LP_OPTIONS`.
    backend : {"matrix", "pyomo"}
        ``matrix`` (fast, HiGHS via highspy) or the reference Pyomo model (``appsi_highs``).
    horizon : int, optional
        ``T`` (rounds after the earliest arrival); default ``min(T1, T2)`` (with start
        windows). At ``T = T1`` this is the plain LP of SPEC section 3; a smaller valid ``T``
        gives a value at least as large.
    progress : Observer, optional
        See :func:`solve_relaxation` (matrix backend).

    Returns
    -------
    Result
        Status ``bound``, ``bound_method="lp"``, ``bound`` the LP value (unrounded),
        ``horizon``, ``runtime_s``; ``info`` has ``build_s``, ``solve_s`` and the model size.

    Raises
    ------
    HorizonError, LPTooLargeError, RuntimeError, ValueError, KeyboardInterrupt
        As :func:`solve_relaxation`.
    """
    opts = LP_OPTIONS if options is None else options
    max_nonzeros = check_max_nonzeros(
        opts.max_nonzeros, PYOMO_MAX_NONZEROS if backend == "pyomo" else LP_MAX_NONZEROS
    )
    t0 = time.perf_counter()
    if backend == "matrix":
        sol = solve_relaxation(
            instance, schedule, opts, horizon=horizon, windows=windows, progress=progress
        )
        mat = sol.matrix
        info = {
            "build_s": sol.build_s,
            "solve_s": sol.solve_s,
            "columns": mat.ncol,
            "nonzeros": mat.nnz,
            "backend": backend,
        }
        return Result.of_bound("lp", sol.value, time.perf_counter() - t0, sol.horizon, info)
    if backend != "pyomo":
        raise ValueError(f"unknown backend {backend!r}; choose 'matrix' or 'pyomo'")
    windows = horizon is None if windows is None else windows
    instance, _, hz = _shifted_horizon(instance, schedule, horizon, windows, max_nonzeros)
    value, columns = pyomo.solve_lp(instance, hz, opts.time_limit)
    info = {"columns": columns, "backend": backend}
    return Result.of_bound("lp", value, time.perf_counter() - t0, hz.T, info)


def check_export_options(
    path: str | os.PathLike[str], format: str, backend: str, max_nonzeros: int | None
) -> tuple[Path, str, int]:
    """Check the options of :func:`write_model` before any work.

    Returns
    -------
    tuple
        ``(path, format, max_nonzeros)``: the path, the format in lower case, the size limit
        (default :data:`PYOMO_MAX_NONZEROS` for ``pyomo``, :data:`LP_MAX_NONZEROS` for
        ``highs``).

    Raises
    ------
    ValueError
        Unknown format or backend, ``max_nonzeros`` not a positive integer.
    OSError
        ``path``'s folder does not exist.

    Notes
    -----
    Source: ours.
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
    return p, fmt, limit


def write_model(
    instance: Instance,
    schedule: Schedule,
    path: str | os.PathLike[str],
    format: str = "lp",
    backend: str = "pyomo",
    max_nonzeros: int | None = None,
    *,
    relax: bool = False,
    horizon: int | None = None,
    info: dict[str, Any] | None = None,
) -> Path:
    """Write the time-indexed model (SPEC section 3) as an LP or MPS file for any solver.

    Parameters
    ----------
    instance : Instance
        Arrivals from any round on: the model is written on the time axis shifted by the
        earliest arrival ``a_min`` (start ``k`` in the file is round ``k + a_min``; the same
        TEL).
    schedule : Schedule
        A feasible schedule of ``instance``: its TEL is the ``UB`` behind ``T2`` and the
        windows.
    path : path-like
        Output file. Written through a temporary file in the same folder, renamed once
        complete, so a failed write leaves no file.
    format : {"lp", "mps"}
    backend : {"pyomo", "highs"}
        ``pyomo``: the reference model with its names (``x[i,k]``, ``assign[i]``,
        ``memory[t]``), for small and medium instances. ``highs``: the matrix build written
        by HiGHS (generic names, fast for large instances).
    max_nonzeros : int or None
        Size limit; None: :data:`PYOMO_MAX_NONZEROS` (``pyomo``) or :data:`LP_MAX_NONZEROS`
        (``highs``).
    relax : bool, default False
        Write the LP relaxation instead of the MIP.
    horizon : int, optional
        ``T`` in rounds after the earliest arrival; default ``min(T1, T2)`` with start
        windows. Must be ``>= min(T1, T2)``.
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
        As :func:`check_export_options`. :class:`HorizonError` for a too short horizon.
    LPTooLargeError
        The model would have more than ``max_nonzeros`` non-zeros.
    OSError
        Naming ``path``: its folder does not exist or cannot be written, or the writer failed.
    """
    p, fmt, limit = check_export_options(path, format, backend, max_nonzeros)
    original = instance
    instance, shift = shift_arrivals(instance)
    refuse_if_surely_too_large(instance, limit)
    sched = Schedule(instance, schedule.start - shift, policy=schedule.policy)
    windows = horizon is None
    hz = model_horizon(instance, sched, horizon, windows)
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
