"""Certified optimality gaps at any size: the best schedule, the best valid lower bound, the gap.

:func:`certify` is anytime. It runs the plan of :mod:`lpsched.certify.plan` chosen by the
instance's size: methods of :data:`lpsched.certify.methods.METHODS`, each improving one side (or
both), within one wall-clock budget, and keeps

* the best schedule found (every candidate passes the independent feasibility check of
  :meth:`lpsched.schedule.Schedule.check` before it is kept);
* the best lower bound, with the name of the method that proved it;
* a log of :class:`CertifyEvent`: which method improved which side, and when.

The status is ``optimal`` only when the gap is closed: the TEL is an integer, so the bound
proves the schedule optimal when ``ceil(bound - 1e-6) >= TEL``; otherwise ``gap``
(:class:`~lpsched.solvers.result.SolveStatus`).

Always first: the list policies, each strict and with backfill
(:func:`~lpsched.policies.local_search.best_heuristic`), and the combinatorial bound
(:func:`~lpsched.bounds.combinatorial_bound`, SPEC section 7); then the plan's methods, each
handed the best schedule so far and an observer (:class:`~lpsched.certify.method.Method`).

Every bound is computed at the tight horizon of the best schedule known when its method
starts (SPEC section 3: ``T = min(T1, T2)`` and the waiting slack ``UB - sum o``), which holds
every optimal schedule, so each bound is a bound on the optimum.

Source: ours; the methods' sources are in their modules.
"""

from __future__ import annotations

import math
import numbers
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from ..bounds import combinatorial_bound
from ..instance import Instance
from ..policies.local_search import best_heuristic
from ..schedule import Schedule
from ..solvers.options import SolveOptions, shift_arrivals
from ..solvers.progress import Observer, Progress
from ..solvers.result import LPTooLargeError, SolveStatus
from .methods import METHODS
from .plan import MIN_BUDGET_S, PLANS, certify_plan

__all__ = [
    "CertifyEvent",
    "CertifyResult",
    "CertifyInterrupted",
    "certify",
]

_EPS = 1e-6


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
    status: SolveStatus
    runtime_s: float
    log: list[CertifyEvent] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The ``certify`` JSON object of ``docs/architecture.md``: status, objective, bound,
        bound_method, gap, runtime_s."""
        return {
            "status": str(self.status),
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
        self._bounds: list[tuple[float, str]] = []  # every bound accepted, with its method
        self.log: list[CertifyEvent] = []
        self.rejected: list[str] = []
        self._lock = threading.Lock()

    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def offer_schedule(self, method: str, schedule: Schedule) -> None:
        """Keep ``schedule``'s starts if, on certify's own instance, they are feasible and
        better; a bound above the TEL they reach is then proven wrong and retracted."""
        try:  # the starts on certify's instance, whatever instance the method attached
            cand = Schedule(self.instance, schedule.start, policy=method, info={"found_by": method})
            bad = cand.violations(limit=1)
        except Exception as exc:  # not a schedule of this instance at all
            bad = [f"not a schedule of this instance ({type(exc).__name__}: {exc})"]
        with self._lock:
            if bad:  # a method's bug must not reach the result; it is reported
                self.rejected.append(f"{method}: {bad[0]}")
                return
            if self.schedule is None or cand.tel < self.schedule.tel:
                self.schedule = cand
                self.log.append(CertifyEvent(self.elapsed(), "upper", method, cand.tel))
                self.display.update(incumbent=cand.tel)
                self._retract_above(cand.tel)

    def _retract_above(self, tel: int) -> None:
        """Drop every bound above the feasible TEL ``tel`` (a method's bug), keeping the best of
        the others; called with the lock held."""
        if not self.bound > tel + _EPS * max(1.0, tel):
            return
        kept = []
        for value, method in self._bounds:
            if value > tel + _EPS * max(1.0, tel):
                self.rejected.append(f"{method}: bound {value:g} above a feasible TEL {tel}")
            else:
                kept.append((value, method))
        self._bounds = kept
        self.bound, self.bound_method = max(kept, default=(-math.inf, ""))
        self.log = [  # the log keeps valid improvements only
            e for e in self.log if not (e.side == "lower" and e.value > tel + _EPS * max(1.0, tel))
        ]

    def offer_bound(self, method: str, value: float | None) -> None:
        if value is None:
            return
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            with self._lock:
                self.rejected.append(f"{method}: bound {value!r} is not a number")
            return
        if not math.isfinite(value):
            return
        with self._lock:
            tel = None if self.schedule is None else self.schedule.tel
            if tel is not None and value > tel + _EPS * max(1.0, tel):
                self.rejected.append(f"{method}: bound {value:g} above a feasible TEL {tel}")
                return
            self._bounds.append((float(value), method))
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


class _Feed(Observer):
    """The observer a method reports to: its schedules and bounds go to the tracker under
    the method's name, its log lines to the display."""

    def __init__(self, tracker: _Tracker, method: str) -> None:
        super().__init__()
        self._tracker, self._method = tracker, method
        self.log_enabled = tracker.display.log_enabled

    def on_incumbent(self, schedule: Schedule) -> None:
        self._tracker.offer_schedule(self._method, schedule)

    def on_bound(self, bound: float) -> None:
        self._tracker.offer_bound(self._method, bound)

    def log(self, text: str) -> None:
        self._tracker.display.log(text)


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
    Source: ours. A method that fails (for example a model above its size limit)
    is recorded in ``info["methods"]`` and the next one runs; a schedule that fails the
    feasibility check is never kept, nor a bound above a feasible TEL (a method's bug;
    both listed in ``info["rejected"]``).
    """
    options = SolveOptions(time_limit=time_limit, threads=threads, seed=seed)
    display = progress if progress is not None else Progress("quiet")
    original, (inst, shift) = instance, shift_arrivals(instance)
    tracker = _Tracker(inst, display)
    deadline = None if options.time_limit is None else tracker.t0 + options.time_limit
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
            status=SolveStatus.OPTIMAL if optimal else SolveStatus.GAP,
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
    try:
        plan = certify_plan(inst, first)
    except KeyboardInterrupt:
        info["interrupted"] = True
        raise CertifyInterrupted(result()) from None
    info["plan"] = plan
    shares = dict(PLANS[plan["size"]])
    todo = list(plan["methods"])
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
                least = MIN_BUDGET_S.get(name)
                if least is not None and budget < least:
                    methods[name] = f"skipped: budget {budget:.1f} s < {least:g} s"
                    continue
            display.set_stage(name)
            t = time.perf_counter()
            try:
                METHODS[name].run(
                    inst,
                    tracker.upper(),
                    options.replace(time_limit=budget),
                    _Feed(tracker, name),
                )
            except (LPTooLargeError, MemoryError, ValueError, RuntimeError) as exc:
                methods[name] = f"failed: {exc}"
            except Exception as exc:  # a method's bug: the run goes on with what it has
                methods[name] = f"failed: {type(exc).__name__}: {exc}"
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
