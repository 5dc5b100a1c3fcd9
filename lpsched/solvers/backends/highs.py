"""The HiGHS back end (highspy): builds the time-indexed model, runs it, maps its status.

The matrix comes from :func:`~lpsched.formulations.time_indexed.time_indexed_matrix`; this module
only fills a ``HighsLp`` and sets options, so there is no second copy of a constraint. It owns
the MIP run (:func:`solve_mip`, with the optional cover-cut loop of
:mod:`lpsched.formulations.cuts`), the LP relaxation (:func:`solve_lp`) and the LP/MPS writer
(:func:`write_model`).

Every run goes through :func:`run_highs`: ``Highs.run()`` (which releases the GIL) in a worker
thread, stopped at Ctrl-C through HiGHS' interrupt callbacks (``kCallbackMipInterrupt``,
``kCallbackSimplexInterrupt``, ``kCallbackIpmInterrupt``: ``data_in.user_interrupt``).

Every ``highspy.Highs`` is made by :func:`new_highs`, silent from the start: highspy's
constructor enables the callbacks, which prints HiGHS' banner ("Running HiGHS ...") on the C
standard output once per process unless ``output_flag`` is already off. The log is shown only
on request, through a :class:`~lpsched.solvers.progress.Progress` (``cbLogging``, with
``log_to_console`` off, so it reaches Python's ``sys.stderr`` and notebook cells alike), which
also receives the incumbent (``cbMipImprovingSolution``) and the dual bound (``cbMipInterrupt``).

HiGHS checks the memory rows in floating point with a feasibility tolerance, so with
coefficients near ``1e10`` it may accept a schedule that overflows the KV cache by a few tokens.
:func:`solve_mip` checks its schedule in exact integer arithmetic and, when it overflows, adds
exact cover cuts that cut that schedule off (:func:`~lpsched.formulations.cuts.overflow_cuts`,
valid for every schedule) and solves again.
Source: ours (HiGHS: Huangfu and Hall, Math. Prog. Comp. 2018; highspy API).
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ...formulations.cuts import MemoryRows, overflow_cuts, separate_cover_cuts
from ...formulations.overlap import separate_conflict_cliques, separate_overlap_cuts
from ...formulations.time_indexed import TimeIndexedMatrix, time_indexed_matrix
from ...io.atomic import install_file
from ...schedule import memory_at
from ..progress import Observer
from ..result import Answer, run_interruptible

__all__ = [
    "REPAIR_ROUNDS",
    "CUT_SHARE",
    "PRESOLVE_MAX_NONZEROS",
    "PRESOLVE_FULL_SECONDS",
    "presolve_max_nonzeros",
    "new_highs",
    "master_highs",
    "rerun_highs",
    "attach_progress",
    "build_highs",
    "run_highs",
    "set_start",
    "add_cover_cuts",
    "solve_mip",
    "solve_lp",
    "write_model",
    "prepend_header",
]

#: Re-solves of :func:`solve_mip` with exact cover cuts after HiGHS returned a schedule that
#: overflows the KV cache (floating-point tolerance); one or two are typical.
REPAIR_ROUNDS = 20
#: Share of :func:`solve_mip`'s time limit that its cut loop may take before the MIP runs (at
#: n = 50 of ``jaillet-synthetic`` 30 rounds of overlap cuts took over a minute; ours).
CUT_SHARE = 0.3
#: Largest MIP (constraint non-zeros) :func:`solve_mip` lets HiGHS presolve. Above it HiGHS'
#: MIP presolve reduced nothing on the time-indexed models measured and ran 21-57 s without
#: checking the time limit or the interrupt callbacks (``jaillet-synthetic`` n = 46, 743,143
#: non-zeros: ``exact --time-limit 60`` took 65-91 s and its bound stayed the heuristic's; n = 30,
#: 516,152: 42 s on a 20 s limit), while without it the root LP gave a bound within the limit.
#: Below it (every instance of the reproductions, certify's small plan) presolve stays on: at
#: n = 60 of ``paper-scaled`` (77,922) it takes 1.7 s and HiGHS proves optimality in 46 s,
#: without it not in 60 s. With less time left than :data:`PRESOLVE_FULL_SECONDS` the cap
#: shrinks in proportion (:func:`presolve_max_nonzeros`): presolve ran 3.7 s of a 2 s limit at
#: 349,564 non-zeros (``scaled-mix`` n = 110) and 6-9 s of a 20 s limit at 311,445
#: (``jaillet-synthetic`` n = 30), about 40,000-95,000 non-zeros a second. Ours.
PRESOLVE_MAX_NONZEROS = 400_000
#: Time left (s) from which a MIP of up to :data:`PRESOLVE_MAX_NONZEROS` is presolved; below
#: it the cap is 6,667 non-zeros a second left (``paper-scaled`` n = 60, 77,922, from 12 s).
PRESOLVE_FULL_SECONDS = 60.0


@functools.cache
def _quiet_highs_class() -> type:
    import highspy

    class QuietHighs(highspy.Highs):
        """``highspy.Highs`` with ``output_flag`` off before its constructor enables the
        callbacks (the call that would print the banner)."""

        def enableCallbacks(self) -> None:
            if not getattr(self, "_lpsched_quiet", False):
                self._lpsched_quiet = True
                self.setOptionValue("output_flag", False)
            super().enableCallbacks()

    return QuietHighs


def new_highs():
    """A ``highspy.Highs`` that prints nothing, the banner included, until ``output_flag`` is
    switched on.

    Returns
    -------
    highspy.Highs
        An instance of a subclass; ``output_flag`` is False.

    Notes
    -----
    highspy 1.16 prints "Running HiGHS ... Copyright" on the C standard output from
    ``Highs.__init__`` (at ``setCallback``) the first time in a process, whatever is set
    afterwards. Source: ours (checked by a subprocess test that nothing reaches fd 1 or 2).
    """
    return _quiet_highs_class()()


def attach_progress(h, progress: Observer) -> None:
    """Feed ``progress`` from the callbacks of the ``highspy.Highs`` object ``h``.

    With ``progress.log_enabled`` HiGHS' log goes to :meth:`Progress.log` (``output_flag`` on,
    ``log_to_console`` off); the incumbent TEL and the dual bound (rounds) go to
    :meth:`Progress.update` at every improving solution and at HiGHS' interrupt checks of the
    branch and bound. Source: ours (highspy callbacks).
    """
    if progress.log_enabled:
        h.setOptionValue("output_flag", True)
        h.setOptionValue("log_to_console", False)
        h.cbLogging += lambda event: progress.log(event.message)

    def improving(event) -> None:
        progress.update(incumbent=event.data_out.objective_function_value)

    def checking(event) -> None:
        out = event.data_out
        progress.update(incumbent=out.mip_primal_bound, bound=out.mip_dual_bound)

    h.cbMipImprovingSolution += improving
    h.cbMipInterrupt += checking


def build_highs(
    mat: TimeIndexedMatrix,
    *,
    relax: bool = False,
    time_limit: float | None = None,
    mip_gap: float = 0.0,
    threads: int | None = None,
    verbose: bool = False,
    progress: Observer | None = None,
    integer_units: np.ndarray | None = None,
    work_limit: float | None = None,
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
        HiGHS log on the C standard output (without ``progress``).
    progress : Observer, optional
        Receives the log (when its ``log`` is on), the incumbent and the bound
        (:func:`attach_progress`).
    integer_units : ndarray of bool, shape (U,), optional
        Without ``relax``: only the columns of the units marked True are integer, the others
        continuous (:mod:`lpsched.certify.methods.partial_integrality`); None: every column integer.
    work_limit : float, optional
        Branch-and-bound nodes of the MIP (``mip_max_nodes``, a whole number): a stop there is
        HiGHS' ``Solution limit reached``, the same on a busy machine as on an idle one.

    Returns
    -------
    highspy.Highs
        Silent unless ``verbose`` or ``progress.log_enabled`` (:func:`new_highs`).
    """
    import highspy

    h = new_highs()
    if verbose and progress is None:
        h.setOptionValue("output_flag", True)
    if progress is not None:
        attach_progress(h, progress)
    if time_limit is not None:
        h.setOptionValue("time_limit", float(time_limit))
    _set_threads(h, threads)
    if work_limit is not None and not relax:
        h.setOptionValue("mip_max_nodes", int(work_limit))
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
    if not relax and integer_units is None:
        lp.integrality_ = [highspy.HighsVarType.kInteger] * mat.ncol
    elif not relax:
        kinds = np.array([highspy.HighsVarType.kContinuous, highspy.HighsVarType.kInteger])
        integer = np.asarray(integer_units, dtype=bool)[mat.col_unit]
        lp.integrality_ = kinds[integer.astype(np.int64)].tolist()
    h.passModel(lp)
    return h


def _set_threads(h, threads: int | None) -> None:
    """HiGHS' ``threads`` option on ``h`` (nothing for None)."""
    import highspy

    if threads is not None:
        # HiGHS keeps one thread pool per process, sized by the first solve; a later solve that
        # asks for another size fails ("Not Set") unless the pool is reset first.
        highspy.Highs.resetGlobalScheduler(True)
        h.setOptionValue("threads", int(threads))


def master_highs(threads: int | None = None, solver: str | None = None):
    """An empty, silent ``highspy.Highs`` for a restricted master LP that grows row by row and
    column by column (the column generations of :mod:`lpsched.solvers.colgen` and
    :mod:`lpsched.solvers.aggregated`).

    Parameters
    ----------
    threads : int, optional
        HiGHS ``threads`` option (the thread pool reset as in :func:`build_highs`).
    solver : {"ipm", "pdlp"}, optional
        HiGHS' ``solver``, run from scratch at each solve and without crossover (crossover
        alone takes minutes on the masters at n = 2000); None: HiGHS' simplex, re-solved from
        the basis (its ``simplex_strategy`` is the caller's).

    Returns
    -------
    highspy.Highs
        :func:`new_highs`, with those options.

    Notes
    -----
    Source: ours.
    """
    h = new_highs()
    if solver is not None:
        h.setOptionValue("solver", solver)
        h.setOptionValue("run_crossover", "off")
    _set_threads(h, threads)
    return h


def rerun_highs(h, deadline: float | None) -> bool:
    """Run the master ``h`` again in what is left until ``deadline``.

    Parameters
    ----------
    h : highspy.Highs
        A model run before, perhaps (HiGHS' clock runs on over the runs of one model, so its
        ``time_limit`` is set to its run time so far plus what is left).
    deadline : float or None
        ``time.perf_counter()`` value; None: no limit.

    Returns
    -------
    bool
        False when no time was left (``h`` not run); True after the run, whatever its status.

    Raises
    ------
    KeyboardInterrupt
        Ctrl-C during the run (HiGHS is stopped first, :func:`run_highs`).

    Notes
    -----
    Source: ours.
    """
    if deadline is not None:
        left = deadline - time.perf_counter()
        if left <= 0:
            return False
        h.setOptionValue("time_limit", h.getRunTime() + left)
    if run_highs(h, deadline):
        raise KeyboardInterrupt
    return True


class _Cancel:
    """HiGHS' interrupt callbacks on one ``highspy.Highs``: after :meth:`stop`, the next check
    of the simplex, IPM or MIP loop sets ``user_interrupt`` and HiGHS returns with status
    ``Interrupted by user`` and what it has."""

    def __init__(self, h) -> None:
        self.requested = False
        h.cbSimplexInterrupt += self._check
        h.cbIpmInterrupt += self._check
        h.cbMipInterrupt += self._check

    def _check(self, event) -> None:
        if self.requested:
            event.interrupt()

    def stop(self) -> None:
        self.requested = True


def run_highs(h, deadline: float | None = None) -> bool:
    """``h.run()`` so that Ctrl-C stops it (:func:`~lpsched.solvers.result.run_interruptible`).

    Parameters
    ----------
    h : highspy.Highs
        Model and options set.
    deadline : float, optional
        ``time.perf_counter()`` value after which HiGHS is stopped even if its own
        ``time_limit`` has not stopped it.

    Returns
    -------
    bool
        Whether Ctrl-C stopped the run; ``h`` then holds the incumbent and bound so far.
    """
    import highspy

    cancel = getattr(h, "_lpsched_cancel", None)
    if cancel is None:
        cancel = _Cancel(h)
        h._lpsched_cancel = cancel
    cancel.requested = False

    def work() -> None:
        try:
            h.run()
        finally:
            # as highspy's own threaded solve: release this thread's task scheduler
            reset = getattr(highspy.Highs, "resetThreadScheduler", None)
            if reset is not None:
                reset(False)

    _, interrupted = run_interruptible(work, cancel.stop, deadline)
    return interrupted


def set_start(h, start: np.ndarray) -> None:
    """Give HiGHS the integer column vector ``start`` (shape (ncol,)) as its MIP start."""
    idx = np.flatnonzero(start).astype(np.int32)
    h.setSolution(int(idx.size), idx, np.asarray(start, dtype=np.float64)[idx])


def add_cover_cuts(
    h,
    mat: TimeIndexedMatrix,
    rounds: int = 30,
    tol: float = 1e-4,
    *,
    overlap: int = 0,
    deadline: float | None = None,
    on_value: Callable[[float], Any] | None = None,
) -> dict:
    """Cut loop on the LP relaxation held by the ``highspy.Highs`` object ``h``.

    Solves the LP (columns relaxed temporarily), separates GUB-cover cuts
    (:mod:`lpsched.formulations.cuts`; in the first ``rounds`` rounds) and overlap clique cuts
    (:mod:`lpsched.formulations.overlap`; in the first ``overlap`` rounds), adds them as
    rows, re-solves, until no cut is found or the LP value rises by less than ``tol``
    (relative) in a round, or ``deadline`` (a ``time.perf_counter()`` value) passes; then
    restores the integrality of ``mat``'s columns. The cuts are valid for every schedule (the
    modules' docstrings), so the MIP optimum is unchanged and every LP value on the way is a
    lower bound on the optimal TEL: each is passed to ``on_value`` when given.

    Returns
    -------
    dict
        ``cuts`` (number added), ``cut_rounds``, ``lp_before`` and ``lp_after`` (LP values);
        ``overlap_cuts`` (how many of the cuts are overlap cuts) when ``overlap`` is set.

    Raises
    ------
    KeyboardInterrupt
        Ctrl-C during an LP solve (the solve is stopped first, the integrality restored).
    """
    import highspy

    integrality = [highspy.HighsVarType.kInteger] * mat.ncol
    idx = np.arange(mat.ncol, dtype=np.int32)
    h.changeColsIntegrality(mat.ncol, idx, np.array([highspy.HighsVarType.kContinuous] * mat.ncol))
    rows = MemoryRows(mat) if rounds else None
    info: dict[str, Any] = {"cuts": 0, "cut_rounds": 0, "lp_before": None, "lp_after": None}
    if overlap:
        info["overlap_cuts"] = 0
    try:
        if run_highs(h, deadline):
            raise KeyboardInterrupt
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return info
        val = h.getInfo().objective_function_value
        info["lp_before"] = info["lp_after"] = val
        if on_value is not None:
            on_value(val)
        for r in range(max(rounds, overlap)):
            if deadline is not None and time.perf_counter() >= deadline:
                break
            x = np.asarray(h.getSolution().col_value)
            cuts = separate_cover_cuts(rows, x) if rows is not None and r < rounds else []
            if r < overlap:
                more = separate_overlap_cuts(mat, x) + separate_conflict_cliques(mat, x)
                info["overlap_cuts"] += len(more)
                cuts += more
            if not cuts:
                break
            for cols, rhs in cuts:
                h.addRow(-highspy.kHighsInf, float(rhs), int(cols.size), cols, np.ones(cols.size))
            info["cuts"] += len(cuts)
            info["cut_rounds"] = r + 1
            if run_highs(h, deadline):
                raise KeyboardInterrupt
            if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
                break
            new = h.getInfo().objective_function_value
            info["lp_after"] = new
            if on_value is not None:
                on_value(new)
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
    progress: Observer | None = None,
    cover_cuts: int = 0,
    overlap_cuts: int = 0,
    repair_rounds: int = REPAIR_ROUNDS,
    work_limit: float | None = None,
) -> Answer:
    """Run HiGHS branch and cut on the MIP of ``mat`` and map its status.

    Parameters
    ----------
    mat : TimeIndexedMatrix
    start : ndarray, shape (ncol,), optional
        Column values of a feasible schedule, the MIP start.
    time_limit : float, optional
        Seconds for the whole call: the build, the cover-cut loop, the run and the repairs.
    mip_gap, threads, verbose, progress, work_limit
        See :func:`build_highs` (``work_limit``: nodes of each run, a repair's re-solve
        included).
    cover_cuts : int, default 0
        Rounds of the cover-cut loop (:func:`add_cover_cuts`) before the MIP; 0 = none.
    overlap_cuts : int, default 0
        Rounds of that loop that also separate overlap clique cuts
        (:mod:`lpsched.formulations.overlap`); 0 = none.
    repair_rounds : int, default REPAIR_ROUNDS
        Re-solves with exact cover cuts when HiGHS' schedule overflows the KV cache (module
        docstring); 0 = none.

    Returns
    -------
    Answer
        Starts of the incumbent, HiGHS' dual bound, whether a limit or Ctrl-C stopped it;
        HiGHS' load, model, presolve, solve and postsolve failures become ``error``.
        ``info["retry"]`` records a repair: the overflowing rounds, the cuts and re-solves.
        A schedule that still overflows is returned as it is (the check of
        :func:`~lpsched.solvers.result.exact_result` then reports ``error``).
    """
    import highspy

    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + float(time_limit)
    info: dict = {}
    build = functools.partial(
        build_highs,
        time_limit=time_limit,
        mip_gap=mip_gap,
        threads=threads,
        verbose=verbose,
        progress=progress,
        work_limit=work_limit,
    )
    try:
        h = build(mat)
        if cover_cuts or overlap_cuts:
            cut_deadline = None if deadline is None else t0 + CUT_SHARE * (deadline - t0)
            info.update(
                add_cover_cuts(
                    h, mat, rounds=cover_cuts, overlap=overlap_cuts, deadline=cut_deadline
                )
            )
    except KeyboardInterrupt:
        return Answer.without_run(
            time.perf_counter() - t0,
            "interrupted before the run",
            interrupted=True,
            info=info,
        )
    if start is not None:
        set_start(h, start)
    build_s = time.perf_counter() - t0
    run = _MipRun(h, mat, start, build, st=highspy.HighsModelStatus.kNotset)
    while run.run(deadline) and run.repair(repair_rounds):
        pass
    if run.repairs:
        info["retry"] = run.repairs
    info["nodes"] = run.nodes
    return run.answer(build_s, info)


@dataclass
class _MipRun:
    """:func:`solve_mip`'s model (unaggregated by a repair), its MIP start and last run."""

    h: Any
    mat: TimeIndexedMatrix
    start: np.ndarray | None
    build: Callable[[TimeIndexedMatrix], Any]
    st: Any = None
    text: str = ""
    sol: np.ndarray | None = None
    dual: float | None = None
    nodes: int = 0
    interrupted: bool = False
    out_of_time: bool = False
    rows: MemoryRows | None = None
    repairs: dict[str, Any] = field(default_factory=dict)

    def run(self, deadline: float | None) -> bool:
        """One HiGHS run in what is left until ``deadline``; False when nothing was left."""
        import highspy

        remaining = None if deadline is None else deadline - time.perf_counter()
        if remaining is not None and remaining <= 0:  # the build or the repairs used it up
            self.out_of_time = True
            self.text = self.text or "time limit reached before the run"
            return False
        h = self.h
        if remaining is not None:
            h.setOptionValue("time_limit", float(remaining))
        _presolve_by_size(h, self.mat, remaining)
        self.interrupted = run_highs(h, deadline)
        self.st = h.getModelStatus()
        self.text = h.modelStatusToString(self.st)
        hinfo = h.getInfo()
        self.nodes += int(hinfo.mip_node_count)
        infeasible = self.st == highspy.HighsModelStatus.kInfeasible
        self.dual = float(hinfo.mip_dual_bound) if not infeasible else None
        self.sol = None
        if hinfo.primal_solution_status == 2:  # kSolutionStatusFeasible
            self.sol = self.mat.starts_from_values(np.asarray(h.getSolution().col_value))
        return True

    def repair(self, repair_rounds: int) -> bool:
        """Cut off an overflowing schedule (module docstring); False: nothing to re-solve."""
        import highspy

        sol = self.sol
        if sol is None or self.interrupted or self.repairs.get("resolves", 0) >= repair_rounds:
            return False
        over = _overflow_rounds(self.mat, sol)
        if not over:
            return False
        if not self.repairs:
            self.repairs.update(
                reason="HiGHS' schedule overflowed the KV cache (floating-point tolerance)",
                rounds=over[:5],
                cuts=0,
                resolves=0,
            )
        if self.rows is None:
            self.rows = MemoryRows(self.mat)
        cuts = overflow_cuts(self.rows, sol)
        if len(cuts) < len(over) and self.mat.aggregated:
            # a class of identical requests runs in a round no cut covers: solve the binary
            # model instead (the same optimum), where every overflow has its cover
            self._disaggregate()
            cuts = overflow_cuts(self.rows, sol)
            self.repairs["aggregate"] = False
        elif not cuts:
            return False
        for cols, rhs in cuts:
            self.h.addRow(-highspy.kHighsInf, float(rhs), int(cols.size), cols, np.ones(cols.size))
        self.repairs["cuts"] += len(cuts)
        self.repairs["resolves"] += 1
        self.sol = None  # cut off; the next run may find another
        if self.start is not None:
            set_start(self.h, self.start)
        return True

    def _disaggregate(self) -> None:
        """The binary model (one column per request and start) in place of the aggregated one."""
        mat = self.mat
        heuristic = None if self.start is None else mat.starts_from_values(self.start)
        self.mat = time_indexed_matrix(mat.instance, mat.T, slack=mat.slack, aggregate=False)
        self.start = None if heuristic is None else self.mat.values_from_starts(heuristic)
        self.h = self.build(self.mat)
        self.rows = MemoryRows(self.mat)

    def answer(self, build_s: float, info: dict) -> Answer:
        """The :class:`~lpsched.solvers.result.Answer` of the last run."""
        import highspy

        MS = highspy.HighsModelStatus
        failures = (
            MS.kNotset, MS.kLoadError, MS.kModelError, MS.kPresolveError, MS.kSolveError,
            MS.kPostsolveError, MS.kUnknown,
        )  # fmt: skip
        limits = (
            MS.kTimeLimit, MS.kInterrupt, MS.kIterationLimit, MS.kSolutionLimit, MS.kMemoryLimit,
            MS.kHighsInterrupt,  # type: ignore[attr-defined]  # at runtime; absent from highspy's stubs
        )  # fmt: skip
        failed = not (self.interrupted or self.out_of_time) and self.st in failures
        return Answer(
            start=self.sol,
            build_s=build_s,
            dual=self.dual,
            limit_reached=self.out_of_time or self.st in limits,
            # mip_max_nodes is the only solution limit set (mip_max_improving_sols never is)
            work_limit_reached=self.st == MS.kSolutionLimit and not self.out_of_time,
            interrupted=self.interrupted,
            infeasible=self.st == MS.kInfeasible and not self.interrupted,
            error=f"HiGHS stopped with status '{self.text}'" if failed else None,
            status_text=self.text,
            info=info,
        )


def presolve_max_nonzeros(seconds_left: float | None) -> int:
    """The largest MIP (constraint non-zeros) HiGHS may presolve with ``seconds_left`` of its
    time limit (None: no limit): :data:`PRESOLVE_MAX_NONZEROS`, scaled down in proportion below
    :data:`PRESOLVE_FULL_SECONDS`, since HiGHS' MIP presolve checks neither the time limit nor
    the interrupt callbacks. Source: ours (the measurements beside the constants)."""
    if seconds_left is None:
        return PRESOLVE_MAX_NONZEROS
    share = min(1.0, max(0.0, seconds_left) / PRESOLVE_FULL_SECONDS)
    return int(PRESOLVE_MAX_NONZEROS * share)


def _presolve_by_size(h, mat: TimeIndexedMatrix, seconds_left: float | None) -> None:
    """Switch HiGHS' presolve off on ``h`` when ``mat`` has more non-zeros than
    :func:`presolve_max_nonzeros` allows for ``seconds_left``."""
    if mat.nnz > presolve_max_nonzeros(seconds_left):
        h.setOptionValue("presolve", "off")


def _overflow_rounds(mat: TimeIndexedMatrix, start: np.ndarray) -> list[int]:
    """Rounds ``t`` in which the schedule ``start`` holds more than ``M`` tokens (exact)."""
    inst = mat.instance
    rounds = np.arange(1, mat.T + 1, dtype=np.int64)
    mem = memory_at(inst.prefill, start, start + inst.decode, rounds)
    return rounds[mem > inst.memory].tolist()


def solve_lp(
    mat: TimeIndexedMatrix, time_limit: float | None = None, progress: Observer | None = None
) -> tuple[float, np.ndarray]:
    """Solve the LP relaxation of ``mat`` with HiGHS (``progress``: see :func:`build_highs`).

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
    KeyboardInterrupt
        Ctrl-C during the solve (HiGHS is stopped first).
    """
    import highspy

    h = build_highs(mat, relax=True, time_limit=time_limit, progress=progress)
    if run_highs(h):
        raise KeyboardInterrupt
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        raise RuntimeError(
            f"{mat.instance.name}: LP relaxation not solved: "
            f"{h.modelStatusToString(h.getModelStatus())}"
        )
    return float(h.getInfo().objective_function_value), np.asarray(h.getSolution().col_value)


def write_model(
    mat: TimeIndexedMatrix,
    path: str | os.PathLike[str],
    *,
    relax: bool = False,
    format: str | None = None,
    header: list[str] | None = None,
) -> None:
    """Write the model of ``mat`` (the MIP, or with ``relax`` its LP relaxation) with HiGHS'
    own writer.

    HiGHS writes a temporary file in the same folder, renamed to ``path`` only once HiGHS
    reports success and the file exists, so a failed write leaves no file, whole or partial.

    Parameters
    ----------
    mat : TimeIndexedMatrix
    path : path-like
    relax : bool, default False
    format : {"lp", "mps"}, optional
        Default: the suffix of ``path``.
    header : list of str, optional
        Comment lines put at the top of the file (:func:`prepend_header`).

    Raises
    ------
    OSError
        Naming ``path``: the folder does not exist or cannot be written, or HiGHS reported an
        error or wrote nothing.
    """
    import highspy

    target = Path(path)
    fmt = (format or target.suffix.lstrip(".")).lower()
    if fmt not in ("lp", "mps"):
        raise ValueError(f"{target}: unknown model format {fmt!r}; choose 'lp' or 'mps'")
    if not target.parent.is_dir():
        raise OSError(f"{target}: cannot write the model: no folder {target.parent}")
    tmp = target.with_name(f".{target.stem}.tmp-{os.getpid()}.{fmt}")
    h = build_highs(mat, relax=relax)
    try:
        status = h.writeModel(str(tmp))  # kWarning: generic names c0.., r0.. (we set none)
        if status == highspy.HighsStatus.kError or not tmp.is_file():
            what = "wrote no file" if not tmp.is_file() else f"returned {status}"
            raise OSError(f"{target}: cannot write the model: HiGHS {what}")
        if header:
            prepend_header(tmp, fmt, header)
        install_file(tmp, target)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        if str(target) in str(exc):
            raise
        raise OSError(f"{target}: cannot write the model: {exc.strerror or exc}") from exc
    except BaseException:  # Ctrl-C: no partial file either
        tmp.unlink(missing_ok=True)
        raise


def prepend_header(path: str | os.PathLike[str], fmt: str, lines: list[str]) -> None:
    """Put ``lines`` as comments at the head of the LP or MPS file ``path``.

    Parameters
    ----------
    path : path-like
        A file just written (rewritten in place: read, then written whole).
    fmt : {"lp", "mps"}
        ``lp``: each line starts with a backslash (the CPLEX LP comment), at the top; ``mps``:
        with ``*`` (an MPS comment line), after the ``NAME`` line when the file starts with
        one. Both are skipped by the LP and MPS readers of HiGHS and CPLEX.
    lines : list of str
        One comment per entry, without line ends.

    Notes
    -----
    Source: ours (comment syntax of the CPLEX LP and MPS formats).
    """
    mark = "\\ " if fmt == "lp" else "* "
    p = Path(path)
    body = p.read_text()
    comment = "".join(f"{mark}{line}\n" for line in lines)
    if fmt == "mps" and body.startswith("NAME"):  # keep NAME first for strict MPS readers
        first, _, rest = body.partition("\n")
        p.write_text(f"{first}\n{comment}{rest}")
    else:
        p.write_text(comment + body)
