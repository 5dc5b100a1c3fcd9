"""The partial-integrality lower bound: the time-indexed MIP, integer only on the long requests.

The time-indexed model of SPEC section 3 is built at the tight horizon of a feasible schedule
(:func:`~lpsched.formulations.horizon.tight_horizon`: ``T = min(T1, T2)`` and the start windows
``p_i <= a_i + UB - sum o``); the columns ``x_{i,k}`` of the requests that dominate memory (the
*long* set ``L``) are integer, the columns of the others continuous in ``[0, 1]``; HiGHS branch
and cut minimises TEL over it. Its dual bound is a lower bound on the optimal TEL at any stop.

Validity (ours). Let ``OPT`` be the optimal TEL and ``P_L`` the model above.

* The horizon and the windows keep every optimal schedule: an optimal schedule has TEL
  ``<= UB``, hence ``C_max <= min(T1, T2)`` and every wait ``p_i - a_i <= UB - sum o``
  (:mod:`lpsched.formulations.horizon`). So the exact MIP at this horizon has optimum ``OPT``.
* ``P_L`` only drops integrality constraints of that MIP: every integer schedule's ``x`` (or
  its class counts ``y``, when identical requests are aggregated) satisfies the same rows with
  the same objective, so ``min P_L <= OPT``.
* HiGHS's branch and bound, run with an absolute gap ``g`` (:data:`ABS_GAP`), only discards
  parts of the search whose LP bound exceeds ``p - g`` for its incumbent ``p`` at that moment
  (its ``optimality_limit``; incumbents only improve, so every part discarded so far has a
  bound above ``p - g`` for the current ``p``), and reports ``d = min(p, best open bound)``.
  Hence ``min P_L >= min(d, p - g)`` at any stop, and so ``OPT >= b = min(d, p - g)``
  (``d`` alone when there is no incumbent); TEL is an integer, so ``OPT >= ceil(b)`` (less a
  tolerance ``1e-5``, or ``1e-9 |b|``, for HiGHS's floating point). With every column
  integer the objective is integral and HiGHS discards above ``p - 1 + 1e-6`` instead, where
  every solution has TEL ``>= p``: the same bound holds.
* When HiGHS has closed ``P_L`` (``d = p``, so ``min P_L >= p - g``), one more run may add 1:
  with ``K = ceil(p)``, ``P_L`` plus the row ``TEL <= K - 1 + 1e-4``. HiGHS's proof that it is
  infeasible gives ``OPT >= min P_L > K - 1``, i.e. ``OPT >= K``; a solution of it ends that
  run (``ceil(min P_L)`` is then the bound of the first run, up to ``1e-4``). Until then that
  run has no incumbent, discards nothing by its gap, and its dual bound ``d'`` gives
  ``min P_L >= min(d', K - 1 + 1e-4)``. (HiGHS's ``objective_bound`` option would not do:
  its presolve may return a solution above it as optimal.)

``L`` empty gives the LP relaxation at the same horizon; ``L`` = every request gives the exact
MIP (integer objective: a closed run gives ``OPT``). In between, integrality on the requests
whose peak ``s_i + o_i`` is a large share of ``M`` is what the LP misses most: it splits such a
request into fractions that fill the small gaps of the memory profile. The long set is chosen
by a rule of :data:`LONG_RULES` (``benchmarks/bench_partial_integrality.py`` measures them) or
given. The gap ``g`` just below 1 is what makes the run fast: with ``g = 0`` HiGHS must close
the fractional ``P_L`` exactly (scaled-mix n = 30 seed 0, ``s_i + o_i >= 0.4 M``: not closed
after 60 s; with ``g``, closed in about 21 s, shared machine, provisional). The schedule given
is the MIP start.

Source: ours (the observation that integrality on the long requests lifts the bound fast is
ours; SPEC section 3 for the model; HiGHS 1.16's pruning rule read from its source,
``HighsMipSolverData::computeNewUpperLimit`` and the node queue's optimality limit).
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from ...bounds import combinatorial_bound
from ...formulations.horizon import tight_horizon
from ...formulations.time_indexed import time_indexed_matrix
from ...instance import Instance
from ...schedule import Schedule
from ...solvers import build_highs, run_highs
from ...solvers.options import (
    SolveOptions,
    check_max_nonzeros,
    check_size,
    check_threads,
    check_time_limit,
    shift_arrivals,
)
from ...solvers.progress import Observer
from ...solvers.result import Result
from ..method import Method, solver_options

__all__ = [
    "METHOD",
    "ABS_GAP",
    "LONG_RULES",
    "DEFAULT_LONG_RULE",
    "DEFAULT_SHARE",
    "long_requests",
    "partial_integrality_bound",
]

#: Rules for the long set of :func:`long_requests`.
LONG_RULES = ("footprint", "area", "all", "none")
#: The rule used when none is given: at n = 30 (scaled-mix seeds 0-2, uniform-small seed 0) it
#: gave the best bound after 60 s, or within 1 of it (``benchmarks/bench_partial_integrality.py``).
DEFAULT_LONG_RULE = "area"
#: Default ``share`` of each rule that takes one.
DEFAULT_SHARE = {"footprint": 0.4, "area": 0.5}
#: HiGHS's absolute MIP gap ``g`` (rounds): it discards what cannot beat ``p - g``.
ABS_GAP = 0.999
#: HiGHS' ``presolve`` for both runs. Its MIP presolve checks neither the time limit nor the
#: interrupt callbacks often enough: at n = 200 of the scaled mix (M = 50, 980,270
#: non-zeros) it ran 11-22 s on a 9.4 s limit and found no reduction, while SIGTERM waited
#: for it; without it the root LP keeps the limit and gives a better bound in the same time
#: (17,289 against 16,963 at 10 s; at n = 100, 60 s: 4,422 against 4,402; at n = 30 it
#: closes in 5 s instead of 9 s; shared machine, provisional).
PRESOLVE = "off"


def long_requests(
    instance: Instance, rule: str = DEFAULT_LONG_RULE, share: float | None = None
) -> np.ndarray:
    """The long set ``L`` of a rule: the requests whose columns are integer.

    Parameters
    ----------
    instance : Instance
    rule : {"footprint", "area", "all", "none"}
        ``footprint``: ``s_i + o_i >= share * M`` (the request's peak KV cache, tokens, is at
        least ``share`` of the budget). ``area``: the fewest requests of largest token-rounds
        ``A_i = o_i s_i + o_i (o_i + 1) / 2`` whose sum reaches ``share`` of ``sum_i A_i``
        (ties by index). ``all``, ``none``: every request, no request.
    share : float, optional
        In ``(0, 1]``; default :data:`DEFAULT_SHARE` of the rule (ignored by ``all``/``none``).

    Returns
    -------
    ndarray of bool, shape (n,)

    Raises
    ------
    ValueError
        Unknown rule, or ``share`` outside ``(0, 1]``.

    Notes
    -----
    Any ``L`` gives a valid bound (module docstring); the rule only decides its strength and
    cost. Source: ours.
    """
    if rule not in LONG_RULES:
        raise ValueError(f"unknown long-set rule {rule!r}; choose from {', '.join(LONG_RULES)}")
    n = instance.n
    if rule == "all":
        return np.ones(n, dtype=bool)
    if rule == "none":
        return np.zeros(n, dtype=bool)
    share = DEFAULT_SHARE[rule] if share is None else share
    if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share <= 1:
        raise ValueError(f"share must be a number in (0, 1], got {share!r}")
    s = instance.prefill.astype(np.int64)
    o = instance.decode.astype(np.int64)
    if rule == "footprint":
        return (s + o) >= share * instance.memory
    area = o * s + o * (o + 1) // 2
    order = np.argsort(-area, kind="stable")
    before = np.cumsum(area[order]) - area[order]  # token-rounds of the larger requests
    out = np.zeros(n, dtype=bool)
    out[order[before < share * area.sum()]] = True
    return out


def _long_mask(instance: Instance, long: Any, share: float | None) -> np.ndarray:
    """``long`` as a boolean mask of shape (n,): a rule name, a mask, or request indices."""
    if long is None or isinstance(long, str):
        return long_requests(instance, DEFAULT_LONG_RULE if long is None else long, share)
    arr = np.asarray(long)
    if arr.dtype == bool:
        if arr.shape != (instance.n,):
            raise ValueError(
                f"long: a boolean mask needs shape ({instance.n},) for {instance.name}, "
                f"got {arr.shape}"
            )
        return arr.copy()
    if arr.size and (arr.ndim != 1 or not np.issubdtype(arr.dtype, np.integer)):
        raise ValueError("long must be a rule name, a boolean mask or a list of request indices")
    idx = arr.astype(np.int64).reshape(-1)
    if idx.size and (idx.min() < 0 or idx.max() >= instance.n):
        raise ValueError(f"long: request index out of range 0..{instance.n - 1}: {idx.tolist()}")
    out = np.zeros(instance.n, dtype=bool)
    out[idx] = True
    return out


def _round_up(value: float) -> float:
    """``ceil(value)`` less a floating-point tolerance: a bound on an integer TEL."""
    return float(math.ceil(value - max(1e-5, 1e-9 * abs(value))))


def _valid(dual: float, primal: float, target: float = math.inf) -> float:
    """The bound ``min(d, p - g)`` of the module docstring (``-inf`` without a finite dual
    bound), and at most ``target`` (the ``objective_bound`` of the second run)."""
    if not math.isfinite(dual):
        return -math.inf
    return min(dual, primal - ABS_GAP, target)


class _Watch:
    """HiGHS' ``cbMipInterrupt``: pass each better rounded bound to the observer; in the
    second run, stop at its first solution (it refutes the target)."""

    def __init__(self, observer: Observer | None) -> None:
        self.observer = observer
        self.best = -math.inf
        self.target = math.inf  # the objective_bound of the second run
        self.refuted = False

    def check(self, event) -> None:
        out = event.data_out
        # the second run stops at its first solution, so it discards nothing by its gap
        primal = float(out.mip_primal_bound) if math.isinf(self.target) else math.inf
        self.offer(_valid(float(out.mip_dual_bound), primal, self.target))
        if self.refuted:
            event.interrupt()

    def solution(self, event) -> None:
        """``cbMipImprovingSolution`` of the second run: a solution below its target."""
        self.refuted = True

    def offer(self, bound: float) -> None:
        if not math.isfinite(bound):
            return
        b = _round_up(bound)
        if b > self.best:
            self.best = b
            if self.observer is not None:
                self.observer.on_bound(b)


def partial_integrality_bound(
    instance: Instance,
    schedule: Schedule,
    *,
    time_limit: float | None,
    threads: int | None = None,
    observer: Observer | None = None,
    long: str | np.ndarray | list[int] | None = None,
    share: float | None = None,
    aggregate: bool = True,
    max_nonzeros: int | None = None,
) -> Result:
    """Lower bound on the optimal TEL from the MIP with integrality on the long requests only.

    Parameters
    ----------
    instance : Instance
        Requests ``(s_i, o_i, a_i)``, budget ``M``; arrivals from any round (the model is
        built on the axis shifted by the earliest arrival, which changes no TEL).
    schedule : Schedule
        A feasible schedule of ``instance`` (its starts; preemptive runs are not read): its
        TEL ``UB`` gives the horizon and the windows, and it is the MIP start.
    time_limit : float or None
        Seconds for the whole call, build included (None: until HiGHS closes the model).
    threads : int, optional
        HiGHS threads.
    observer : Observer, optional
        Receives each strictly better bound (rounds, an integer value as a float) while
        HiGHS runs, from the thread running HiGHS
        (:meth:`~lpsched.solvers.progress.Observer.on_bound`).
    long : str, ndarray of bool or list of int, optional
        The long set ``L``: a rule of :data:`LONG_RULES` (default :data:`DEFAULT_LONG_RULE`,
        see :func:`long_requests`), a boolean mask of shape (n,), or request indices.
    share : float, optional
        The rule's threshold (:func:`long_requests`).
    aggregate : bool, default True
        One column per class of identical requests and start (the same optimum and LP value,
        :mod:`lpsched.formulations.time_indexed`); a class is integer when a member is in
        ``L`` (more integrality, still a relaxation).
    max_nonzeros : int or None
        Size limit of :mod:`lpsched.solvers.solve` (None: ``LP_MAX_NONZEROS``).

    Returns
    -------
    Result
        ``method="partial-integrality"``; ``bound`` = ``ceil(min(d, p - g))`` for HiGHS's
        dual bound ``d`` and incumbent ``p`` (rounds, module docstring; the LP value rounded
        up when ``L`` is empty), or the combinatorial bound (SPEC section 7) when that is larger
        (HiGHS stopped before its first LP, or its dual bound is still weaker:
        ``info["source"]``); ``horizon`` ``T``. ``info``: ``optimal``
        (``bound = ceil(min P_L)``, the most this relaxation gives, up to ``1e-4``: HiGHS
        closed it and the second run, if needed, settled the last unit), ``dual_bound`` and
        ``primal_bound`` (unrounded, None when absent), ``second_run`` (its HiGHS status, when
        made), ``long`` (``|L|``), ``integer_units``, ``columns``, ``nonzeros``, ``build_s``,
        ``solve_s``, ``status``, ``nodes``, ``time_shift``.

    Raises
    ------
    LPTooLargeError
        The model exceeds ``max_nonzeros`` (or the horizon ``MAX_HORIZON``).
    InfeasibleScheduleError
        ``schedule`` is infeasible for ``instance``.
    ValueError
        ``time_limit``, ``threads``, ``max_nonzeros``, ``long`` or ``share`` out of range.
    KeyboardInterrupt
        Ctrl-C: HiGHS is stopped, every bound found was already given to the observer.

    Notes
    -----
    Validity: a relaxation of the exact MIP at a horizon that keeps every optimal schedule,
    and HiGHS's dual bound is a bound on that relaxation at any stop (module docstring).
    Source: ours.
    """
    import highspy

    MS = highspy.HighsModelStatus
    time_limit = check_time_limit(time_limit)
    threads = check_threads(threads)
    max_nonzeros = check_max_nonzeros(max_nonzeros)
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + time_limit
    original = instance
    instance, shift = shift_arrivals(instance)
    sched = Schedule(instance, np.asarray(schedule.start) - shift)
    mask = _long_mask(instance, long, share)
    hz = tight_horizon(instance, sched)
    check_size(instance, hz.T, hz.slack, max_nonzeros)
    mat = time_indexed_matrix(instance, hz, aggregate=aggregate)
    units = np.array([bool(mask[m].any()) for m in mat.members])
    mixed = bool(units.any())
    info: dict[str, Any] = {
        "optimal": False,
        "dual_bound": None,
        "primal_bound": None,
        "long": int(mask.sum()),
        "integer_units": int(units.sum()),
        "units": mat.n_units,
        "columns": mat.ncol,
        "nonzeros": mat.nnz,
        "upper_bound": hz.upper_bound,
        "time_shift": shift,
    }
    floor = float(combinatorial_bound(instance))

    def result(bound: float, source: str) -> Result:
        if not bound >= floor:  # an early stop's dual bound can be weaker: never return less
            bound, source = floor, "combinatorial"
        info["source"] = source
        info["solve_s"] = time.perf_counter() - t0 - info["build_s"]
        return Result.of_bound(
            method="partial-integrality",
            bound=bound,
            runtime_s=time.perf_counter() - t0,
            horizon=hz.T,
            info=info,
        )

    watch = _Watch(observer)
    left = None if deadline is None else deadline - time.perf_counter()
    if left is not None and left <= 0:
        info.update(build_s=time.perf_counter() - t0, status="time limit reached before the run")
        return result(floor, "combinatorial")
    h = build_highs(mat, relax=not mixed, time_limit=left, threads=threads, integer_units=units)
    h.setOptionValue("presolve", PRESOLVE)
    if mixed:
        h.setOptionValue("mip_abs_gap", ABS_GAP)
        h.cbMipInterrupt += watch.check
        _set_whole_start(h, mat.values_from_starts(sched.start))
    info["build_s"] = time.perf_counter() - t0
    st, hinfo = _run(h, deadline)
    info["status"] = h.modelStatusToString(st)
    if st == MS.kInfeasible:  # impossible: the schedule given is a solution
        raise RuntimeError(
            f"{original.name}: HiGHS reports the partial-integrality model infeasible although "
            "the schedule given is feasible"
        )
    if not mixed:
        if st == MS.kOptimal:
            info["dual_bound"] = float(hinfo.objective_function_value)
            info["optimal"] = True
            watch.offer(info["dual_bound"])
        return result(watch.best, "highs") if info["optimal"] else result(floor, "combinatorial")
    info["nodes"] = int(hinfo.mip_node_count)
    primal = math.inf
    if hinfo.primal_solution_status == 2:  # kSolutionStatusFeasible
        primal = info["primal_bound"] = float(hinfo.objective_function_value)
    if math.isfinite(hinfo.mip_dual_bound):
        info["dual_bound"] = float(hinfo.mip_dual_bound)
    watch.offer(_valid(float(hinfo.mip_dual_bound), primal))
    target = _round_up(primal) - 1 + 1e-4 if math.isfinite(primal) else math.inf
    info["optimal"] = st == MS.kOptimal and watch.best > target
    left = None if deadline is None else deadline - time.perf_counter()
    if st == MS.kOptimal and not info["optimal"] and (left is None or left > 0):
        # min P_L lies in [p - g, p]: try to prove it above K - 1 (module docstring)
        h = build_highs(mat, time_limit=left, threads=threads, integer_units=units)
        h.setOptionValue("presolve", PRESOLVE)
        cols = np.arange(mat.ncol, dtype=np.int32)
        h.addRow(-highspy.kHighsInf, target, mat.ncol, cols, mat.cost)  # TEL <= K - 1 + 1e-4
        watch.target = target
        h.cbMipInterrupt += watch.check
        h.cbMipImprovingSolution += watch.solution
        st, hinfo = _run(h, deadline)
        info["second_run"] = h.modelStatusToString(st)
        # a solution of the second run (TEL <= K - 1 + 1e-4) refutes the target: the bound
        # stays; the proof that there is none gives K
        watch.refuted |= hinfo.primal_solution_status == 2  # kSolutionStatusFeasible
        if st == MS.kInfeasible:
            watch.offer(target + 1 - 1e-4)
        elif not watch.refuted:
            watch.offer(_valid(float(hinfo.mip_dual_bound), math.inf, target))
        info["optimal"] = st == MS.kInfeasible or watch.refuted
    return result(watch.best, "highs")


def _set_whole_start(h, values: np.ndarray) -> None:
    """Give HiGHS every column of the MIP start, zeros included: given its non-zeros only,
    HiGHS reads the other columns as unknown and first runs a sub-MIP to complete them (4.7 s
    of a 9.4 s limit at n = 200 of the scaled mix, before its own presolve)."""
    idx = np.arange(values.size, dtype=np.int32)
    h.setSolution(int(values.size), idx, np.asarray(values, dtype=np.float64))


def _run(h, deadline: float | None):
    """Run ``h`` until its time limit or ``deadline``; Ctrl-C raises ``KeyboardInterrupt``
    (every bound found was already reported). Returns the model status and ``HighsInfo``."""
    if deadline is not None:
        h.setOptionValue("time_limit", max(deadline - time.perf_counter(), 1e-3))
    if run_highs(h, deadline):
        raise KeyboardInterrupt
    return h.getModelStatus(), h.getInfo()


# --------------------------------------------------------------------------- the certify method


def run(instance: Instance, schedule: Schedule, options: SolveOptions, observer: Observer) -> None:
    """Report every better bound of :func:`partial_integrality_bound` (rounds) to
    ``observer``; the contract is :class:`~lpsched.certify.method.Method`."""
    res = partial_integrality_bound(
        instance, schedule, max_nonzeros=options.max_nonzeros, **solver_options(options, observer)
    )
    observer.on_bound(res.bound)


METHOD = Method(
    "partial-integrality",
    "lower",
    "the MIP with integrality on the long requests only (HiGHS' dual bound)",
    run,
)
