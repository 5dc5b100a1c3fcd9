"""The best lower bound on the optimal TEL in a time limit, saying which it is (``lpsched bound``).

:func:`best_bound` with ``method="auto"`` gives the LP relaxation when it is small enough and
solved in time, else the combinatorial bound (SPEC section 7); any lower-side method of
:data:`~lpsched.certify.methods.METHODS` can be asked for by name (:func:`bound_choices`).

Source: SPEC sections 3 and 7; ours (the ``auto`` rule, measured in ``benchmarks/bench_exact.py``).
"""

from __future__ import annotations

import math
import time

from ..bounds import combinatorial_bound, trivial_bound
from ..formulations.horizon import tight_horizon
from ..instance import Instance
from ..policies.local_search import best_heuristic
from ..schedule import Schedule
from ..solvers.options import (
    AUTO_LP_MAX_NONZEROS,
    LP_MAX_NONZEROS,
    SolveOptions,
    check_max_nonzeros,
    check_time_limit,
    refuse_if_surely_too_large,
    shift_arrivals,
)
from ..solvers.progress import Observer
from ..solvers.result import BoundResult, LPTooLargeError
from ..solvers.solve import lp_bound
from .method import Method
from .methods import METHODS, bound_methods
from .plan import MIN_BUDGET_S

__all__ = ["best_bound", "bound_choices"]


def best_bound(
    instance: Instance,
    time_limit: float | None = 60.0,
    *,
    method: str = "auto",
    max_nonzeros: int | None = None,
    progress: Observer | None = None,
) -> BoundResult:
    """The best lower bound affordable in ``time_limit`` seconds, saying which it is.

    Parameters
    ----------
    instance : Instance
        Arrivals from any round on (every bound is taken on the axis shifted by the earliest
        arrival, which changes none).
    time_limit : float or None, default 60
        Seconds for the LP solve: None (no limit) or a finite number ``> 0``.
    method : str, default "auto"
        ``auto``: the LP relaxation when its matrix has at most ``max_nonzeros`` non-zeros
        and HiGHS solves it within ``time_limit``, else the combinatorial bound; the larger of
        the LP and the combinatorial value is returned. Any other name is a lower-side method
        of :data:`~lpsched.certify.methods.METHODS` (:func:`bound_choices`), run alone: on the
        best list schedule when it needs one, with ``time_limit`` as its budget.
    max_nonzeros : int or None
        Size limit of the LP: above it ``auto`` gives the combinatorial bound and ``lp``
        raises. None: :data:`AUTO_LP_MAX_NONZEROS` for ``auto`` (see
        ``benchmarks/bench_exact.py``), :data:`LP_MAX_NONZEROS` for ``lp``.
    progress : Observer, optional
        See :func:`solve_lp`.

    Returns
    -------
    BoundResult
        ``method`` names the bound used; ``info["reason"]`` says why, ``info`` also has the
        other candidate's value when computed.

    Raises
    ------
    ValueError
        Unknown method; ``time_limit`` out of range. ``method="lp"`` raises
        :class:`~lpsched.solvers.result.LPTooLargeError` above ``max_nonzeros`` and
        ``RuntimeError`` on an LP time-out.
    KeyboardInterrupt
        Ctrl-C during the LP solve (HiGHS is stopped first).
    """
    choices = bound_choices()
    if method not in choices:
        raise ValueError(f"unknown bound method {method!r}; choose from {', '.join(choices)}")
    given = max_nonzeros  # a method run alone applies its own default to None
    max_nonzeros = check_max_nonzeros(
        max_nonzeros, AUTO_LP_MAX_NONZEROS if method == "auto" else LP_MAX_NONZEROS
    )
    time_limit = check_time_limit(time_limit)
    t0 = time.perf_counter()
    instance, _ = shift_arrivals(instance)
    if method not in ("auto", "lp", "combinatorial"):
        return _run_alone(METHODS[method], instance, time_limit, given, progress, t0)
    comb = BoundResult(
        "combinatorial",
        float(combinatorial_bound(instance)),
        time.perf_counter() - t0,
        info={"offline": instance.offline},
    )
    if method == "combinatorial":
        return comb
    if method == "lp":
        return lp_bound(
            instance, max_nonzeros=max_nonzeros, time_limit=time_limit, progress=progress
        )
    reason = None
    try:  # before the heuristic: even the smallest horizon possible is too large
        refuse_if_surely_too_large(instance, max_nonzeros)
    except LPTooLargeError as exc:
        reason = f"LP too large: {exc}"
    else:
        try:
            lp = lp_bound(
                instance, max_nonzeros=max_nonzeros, time_limit=time_limit, progress=progress
            )
        except LPTooLargeError as exc:
            reason = f"LP too large: {exc}"
        except RuntimeError as exc:
            within = "" if time_limit is None else f" in {time_limit:g} s"
            reason = f"LP not solved{within} ({exc})"
        else:
            if lp.bound >= comb.bound:
                lp.info.update(
                    reason=f"LP solved in {lp.runtime_s:.2f} s", combinatorial=comb.bound
                )
                lp.runtime_s = time.perf_counter() - t0
                return lp
            reason = f"combinatorial {comb.bound:g} above the LP value {lp.bound:g}"
            comb.info["lp"] = lp.bound
    comb.info["reason"] = reason
    comb.runtime_s = time.perf_counter() - t0
    return comb


def bound_choices() -> list[str]:
    """The choices of :func:`best_bound` and ``lpsched bound --method``: ``auto`` and every
    lower-side method of :data:`~lpsched.certify.methods.METHODS`, in the registry's order."""
    return ["auto", *bound_methods()]


class _Best(Observer):
    """Keeps the largest bound reported, and passes it on to ``display``."""

    def __init__(self, display: Observer | None) -> None:
        super().__init__()
        self.best = -math.inf
        self._display = display
        self.log_enabled = display is not None and display.log_enabled

    def on_bound(self, bound: float) -> None:
        if math.isfinite(bound) and bound > self.best:
            self.best = float(bound)
            if self._display is not None:
                self._display.on_bound(bound)

    def log(self, text: str) -> None:
        if self._display is not None:
            self._display.log(text)


def _run_alone(
    method: Method,
    instance: Instance,
    time_limit: float | None,
    max_nonzeros: int | None,
    progress: Observer | None,
    t0: float,
) -> BoundResult:
    """``method`` run once on the shifted ``instance`` (the best list schedule as its
    schedule when it needs one); its best bound as a :class:`BoundResult`.

    A budget below the method's minimum (:data:`~lpsched.certify.plan.MIN_BUDGET_S`) is
    refused (``ValueError``), a bound above the schedule's TEL is a method's bug
    (``RuntimeError``), and a method that reports no bound gives ``sum o_i`` with
    ``info["reported"] = False``.
    """
    least = MIN_BUDGET_S.get(method.name)
    if least is not None and time_limit is not None and time_limit < least:
        raise ValueError(
            f"{method.name} needs a time limit of at least {least:g} s (its first solve cannot "
            f"be stopped), got {time_limit:g} s"
        )
    schedule = (
        best_heuristic(instance)
        if method.needs_schedule
        else Schedule(instance, instance.arrival.copy(), policy="none")
    )
    left = None if time_limit is None else max(time_limit - (time.perf_counter() - t0), 1e-3)
    seen = _Best(progress)
    method.run(instance, schedule, SolveOptions(time_limit=left, max_nonzeros=max_nonzeros), seen)
    info: dict[str, object] = {"reported": math.isfinite(seen.best)}
    if method.needs_schedule:
        info["upper_bound"] = schedule.tel
        if seen.best > schedule.tel + 1e-6 * max(1.0, schedule.tel):
            raise RuntimeError(
                f"{method.name} reported a bound {seen.best:g} above the TEL {schedule.tel} of a "
                "feasible schedule (a bug in the method)"
            )
    value = seen.best if math.isfinite(seen.best) else float(trivial_bound(instance))
    horizon = tight_horizon(instance, schedule).T if method.needs_schedule else None
    return BoundResult(method.name, value, time.perf_counter() - t0, horizon=horizon, info=info)
