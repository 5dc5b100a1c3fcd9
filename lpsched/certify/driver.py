"""The one solve driver: the best schedule, the best valid lower bound and the gap.

:func:`solve` runs a *plan* -- methods of :data:`lpsched.certify.methods.METHODS`, each improving
one side (or both) -- within one wall-clock budget, after the opening steps that every plan
shares, done once here:

1. the checks of the plan and of its budget;
2. the shift of the time axis by the earliest arrival (no TEL changes);
3. the combinatorial bound (SPEC section 7);
4. the upper-bound schedule: the list policies, each strict and with backfill
   (:func:`~lpsched.policies.local_search.best_heuristic`; Sorted-F, whose Phase 1 grows
   fastest with ``n``, last and only when twice its expected time fits before the deadline:
   it takes about 15 s at n = 20,000), then ``params.local_search`` moves of the list local
   search in at most a quarter of the time limit (and what is left);
5. the plan: ``"auto"`` chooses the methods by the size of the model at the tight horizon of
   that schedule (:func:`~lpsched.certify.plan.certify_plan`); a tuple names them.

It keeps

* the best schedule found (every candidate passes the independent feasibility check of
  :meth:`lpsched.schedule.Schedule.check` before it is kept);
* the best lower bound, with the name of the method that proved it;
* a log of :class:`~lpsched.solvers.result.Event`: which method improved which side, and when;

and returns one :class:`~lpsched.solvers.result.Result`. ``lpsched exact`` is the plan
``("mip",)``, ``lpsched bound --method X`` is ``(X,)`` and ``lpsched certify`` is ``"auto"``;
:func:`lpsched.solve_exact`, :func:`lpsched.best_bound` and :func:`lpsched.certify` are those
calls with their defaults (:mod:`lpsched.certify.shortcuts`).

The status is ``optimal`` only when the gap is closed: the TEL is an integer, so the bound
proves the schedule optimal when ``ceil(bound - 1e-6) >= TEL``. Ctrl-C (or SIGTERM in the
command line) stops the method running and returns what was found, with status
``interrupted``.

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
from collections.abc import Sequence
from typing import Any

from ..bounds import combinatorial_bound
from ..formulations.horizon import tight_horizon
from ..instance import Instance
from ..policies.local_search import best_heuristic, improve_schedule
from ..schedule import Schedule
from ..solvers.options import SolveOptions, shift_arrivals
from ..solvers.progress import Observer, Progress
from ..solvers.result import Event, LPTooLargeError, Result, SolveStatus
from .methods import METHODS
from .plan import MIN_BUDGET_S, PLANS, certify_plan

__all__ = ["solve", "AUTO", "LOCAL_SEARCH_SECONDS"]

_EPS = 1e-6
#: The automatic plan (:func:`~lpsched.certify.plan.certify_plan`).
AUTO = "auto"
#: Most seconds of the opening local search (and at most a quarter of the time limit).
LOCAL_SEARCH_SECONDS = 5.0
#: How an explicit plan's method may end (``info["status"]`` of its facts), kept as the status.
_ENDINGS = {
    s.value: s
    for s in (
        SolveStatus.TIME_LIMIT,
        SolveStatus.WORK_LIMIT,
        SolveStatus.FEASIBLE,
        SolveStatus.INFEASIBLE,
    )
}


class _Tracker:
    """The best schedule and bound so far, the log, and the display (thread-safe)."""

    def __init__(self, instance: Instance, display: Observer) -> None:
        self.instance = instance
        self.display = display
        self.t0 = time.perf_counter()
        self.schedule: Schedule | None = None
        self.bound = -math.inf
        self.bound_method = ""
        self._bounds: list[tuple[float, str]] = []  # every bound accepted, with its method
        self.log: list[Event] = []
        self.rejected: list[str] = []
        self._lock = threading.Lock()

    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def offer_schedule(self, method: str, schedule: Schedule) -> None:
        """Keep ``schedule``'s starts if, on the driver's own instance, they are feasible and
        better; a bound above the TEL they reach is then proven wrong and retracted."""
        try:  # the starts on the driver's instance, whatever instance the method attached
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
                self.log.append(Event(self.elapsed(), "upper", method, cand.tel))
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
                    self.log.append(Event(self.elapsed(), "lower", method, float(value)))
                    self.display.update(bound=value)

    def flush(self) -> None:
        """Log the bound as it stands when it rose since the last logged one by less than a
        round (the end of a method: the log then ends on the final value)."""
        with self._lock:
            last = next((e for e in reversed(self.log) if e.side == "lower"), None)
            if last is not None and self.bound > last.value + _EPS:
                self.log.append(Event(self.elapsed(), "lower", self.bound_method, self.bound))

    def closed(self) -> bool:
        if self.schedule is None or not math.isfinite(self.bound):
            return False
        return math.ceil(self.bound - _EPS) >= self.schedule.tel


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


def _check_plan(plan: str | Sequence[str], params: SolveOptions) -> tuple[str, ...] | None:
    """The methods of an explicit plan (None for the automatic one), checked before any work:
    known names, and a budget at least each method's minimum."""
    if not isinstance(params, SolveOptions):
        raise TypeError(f"params must be a SolveOptions or None, got {type(params).__name__}")
    if isinstance(plan, str):
        if plan != AUTO:
            raise ValueError(f"a plan is {AUTO!r} or a tuple of method names, got {plan!r}")
        return None
    if not isinstance(plan, (tuple, list)) or not all(isinstance(m, str) for m in plan):
        raise TypeError(f"a plan is {AUTO!r} or a tuple of method names, got {plan!r}")
    names = tuple(plan)
    if not names:
        raise ValueError("a plan names at least one method")
    if len(set(names)) < len(names):
        raise ValueError(f"a plan names each method once, got {names!r}")
    unknown = [name for name in names if name not in METHODS]
    if unknown:
        raise ValueError(f"unknown certify method {unknown[0]!r}; choose from {', '.join(METHODS)}")
    for name in names:
        least = MIN_BUDGET_S.get(name)
        if least is not None and params.time_limit is not None and params.time_limit < least:
            raise ValueError(
                f"{name} needs a time limit of at least {least:g} s (its first solve cannot "
                f"be stopped), got {params.time_limit:g} s"
            )
    return names


def solve(
    instance: Instance,
    plan: str | Sequence[str] = AUTO,
    params: SolveOptions | None = None,
    observer: Observer | None = None,
    *,
    start: Schedule | None = None,
) -> Result:
    """The best schedule, the best valid lower bound and the gap of ``instance`` by ``plan``
    within ``params.time_limit`` seconds (module docstring).

    Parameters
    ----------
    instance : Instance
        Requests ``(s_i, o_i, a_i)`` and the KV-cache budget ``M`` (tokens); arrivals allowed
        (solved on the axis shifted by the earliest arrival, which changes no TEL; the
        schedule returned is on the instance's own axis).
    plan : "auto" or sequence of str
        ``"auto"``: the methods of :data:`~lpsched.certify.plan.PLANS` for the instance's size
        class, each with its share of the time left; a method that fails (a model above its
        size limit, a solver error) is recorded in ``info["methods"]`` and the next one runs.
        A tuple of names of :data:`~lpsched.certify.methods.METHODS`: those methods in order,
        each with an even share of the time left; a failure is raised.
    params : SolveOptions, optional
        ``time_limit`` (seconds for the whole call, None: each method to its end),
        ``work_limit`` (the MIP methods' deterministic work), ``threads``, ``mip_gap``,
        ``seed``, ``max_nonzeros``, ``local_search`` (moves of the opening local search) and
        ``method_options`` (keyword options per method, e.g. ``{"mip": {"solver":
        "cpsat"}}``). Default: ``SolveOptions()``.
    observer : Observer, optional
        Receives the stage (``heuristic``, then the method running, then the status), the
        incumbent, the bound and (when its ``log`` is on) the solvers' logs; the caller starts
        and closes it.
    start : Schedule, optional
        A feasible schedule of ``instance`` to start from instead of the opening's list
        policies and local search (checked: :class:`~lpsched.schedule.InfeasibleScheduleError`
        when infeasible).

    Returns
    -------
    Result
        ``status``: ``optimal`` when the bound meets the TEL; ``interrupted`` on Ctrl-C; with an
        explicit plan ``error``, ``time-limit``, ``work-limit``, ``feasible`` or ``infeasible``
        as its last method ended, or ``bound`` for a plan of lower-side methods (the bound alone, no
        schedule); ``gap`` otherwise. ``bound_method`` and
        ``upper_method`` name the method behind each side; without any bound from the plan's
        methods, the bound is the combinatorial one of the opening. ``info``: ``methods`` (the
        outcome of each), ``plan`` (the size class of the automatic plan, or the methods
        given), ``interrupted``,
        ``time_shift``, ``rejected`` (schedules and bounds refused: a method's bug),
        ``stopped_by`` (``time limit`` for a gap the automatic plan left under a time limit:
        its methods ran on shares of it; :attr:`Result.stopped_by`), and the facts each
        method returned (model size, ``solver``, ...).

    Raises
    ------
    TypeError
        ``instance``, ``plan``, ``params``, ``observer`` or ``start`` of the wrong type.
    ValueError
        An unknown plan or method, a method named twice, a budget below a method's minimum.
    InfeasibleScheduleError
        ``start`` is not a feasible schedule of ``instance`` (the message names the round).
    LPTooLargeError, HorizonError, RuntimeError, ValueError, MemoryError
        A method of an explicit plan failed.

    Notes
    -----
    Source: ours. A schedule that fails the feasibility check is never kept, nor a bound above
    a feasible TEL (both listed in ``info["rejected"]``).
    """
    if not isinstance(instance, Instance):
        raise TypeError(f"instance must be an Instance, got {type(instance).__name__}")
    if start is not None and not isinstance(start, Schedule):
        raise TypeError(f"start must be a Schedule of the instance, got {type(start).__name__}")
    if observer is not None and not isinstance(observer, Observer):
        raise TypeError(f"observer must be an Observer or None, got {type(observer).__name__}")
    params = SolveOptions() if params is None else params
    names = _check_plan(plan, params)
    explicit = names is not None
    bound_only = names is not None and all(METHODS[name].side == "lower" for name in names)
    display = observer if observer is not None else Progress("quiet")
    original, (inst, shift) = instance, shift_arrivals(instance)
    tracker = _Tracker(inst, display)
    deadline = None if params.time_limit is None else tracker.t0 + params.time_limit
    info: dict[str, Any] = {"methods": {}, "time_shift": shift, "interrupted": False}
    floor = float(combinatorial_bound(inst))
    if start is not None:  # checked on the instance's own axis: errors name its rounds
        Schedule(instance, start.start, policy=start.policy).check()
        start = Schedule(inst, start.start - shift, policy=start.policy)
    try:
        display.set_stage("heuristic")
        if names is None:
            tracker.offer_bound("combinatorial", floor)
        else:
            display.update(bound=floor)
        if start is not None:
            tracker.offer_schedule(start.policy, start)
            info["incumbent"] = "heuristic"
        elif names is None or any(METHODS[name].needs_schedule for name in names):
            _upper_bound(inst, tracker, params, info)
        if tracker.schedule is not None:  # the model's horizon, until a method reports its own
            info["horizon"] = tight_horizon(inst, tracker.schedule).T
        if names is None:
            assert tracker.schedule is not None  # the opening found one
            info["plan"] = certify_plan(inst, tracker.schedule)
            names = tuple(info["plan"]["methods"])
            _run_plan(
                inst,
                names,
                dict(PLANS[info["plan"]["size"]]),
                tracker,
                params,
                info,
                deadline,
                strict=False,
            )
        else:
            info["plan"] = {"methods": list(names), "reason": "given"}
            _run_plan(
                inst, names, dict.fromkeys(names, 1.0), tracker, params, info, deadline, strict=True
            )
    except KeyboardInterrupt:
        info["interrupted"] = True
    result = _result(
        original, shift, tracker, floor, info, explicit=explicit, bound_only=bound_only
    )
    if not explicit and params.time_limit is not None and result.status is SolveStatus.GAP:
        result.info["stopped_by"] = "time limit"  # the plan's methods ran on shares of it
    display.set_stage(str(result.status))
    display.update(incumbent=result.objective, bound=result.bound)
    return result


def _upper_bound(
    inst: Instance, tracker: _Tracker, params: SolveOptions, info: dict[str, Any]
) -> None:
    """The opening's upper-bound schedule: the list policies (the slow ones only when they fit
    in the time limit), then the local search in what is left of its share. A Ctrl-C during
    a list policy keeps the best schedule of those that finished."""
    limit = params.time_limit
    deadline = None if limit is None else tracker.t0 + limit
    so_far: list[Schedule] = []

    def found(schedule: Schedule) -> None:
        if not so_far or schedule.tel < so_far[0].tel:
            so_far[:] = [schedule]

    try:
        first = best_heuristic(inst, deadline=deadline, found=found)
    except KeyboardInterrupt:
        if so_far:
            tracker.offer_schedule(so_far[0].policy, so_far[0])
            info["incumbent"] = "heuristic"
        raise
    tracker.offer_schedule(first.policy, first)
    info["incumbent"] = "heuristic"
    if "skipped" in first.info:
        info["heuristics_skipped"] = list(first.info["skipped"])
    if params.local_search > 0:
        budget: float | None = (
            LOCAL_SEARCH_SECONDS if limit is None else min(LOCAL_SEARCH_SECONDS, limit / 4)
        )
        if params.work_limit is not None:  # its moves are its work limit, a quarter the net
            budget = None if limit is None else limit / 4
        if deadline is not None:  # never past the time left
            budget = (
                deadline - time.perf_counter()
                if budget is None
                else min(budget, deadline - time.perf_counter())
            )
        if budget is None or budget > 0:
            better = improve_schedule(inst, first, params.local_search, time_limit=budget)
            tracker.offer_schedule("local-search", better)


def _run_plan(
    inst: Instance,
    names: tuple[str, ...],
    shares: dict[str, float],
    tracker: _Tracker,
    params: SolveOptions,
    info: dict[str, Any],
    deadline: float | None,
    *,
    strict: bool,
) -> None:
    """Run ``names`` in order, each on the best schedule so far with its share of the time
    left, until the gap closes; a failure is raised (``strict``) or recorded."""
    methods: dict[str, str] = info["methods"]
    todo = list(names)
    while todo and not (tracker.closed() and not strict):
        name = todo.pop(0)
        share = shares[name] / (shares[name] + sum(shares[m] for m in todo))
        budget = None
        if deadline is not None:
            left = deadline - time.perf_counter()
            if left <= 0.05 and not strict:
                methods[name] = "skipped: no time left"
                continue
            budget = max(left, 1e-3) if not todo else left * share
            least = MIN_BUDGET_S.get(name)
            if least is not None and budget < least and not strict:
                methods[name] = f"skipped: budget {budget:.1f} s < {least:g} s"
                continue
        tracker.display.set_stage(name)
        t = time.perf_counter()
        schedule = tracker.schedule
        if schedule is None:  # a method that needs none (``needs_schedule=False``)
            schedule = Schedule(inst, inst.arrival.copy(), policy="none")
        try:
            facts = METHODS[name].run(
                inst, schedule, params.replace(time_limit=budget), _Feed(tracker, name)
            )
        except (LPTooLargeError, MemoryError, ValueError, RuntimeError) as exc:
            if strict:
                raise
            methods[name] = f"failed: {exc}"
        except Exception as exc:  # a method's bug: the run goes on with what it has
            if strict:
                raise
            methods[name] = f"failed: {type(exc).__name__}: {exc}"
        else:
            methods[name] = f"done in {time.perf_counter() - t:.2f} s"
            info.update(facts or {})
            if info.get("status") == SolveStatus.INTERRUPTED.value:  # it stopped on Ctrl-C
                raise KeyboardInterrupt
        finally:
            tracker.flush()
    for name in todo:
        methods[name] = "skipped: the gap is closed"


def _result(
    original: Instance,
    shift: int,
    tracker: _Tracker,
    floor: float,
    info: dict[str, Any],
    *,
    explicit: bool,
    bound_only: bool,
) -> Result:
    """The :class:`Result` of what ``tracker`` holds, on the instance's own time axis (the
    bound alone for a plan of lower-side methods)."""
    sched = None if bound_only else tracker.schedule
    if sched is not None:
        sched = Schedule(original, sched.start + shift, policy=sched.policy, info=sched.info)
    bound, bound_method = tracker.bound, tracker.bound_method
    if not math.isfinite(bound):  # no method reported one: the opening's
        bound, bound_method = floor, "combinatorial"
    objective = None if sched is None else sched.tel
    closed = objective is not None and math.ceil(bound - _EPS) >= objective
    ended = info.pop("status", None)
    if tracker.rejected:
        info["rejected"] = list(tracker.rejected)
    if info["interrupted"]:
        status = SolveStatus.INTERRUPTED
    elif ended == SolveStatus.ERROR.value:
        status = SolveStatus.ERROR
    elif closed:
        status = SolveStatus.OPTIMAL
    elif explicit and ended in _ENDINGS:
        status = _ENDINGS[ended]
    elif objective is None:
        status = SolveStatus.BOUND
    else:
        status = SolveStatus.GAP
    if closed and objective is not None:
        bound = float(objective)  # the gap is then 0
    return Result.of_schedule(
        status,
        sched,
        bound,
        bound_method=bound_method,
        upper_method=None if sched is None else sched.policy,
        runtime_s=tracker.elapsed(),
        horizon=info.pop("horizon", None),
        log=list(tracker.log),
        info=info,
    )
