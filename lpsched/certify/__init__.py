"""Certified optimality gaps at any size: the best schedule, the best valid lower bound, the gap.

:func:`certify` is anytime. It runs a plan of methods chosen by the instance's size, each
improving one side (or both), within one wall-clock budget, and keeps

* the best schedule found (every candidate passes the independent feasibility check of
  :meth:`lpsched.schedule.Schedule.check` before it is kept);
* the best lower bound, with the name of the method that proved it;
* a log of :class:`CertifyEvent`: which method improved which side, and when.

The status is ``optimal`` only when the gap is closed: the TEL is an integer, so the bound
proves the schedule optimal when ``ceil(bound - 1e-6) >= TEL``; otherwise ``gap``.

The plan (:func:`certify_plan`; measured in ``benchmarks/bench_certify.py`` and the README):

* always first: the list policies, each strict and with backfill
  (:func:`~lpsched.policies.local_search.best_heuristic`), the list local search
  (:func:`~lpsched.policies.local_search.improve_schedule`) and the combinatorial bound
  (:func:`~lpsched.bounds.combinatorial_bound`, SPEC section 7);
* ``small`` (the time-indexed MIP fits in :data:`SMALL_MAX_NONZEROS`): partial integrality
  (:mod:`.partial_integrality`), CP-SAT on the interval model with the time-indexed rows
  (:mod:`.cpsat_intervals`), the large-neighbourhood search (:mod:`.lns`), then HiGHS on the
  full MIP (:func:`~lpsched.solvers.solve.solve_exact`, started from the best schedule) with
  the time left: its incumbent and its dual bound;
* ``medium`` (the LP fits in :data:`~lpsched.solvers.solve.AUTO_LP_MAX_NONZEROS`): the LP
  relaxation by column generation (:mod:`.colgen`: the full LP's value, 1 s instead of 30 s
  at n = 200), the large-neighbourhood search, then partial integrality at the horizon of
  its schedule;
* ``large``: the LP by column generation (its Lagrangian bound when it does not converge in
  time) and the large-neighbourhood search.

Every bound is computed at the tight horizon of the best schedule known when its method
starts (SPEC section 3: ``T = min(T1, T2)`` and the waiting slack ``UB - sum o``), which holds
every optimal schedule, so each bound is a bound on the optimum.

Source: ours (issue 11); the methods' sources are in their modules.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..bounds import combinatorial_bound
from ..formulations.horizon import tight_horizon
from ..formulations.time_indexed import matrix_size
from ..instance import Instance
from ..policies.local_search import best_heuristic, improve_schedule
from ..schedule import Schedule
from ..solvers.progress import Progress
from ..solvers.result import LPTooLargeError, SolveInterrupted
from ..solvers.solve import (
    AUTO_LP_MAX_NONZEROS,
    check_threads,
    check_time_limit,
    shift_arrivals,
    solve_exact,
)
from .methods.colgen import colgen_lp_bound
from .methods.cpsat_intervals import solve_cpsat_intervals
from .methods.lns import improve_lns
from .methods.partial_integrality import partial_integrality_bound

__all__ = [
    "CertifyEvent",
    "CertifyResult",
    "CertifyInterrupted",
    "certify",
    "certify_plan",
    "SMALL_MAX_NONZEROS",
    "PARTIAL_MAX_NONZEROS",
    "PARTIAL_MIN_SECONDS",
]

_EPS = 1e-6

#: Largest full time-indexed MIP (constraint non-zeros at the tight horizon) that the ``small``
#: plan hands to HiGHS and CP-SAT (``benchmarks/bench_certify.py``).
SMALL_MAX_NONZEROS = 400_000
#: Largest model partial integrality runs on: above it HiGHS' root LP alone takes most of a
#: few minutes' budget and overruns the time limit (it is not interruptible), while the column
#: generation gives the same LP value in about a second (n = 200 of the scaled mix: 2.1 M
#: non-zeros, the root LP over 45 s; ``benchmarks/bench_certify.py``).
PARTIAL_MAX_NONZEROS = 1_000_000
#: Smallest budget (seconds) partial integrality is started with: HiGHS' first LP, during
#: which it cannot be stopped, takes seconds at n = 100 (measured: 5 s on a 0.5 s limit), and a
#: shorter run only repeats the LP the other methods give.
PARTIAL_MIN_SECONDS = 10.0


@dataclass(frozen=True)
class CertifyEvent:
    """One improvement: ``method`` made ``side`` better, reaching ``value`` at ``time_s``.

    Attributes
    ----------
    time_s : float
        Seconds since :func:`certify` started.
    side : {"upper", "lower"}
        ``upper``: a better feasible schedule (``value`` its TEL); ``lower``: a better valid
        lower bound on the optimal TEL (``value`` the bound). Rounds.
    method : str
        The method that found it (a list policy's name, ``local-search``, ``lns``,
        ``cpsat-intervals``, ``mip``, ``combinatorial``, ``lp-colgen``,
        ``partial-integrality``).
    value : float
        Rounds.
    """

    time_s: float
    side: str
    method: str
    value: float

    def to_dict(self) -> dict[str, Any]:
        """``{"time_s", "side", "method", "value"}``."""
        return {
            "time_s": float(self.time_s),
            "side": self.side,
            "method": self.method,
            "value": float(self.value),
        }


@dataclass
class CertifyResult:
    """What :func:`certify` proved about an instance.

    Attributes
    ----------
    schedule : Schedule
        The best schedule found; feasible (checked); ``policy`` names the method that found it.
    objective : int
        Its TEL (rounds).
    bound : float
        The best valid lower bound on the optimal TEL (rounds; unrounded).
    bound_method : str
        The method that proved ``bound``.
    gap : float
        ``(objective - bound) / objective``, 0 when optimal.
    status : {"optimal", "gap"}
        ``optimal`` only when ``ceil(bound - 1e-6) >= objective``.
    runtime_s : float
        Wall time (seconds).
    log : list of CertifyEvent
        Every improvement, in time order (a bound when its value rounded up rises, the TEL
        being an integer, and the bound as it stands at the end of each method).
    info : dict
        ``plan`` (the size class and the methods run), ``methods`` (seconds and outcome per
        method: ``done``, ``skipped: why``, ``failed: why``), ``interrupted``.
    """

    schedule: Schedule
    objective: int
    bound: float
    bound_method: str
    gap: float
    status: str
    runtime_s: float
    log: list[CertifyEvent] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The ``certify`` JSON object of ``docs/architecture.md``: status, objective, bound,
        bound_method, gap, runtime_s."""
        return {
            "status": self.status,
            "objective": int(self.objective),
            "bound": float(self.bound),
            "bound_method": self.bound_method,
            "gap": float(self.gap),
            "runtime_s": float(self.runtime_s),
        }

    def summary(self) -> str:
        """A readable report: status, TEL and its method, bound and its method, gap, the log."""
        lines = [
            f"status      {self.status}",
            f"TEL         {self.objective:,}   ({self.schedule.policy})",
            f"bound       {_rounds(self.bound)}   ({self.bound_method})",
            f"gap         {100 * self.gap:.2f}%",
            f"runtime     {self.runtime_s:.1f} s   plan {self.info.get('plan', {}).get('size')}",
            "improvements (consecutive ones by one method on one side shown as their last):",
        ]
        for e, count in _runs(self.log):
            more = f"  ({count} steps)" if count > 1 else ""
            lines.append(
                f"  {e.time_s:8.2f} s  {e.side:5}  {e.method:20}  {_rounds(e.value)}{more}"
            )
        for name, outcome in self.info.get("methods", {}).items():
            if not outcome.startswith("done"):
                lines.append(f"  {name}: {outcome}")
        return "\n".join(lines)


def _rounds(value: float) -> str:
    """A TEL or bound for reading: ``19,294,305`` or ``17,288.59``."""
    return f"{int(value):,}" if float(value).is_integer() else f"{value:,.2f}"


def _runs(log: list[CertifyEvent]) -> list[tuple[CertifyEvent, int]]:
    """The last event of each run of consecutive events of one method on one side, and the
    run's length."""
    runs: list[tuple[CertifyEvent, int]] = []
    for e in log:
        if runs and (runs[-1][0].side, runs[-1][0].method) == (e.side, e.method):
            runs[-1] = (e, runs[-1][1] + 1)
        else:
            runs.append((e, 1))
    return runs


class CertifyInterrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`certify`; ``.result`` is the best schedule and bound so far
    (``info["interrupted"]`` True). Source: ours (as :class:`.SolveInterrupted`)."""

    def __init__(self, result: CertifyResult) -> None:
        super().__init__("interrupted")
        self.result = result

    def __reduce__(self):  # picklable (sent back by a worker process)
        return (type(self), (self.result,))


class _Tracker:
    """The best schedule and bound so far, the log, and the display (thread-safe)."""

    def __init__(self, instance: Instance, display: Progress) -> None:
        self.instance = instance
        self.display = display
        self.t0 = time.perf_counter()
        self.schedule: Schedule | None = None
        self.bound = -math.inf
        self.bound_method = ""
        self.log: list[CertifyEvent] = []
        self.rejected: list[str] = []
        self._lock = threading.Lock()

    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def offer_schedule(self, method: str, schedule: Schedule) -> None:
        bad = schedule.violations(limit=1)
        with self._lock:
            if bad:  # a method's bug must not reach the result; it is reported
                self.rejected.append(f"{method}: {bad[0]}")
                return
            if self.schedule is None or schedule.tel < self.schedule.tel:
                self.schedule = Schedule(
                    self.instance, schedule.start, policy=method, info={"found_by": method}
                )
                self.log.append(CertifyEvent(self.elapsed(), "upper", method, schedule.tel))
                self.display.update(incumbent=schedule.tel)

    def offer_bound(self, method: str, value: float | None) -> None:
        if value is None or not math.isfinite(value):
            return
        with self._lock:
            tel = None if self.schedule is None else self.schedule.tel
            if tel is not None and value > tel + _EPS * max(1.0, tel):
                self.rejected.append(f"{method}: bound {value:g} above a feasible TEL {tel}")
                return
            if value > self.bound + _EPS:
                rises = self.bound == -math.inf or math.ceil(value - _EPS) > math.ceil(
                    self.bound - _EPS
                )
                self.bound, self.bound_method = float(value), method
                if rises:  # the TEL is an integer: log only a rise of the bound rounded up
                    self.log.append(CertifyEvent(self.elapsed(), "lower", method, float(value)))
                    self.display.update(bound=value)

    def flush(self) -> None:
        """Log the bound as it stands when it rose since the last logged one by less than a
        round (the end of a method: the log then ends on the final value)."""
        with self._lock:
            last = next((e for e in reversed(self.log) if e.side == "lower"), None)
            if last is not None and self.bound > last.value + _EPS:
                self.log.append(
                    CertifyEvent(self.elapsed(), "lower", self.bound_method, self.bound)
                )

    def closed(self) -> bool:
        return self.schedule is not None and math.ceil(self.bound - _EPS) >= self.schedule.tel

    def upper(self) -> Schedule:
        assert self.schedule is not None
        return self.schedule


class _BoundFeed(Progress):
    """A quiet :class:`Progress` handed to a solver: its bounds go to the tracker under the
    running method's name, its log lines to the display."""

    def __init__(self, tracker: _Tracker, method: str) -> None:
        super().__init__("quiet", log=tracker.display.log_enabled)
        self._tracker, self._method = tracker, method

    def update(self, incumbent: float | None = None, bound: float | None = None) -> None:
        self._tracker.offer_bound(self._method, bound)

    def log(self, text: str) -> None:
        self._tracker.display.log(text)


@dataclass(frozen=True)
class _Context:
    instance: Instance
    tracker: _Tracker
    threads: int | None
    seed: int

    def horizon(self):
        return tight_horizon(self.instance, self.tracker.upper())


# --------------------------------------------------------------------------- the methods
# Each runner gets the context and its budget (seconds) and reports through the tracker.


def _run_local_search(ctx: _Context, budget: float | None) -> None:
    sched = improve_schedule(ctx.instance, ctx.tracker.upper(), seed=ctx.seed, time_limit=budget)
    ctx.tracker.offer_schedule("local-search", sched)


def _bound_runner(
    method: str, bound: Callable[..., Any]
) -> Callable[[_Context, float | None], None]:
    """The runner of a lower-bound method (the contract of the methods): called with the
    instance and the best schedule so far, it reports each better bound through ``on_bound``
    and returns a :class:`~.result.BoundResult`."""

    def run(ctx: _Context, budget: float | None) -> None:
        res = bound(
            ctx.instance,
            ctx.tracker.upper(),
            time_limit=budget,
            threads=ctx.threads,
            on_bound=lambda b: ctx.tracker.offer_bound(method, b),
        )
        ctx.tracker.offer_bound(method, res.bound)

    return run


def _run_cpsat_intervals(ctx: _Context, budget: float | None) -> None:
    res = solve_cpsat_intervals(
        ctx.instance,
        ctx.tracker.upper(),
        time_limit=budget,
        threads=ctx.threads,
        on_improve=lambda s: ctx.tracker.offer_schedule("cpsat-intervals", s),
        on_bound=lambda b: ctx.tracker.offer_bound("cpsat-intervals", b),
    )
    ctx.tracker.offer_schedule("cpsat-intervals", res.schedule)
    ctx.tracker.offer_bound("cpsat-intervals", res.bound)


def _run_lns(ctx: _Context, budget: float | None) -> None:
    sched = improve_lns(
        ctx.instance,
        ctx.tracker.upper(),
        time_limit=budget,
        seed=ctx.seed,
        threads=ctx.threads,
        on_improve=lambda s: ctx.tracker.offer_schedule("lns", s),
    )
    ctx.tracker.offer_schedule("lns", sched)


def _run_mip(ctx: _Context, budget: float | None) -> None:
    feed = _BoundFeed(ctx.tracker, "mip")
    try:
        res = solve_exact(
            ctx.instance,
            "highs",
            budget,
            schedule=ctx.tracker.upper(),
            threads=ctx.threads,
            progress=feed,
        )
    except SolveInterrupted as exc:
        res = exc.result
        if res.schedule is not None:
            ctx.tracker.offer_schedule("mip", res.schedule)
        ctx.tracker.offer_bound("mip", res.bound)
        raise
    if res.schedule is not None:
        ctx.tracker.offer_schedule("mip", res.schedule)
    ctx.tracker.offer_bound("mip", res.bound)


_RUNNERS: dict[str, Callable[[_Context, float | None], None]] = {
    "local-search": _run_local_search,
    "partial-integrality": _bound_runner("partial-integrality", partial_integrality_bound),
    "lp-colgen": _bound_runner("lp-colgen", colgen_lp_bound),
    "cpsat-intervals": _run_cpsat_intervals,
    "lns": _run_lns,
    "mip": _run_mip,
}

#: The plans: size class -> (method, share of the budget). A method gets its share of the
#: time left when it starts (shares of the methods still to run renormalised), so time a
#: method does not use passes on. Shares measured in ``benchmarks/bench_certify.py``.
PLANS: dict[str, tuple[tuple[str, float], ...]] = {
    "small": (
        ("local-search", 0.05),
        ("partial-integrality", 0.15),
        ("cpsat-intervals", 0.3),
        ("lns", 0.15),
        ("mip", 0.35),
    ),
    "medium": (
        ("local-search", 0.05),
        ("lp-colgen", 0.1),
        ("lns", 0.55),
        ("partial-integrality", 0.3),
    ),
    "large": (
        ("local-search", 0.03),
        ("lp-colgen", 0.47),
        ("lns", 0.5),
    ),
}


def certify_plan(instance: Instance, schedule: Schedule) -> dict[str, Any]:
    """The size class and the methods :func:`certify` runs on ``instance``.

    Parameters
    ----------
    instance : Instance
        Arrivals shifted to start at round 0.
    schedule : Schedule
        A feasible schedule (its TEL fixes the tight horizon, hence the model size).

    Returns
    -------
    dict
        ``size`` (``small``, ``medium`` or ``large``), ``nonzeros`` of the time-indexed model
        at the tight horizon, ``methods`` (names, in order) and ``reason``.

    Notes
    -----
    Source: ours. The thresholds are :data:`SMALL_MAX_NONZEROS` (above it HiGHS and CP-SAT
    on the full MIP rarely move either side within minutes),
    :data:`~lpsched.solvers.solve.AUTO_LP_MAX_NONZEROS` (above it even the LP is not built
    whole) and :data:`PARTIAL_MAX_NONZEROS` (above it partial integrality is left out; it
    is also skipped with a budget under :data:`PARTIAL_MIN_SECONDS`).
    """
    hz = tight_horizon(instance, schedule)
    _, nnz = matrix_size(instance, hz.T, hz.slack)
    if nnz <= SMALL_MAX_NONZEROS:
        size, reason = "small", f"full MIP {nnz:,} non-zeros <= {SMALL_MAX_NONZEROS:,}"
    elif nnz <= AUTO_LP_MAX_NONZEROS:
        size, reason = "medium", f"full LP {nnz:,} non-zeros <= {AUTO_LP_MAX_NONZEROS:,}"
    else:
        size, reason = "large", f"full LP {nnz:,} non-zeros > {AUTO_LP_MAX_NONZEROS:,}"
    methods = [name for name, _ in PLANS[size]]
    if nnz > PARTIAL_MAX_NONZEROS and "partial-integrality" in methods:
        methods.remove("partial-integrality")
        reason += f"; partial integrality left out above {PARTIAL_MAX_NONZEROS:,} non-zeros"
    return {"size": size, "nonzeros": nnz, "methods": methods, "reason": reason}


def certify(
    instance: Instance,
    time_limit: float | None = 60.0,
    *,
    threads: int | None = None,
    seed: int = 0,
    progress: Progress | None = None,
) -> CertifyResult:
    """The best schedule, the best valid lower bound and the gap of ``instance`` in
    ``time_limit`` seconds (module docstring).

    Parameters
    ----------
    instance : Instance
        Requests ``(s_i, o_i, a_i)`` and the KV-cache budget ``M`` (tokens); arrivals allowed
        (solved on the axis shifted by the earliest arrival, which changes no TEL; the
        schedule returned is on the instance's own axis).
    time_limit : float or None, default 60
        Seconds of wall time for the whole call; None: each method runs to its own end (the
        MIP until proven). The list policies and the combinatorial bound always run, so a
        very small limit can be overrun by their time (a second at n = 2000).
    threads : int, optional
        Threads of HiGHS and CP-SAT (a positive integer); default: theirs.
    seed : int, default 0
        Seed of the randomised searches (local search, LNS).
    progress : Progress, optional
        Receives the stage (the method running), the incumbent, the bound and (when its
        ``log`` is on) the solvers' logs; the caller starts and closes it.

    Returns
    -------
    CertifyResult
        ``status`` ``optimal`` only when the bound meets the TEL.

    Raises
    ------
    ValueError
        ``time_limit`` or ``threads`` out of range.
    CertifyInterrupted
        Ctrl-C (a ``KeyboardInterrupt``): ``.result`` has the best schedule and bound so far.

    Notes
    -----
    Source: ours (issue 11). A method that fails (for example a model above its size limit)
    is recorded in ``info["methods"]`` and the next one runs; a schedule that fails the
    feasibility check is never kept, nor a bound above a feasible TEL (a method's bug;
    both listed in ``info["rejected"]``).
    """
    time_limit = check_time_limit(time_limit)
    threads = check_threads(threads)
    display = progress if progress is not None else Progress("quiet")
    original, (inst, shift) = instance, shift_arrivals(instance)
    tracker = _Tracker(inst, display)
    deadline = None if time_limit is None else tracker.t0 + time_limit
    methods: dict[str, str] = {}
    info: dict[str, Any] = {"methods": methods, "time_shift": shift, "interrupted": False}

    def result() -> CertifyResult:
        sched = tracker.upper()
        if shift:
            sched = Schedule(original, sched.start + shift, policy=sched.policy, info=sched.info)
        else:
            sched = Schedule(original, sched.start, policy=sched.policy, info=sched.info)
        objective = sched.tel
        optimal = tracker.closed()
        bound = float(objective) if optimal else tracker.bound
        gap = 0.0 if optimal or objective == 0 else max(0.0, (objective - bound) / objective)
        if tracker.rejected:
            info["rejected"] = list(tracker.rejected)
        return CertifyResult(
            schedule=sched,
            objective=objective,
            bound=bound,
            bound_method=tracker.bound_method,
            gap=gap,
            status="optimal" if optimal else "gap",
            runtime_s=tracker.elapsed(),
            log=list(tracker.log),
            info=info,
        )

    display.set_stage("heuristic")
    tracker.offer_bound("combinatorial", float(combinatorial_bound(inst)))
    try:
        first = best_heuristic(inst)
    except KeyboardInterrupt:
        raise KeyboardInterrupt("interrupted before any schedule was found") from None
    tracker.offer_schedule(first.policy, first)
    plan = certify_plan(inst, first)
    info["plan"] = plan
    shares = dict(PLANS[plan["size"]])
    todo = list(plan["methods"])
    ctx = _Context(inst, tracker, threads, seed)
    try:
        while todo and not tracker.closed():
            name = todo.pop(0)
            share = shares[name] / (shares[name] + sum(shares[m] for m in todo))
            if deadline is None:
                budget = None
            else:
                left = deadline - time.perf_counter()
                if left <= 0.05:
                    methods[name] = "skipped: no time left"
                    continue
                budget = left if not todo else left * share
                if name == "partial-integrality" and budget < PARTIAL_MIN_SECONDS:
                    methods[name] = f"skipped: budget {budget:.1f} s < {PARTIAL_MIN_SECONDS:g} s"
                    continue
            display.set_stage(name)
            t = time.perf_counter()
            try:
                _RUNNERS[name](ctx, budget)
            except (LPTooLargeError, MemoryError, ValueError, RuntimeError) as exc:
                methods[name] = f"failed: {exc}"
            else:
                methods[name] = f"done in {time.perf_counter() - t:.2f} s"
            finally:
                tracker.flush()
        for name in todo:
            methods[name] = "skipped: the gap is closed"
    except KeyboardInterrupt:
        info["interrupted"] = True
        raise CertifyInterrupted(result()) from None
    display.set_stage("optimal" if tracker.closed() else "gap")
    return result()
