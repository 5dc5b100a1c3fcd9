"""The LP relaxation at the paper's scale over aggregated rounds, disaggregated on demand.

The time-indexed LP of SPEC section 3 has one memory row per round. This solver keeps every
column ``(i, k)`` of it (a request and a start round) but sums the memory rows over *windows*
of consecutive rounds ``W = {b+1, ..., e}``::

    sum_{t in W} sum_{(i,k)} a_t(i, k) x_ik  <=  |W| M,
    a_t(i, k) = s_i + t - k  on  k < t <= k + o_i  (SPEC section 2),

a relaxation of the LP (a sum of its rows): every LP-feasible ``x`` satisfies it, so the
*aggregated LP* is at most the LP value, hence at most the optimal TEL. It is solved by column
generation (:func:`aggregated_lp`): with the duals ``u_i`` of ``assign`` and ``mu_W >= 0``
of the window rows, a column's reduced cost is ``c_ik - u_i + sum_W mu_W A_W(i, k)`` with
``A_W = sum_{t in W} a_t``, which is the reduced cost of the round-indexed model at
``lambda_t = mu_W`` for ``t in W``: the pricing is the round-level scan
:func:`~lpsched.solvers.pricing.price_starts` at a piecewise-constant ``lambda``.

**Validity of every bound reported.** Each bound is the Lagrangian value ``L(lambda)`` of the
round-indexed LP (module :mod:`~lpsched.solvers.colgen`: for every real ``lambda``,
``L(lambda)`` is at most the LP value, the minimum being over every column of the horizon and
windows), taken at ``lambda`` constant on each window. It does not depend on the master being
solved, on the windows, or on any tolerance.

**Refinement.** When no column prices out, the master value is the aggregated LP value and
equals ``L`` at its duals. The master's solution then gives a memory per round ``m_t``; a
window where some ``m_t > M`` is cut in two halves (a finer aggregation: its rows are sums of
the old ones' parts, so the value can only rise), the master is rebuilt over the new windows
with every column found so far, and the column generation goes on. When no window is violated,
the master's solution is feasible for the round-indexed LP and optimal for a relaxation of it:
the master value *is* the LP value (``info["lp_value"]``). Every window has width 1 at worst,
so the loop ends at the LP.

The master is small where the round-indexed one is not: at n = 2000 (31,887 rounds of
Sorted-F's schedule) the first windows are 561 rounds wide, and a column has ``o_i / 561 + 2``
non-zeros instead of ``o_i + 1``; the primal simplex re-solves it from its basis after new
columns. The refinements bring it to about 2,000 windows where the memory binds.

Source: the LP of SPEC section 3; aggregation of time-indexed rows and its on-demand
disaggregation follow the bucket-indexed and time-aggregated formulations of Boland, Clement
and Waterer, INFORMS J. Computing 28 (2016) and the dynamic discretisation discovery of Boland,
Hewitt, Marshall and Savelsbergh, Operations Research 65 (2017), here applied to the
constraints of the LP, not to its start times; the column generation and the Lagrangian bound
are those of :mod:`~lpsched.solvers.colgen` (van den Akker, Hurkens and Savelsbergh,
INFORMS J. Computing 12 (2000)). The combination, the window rows of the growing KV-cache
profile and the refinement rule are ours.
"""

from __future__ import annotations

import numbers
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..instance import Instance
from ..schedule import Schedule
from .backends import highs
from .pricing import (
    Generation,
    Pricer,
    check_generation_options,
    seed_schedules,
    unit_model,
)
from .progress import Observer
from .result import Result

#: HiGHS' algorithms for the master (:func:`aggregated_lp`).
MASTER_SOLVERS = ("simplex", "ipm", "pdlp")

__all__ = [
    "MASTER_SOLVERS",
    "aggregated_lp",
    "window_coefficients",
    "split_violated",
]


def window_coefficients(
    k: np.ndarray, s: np.ndarray, o: np.ndarray, begin: np.ndarray, end: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The window rows' coefficients ``A_W(i, k) = sum_{t in W} a_t(i, k)`` of some columns.

    Parameters
    ----------
    k, s, o : ndarray of int64, shape (m,)
        Start round ``k``, prefill ``s_i`` and decode ``o_i`` (tokens) of each column.
    begin, end : ndarray of int64, shape (w,)
        Disjoint windows in order: window ``j`` holds the rounds ``begin[j] + 1 .. end[j]``
        (``begin[j] < end[j] <= begin[j + 1]``).

    Returns
    -------
    indptr : ndarray of int64, shape (m + 1,)
    window : ndarray of int64, shape (nnz,)
    value : ndarray of float64, shape (nnz,)
        Column ``c``'s windows and coefficients (tokens x rounds) in
        ``indptr[c] .. indptr[c + 1]``: ``(r - l + 1)(s - k) + (l + r)(r - l + 1) / 2`` over the
        rounds ``l .. r`` the window shares with ``k + 1 .. k + o`` (windows it misses have no
        entry).

    Notes
    -----
    O(m log w + nnz): the windows met are those from the first one ending at or after
    ``k + 1`` to the last one beginning before ``k + o``; every window between them lies
    inside ``k + 1 .. k + o``, as they are disjoint and in order. Source: ours (the sum of
    SPEC section 2's memory over a window).
    """
    k, s, o = (np.asarray(v, dtype=np.int64) for v in (k, s, o))
    first = np.searchsorted(end, k + 1, side="left")
    last = np.searchsorted(begin, k + o, side="left") - 1
    length = np.maximum(last - first + 1, 0)
    indptr = np.concatenate(([0], np.cumsum(length)))
    col = np.repeat(np.arange(k.size), length)
    window = first[col] + np.arange(int(indptr[-1])) - indptr[col]
    lo = np.maximum(begin[window] + 1, (k + 1)[col])
    hi = np.minimum(end[window], (k + o)[col])
    width = hi - lo + 1
    value = (width * (s - k)[col]).astype(np.float64) + (lo + hi) * width / 2.0
    return indptr, window, value


def split_violated(
    edges: np.ndarray, memory: np.ndarray, M: float, tol: float = 1e-12
) -> np.ndarray:
    """The windows ``edges`` with every window where the memory exceeds ``M`` cut in two.

    Parameters
    ----------
    edges : ndarray of int64, shape (w + 1,)
        Window boundaries (:func:`window_coefficients`).
    memory : ndarray of float64, shape (edges[-1] + 1,)
        Memory per round of a fractional solution (tokens; ``memory[0]`` unused).
    M : float
        The KV-cache budget (tokens).
    tol : float, default 1e-12
        A round is violated when ``memory > M + max(tol M, 1e-6)`` (tokens): 0.001 token at
        M = 10^9, where a relative 10^-6 let an overflow of one token stand and the aggregated
        value be reported as the LP's (an attacker's case). A window cut for a solver's
        rounding error only refines the master; the windows are one round wide at worst.

    Returns
    -------
    ndarray of int64
        The new boundaries (the old ones and the midpoint of each violated window wider than one
        round); equal to ``edges`` when no window is violated.

    Notes
    -----
    Source: ours (the disaggregation step of the module docstring).
    """
    over = memory[1:] > M + max(tol * M, 1e-6)
    cut = []
    for j in range(edges.size - 1):
        b, e = int(edges[j]), int(edges[j + 1])
        if e - b > 1 and over[b:e].any():
            cut.append((b + e) // 2)
    return np.unique(np.concatenate((edges, np.asarray(cut, dtype=np.int64))))


def _memory_of(k, s, o, x, rounds: int) -> np.ndarray:
    """Memory per round ``0..rounds`` of columns taken ``x`` times (second differences)."""
    keep = x > 1e-12
    k, s, o, x = k[keep], s[keep], o[keep], x[keep]
    d2 = np.zeros(rounds + 3)
    # a_t = s + t - k on k < t <= k + o: +(s+1) at k+1, -(s+1) at k+2 plus +1 slope...
    np.add.at(d2, k + 1, x * (s + 1))
    np.add.at(d2, k + 2, -x * s)
    np.add.at(d2, k + o + 1, -x * (s + o + 1))
    np.add.at(d2, k + o + 2, x * (s + o))
    return np.cumsum(np.cumsum(d2))[: rounds + 1]


class _WindowMaster:
    """The restricted master over windows in one HiGHS model: ``assign`` rows ``0..U-1``
    (``= c_u``), window rows ``sum_{t in W} m_t <= |W| M``, and the columns added so far.

    The windows come in *groups*, each a set of disjoint windows in order: group 0 the first
    grid over ``1..T``, and each refinement (:meth:`refine`) a group of the halves of the
    windows it cuts. A cut window's row stays (implied by its halves'), so HiGHS re-solves
    from its basis with the dual simplex; a round's price is the sum of the duals of the rows
    whose windows hold it (:meth:`duals`). The finest windows, the leaves, are :attr:`edges`.
    """

    def __init__(self, count, s, o, a, M: int, edges: np.ndarray, threads: int | None, solver: str):
        # the simplex from the basis; IPM and PDLP from scratch at each solve, without crossover
        self.h = highs.master_highs(threads, None if solver == "simplex" else solver)
        self.solver = solver
        self.count, self.s, self.o, self.a, self.M = count, s, o, a, float(M)
        self.U = int(count.size)
        self.rounds = int(edges[-1])
        self.edges = np.asarray(edges, dtype=np.int64)
        self.groups: list[tuple[np.ndarray, np.ndarray, int]] = []  # (begin, end, first row)
        self.nrows = 0
        self.units = np.zeros(0, dtype=np.int64)
        self.starts = np.zeros(0, dtype=np.int64)
        self.nnz = 0
        self.retries = 0
        self.finer: np.ndarray | None = None  # the leaves of the next level, once decided
        self.refined = False  # rows added since the last solve: the dual simplex next
        self.levels: list[dict[str, Any]] = []  # per level solved: windows, value, seconds
        self.level_t0 = time.perf_counter()
        self.last_mean_start: np.ndarray | None = None  # of the last optimal solve
        c = count.astype(np.float64)
        self._rows(c, c, np.zeros(self.U, np.int32), np.zeros(0, np.int32), np.zeros(0))
        self._group(self.edges[:-1], self.edges[1:])

    def _rows(self, lower, upper, start, index, value) -> None:
        self.h.addRows(int(lower.size), lower, upper, int(index.size), start, index, value)
        self.nrows += int(lower.size)

    def _group(self, begin: np.ndarray, end: np.ndarray) -> None:
        """Add the rows of the disjoint windows ``begin[j] + 1 .. end[j]`` with the
        coefficients of every column in the master."""
        first = self.nrows
        w = int(begin.size)
        self.groups.append((begin, end, first))
        indptr, window, value = window_coefficients(
            self.starts, self.s[self.units], self.o[self.units], begin, end
        )
        # the same entries, ordered by row (HiGHS takes rows by their row-wise entries)
        col = np.repeat(np.arange(self.starts.size), np.diff(indptr))
        order = np.argsort(window, kind="stable")
        per_row = np.bincount(window, minlength=w)
        start = np.concatenate(([0], np.cumsum(per_row)[:-1])).astype(np.int32)
        cap = (end - begin).astype(np.float64) * self.M
        self._rows(np.full(w, -np.inf), cap, start, col[order].astype(np.int32), value[order])
        self.nnz += int(value.size)

    def refine(self, finer: np.ndarray) -> None:
        """Add the rows of the leaves of ``finer`` (a refinement of :attr:`edges`) that are new."""
        old = set(zip(self.edges[:-1].tolist(), self.edges[1:].tolist(), strict=True))
        pairs = [
            (b, e)
            for b, e in zip(finer[:-1].tolist(), finer[1:].tolist(), strict=True)
            if (b, e) not in old
        ]
        self.edges = np.asarray(finer, dtype=np.int64)
        if pairs:
            begin, end = (np.asarray(v, dtype=np.int64) for v in zip(*pairs, strict=True))
            self._group(begin, end)

    def add(self, units: np.ndarray, starts: np.ndarray) -> None:
        """Add the columns ``(units[j], starts[j])`` (new ones: the caller's pool decides)."""
        if units.size == 0:
            return
        m = int(units.size)
        o, s = self.o[units], self.s[units]
        parts_i = [units[:, None]]
        parts_v = [np.ones((m, 1))]
        cols = [np.arange(m)[:, None]]
        for begin, end, row0 in self.groups:
            indptr, window, value = window_coefficients(starts, s, o, begin, end)
            cols.append(np.repeat(np.arange(m), np.diff(indptr)))
            parts_i.append(row0 + window)
            parts_v.append(value)
        col = np.concatenate([c.ravel() for c in cols])
        index = np.concatenate([p.ravel() for p in parts_i])
        vals = np.concatenate([p.ravel() for p in parts_v])
        order = np.argsort(col, kind="stable")
        ptr = np.concatenate(([0], np.cumsum(np.bincount(col, minlength=m))[:-1]))
        cost = (starts + o - self.a[units]).astype(np.float64)
        upper = self.count[units].astype(np.float64)
        self.h.addCols(
            m, cost, np.zeros(m), upper, int(vals.size), ptr.astype(np.int32),
            index[order].astype(np.int32), vals[order],
        )  # fmt: skip
        self.units = np.concatenate((self.units, units))
        self.starts = np.concatenate((self.starts, starts))
        self.nnz += int(vals.size)

    def solve(self, deadline: float | None) -> bool:
        """Re-solve from the current basis (the dual simplex after new rows, else the primal
        simplex, after new columns); False if a limit or HiGHS stopped it short; an optimum
        sets ``last_mean_start``. Raises ``KeyboardInterrupt`` on Ctrl-C (HiGHS stopped first)."""
        import highspy

        optimal = highspy.HighsModelStatus.kOptimal
        dual, self.refined = self.refined, False
        # HiGHS' simplex now and then ends a warm-started solve with status "unknown": then
        # the other simplex from the same basis, then the dual simplex from scratch
        strategies = (1 if dual else 4, 4 if dual else 1, 1) if self.solver == "simplex" else (0,)
        for attempt, strategy in enumerate(strategies):
            if attempt == 2:
                self.h.clearSolver()
            self.h.setOptionValue("simplex_strategy", strategy)
            if not highs.rerun_highs(self.h, deadline):
                return False
            status = self.h.getModelStatus()
            if status == optimal or status == highspy.HighsModelStatus.kTimeLimit:
                break
            self.retries += 1
        if status == optimal:
            self.last_mean_start = self.mean_start()
        return status == optimal

    def level_solved(self, z: float, info: dict[str, Any]) -> bool:
        """Level solved at ``z``: True if no window overflows, else the cut is decided."""
        self.levels.append(
            {
                "windows": int(self.edges.size - 1),
                "value": z,
                "seconds": time.perf_counter() - self.level_t0,
            }
        )
        info["aggregated_value"] = z
        finer = split_violated(self.edges, self.memory(), self.M)
        if finer.size == self.edges.size:
            info["converged"] = True
            if self.solver == "simplex":  # an interior or PDLP value is approximate
                info["lp_value"] = z
            return True
        self.finer = finer
        return False

    def advance(self) -> None:
        """The rows of the windows :meth:`level_solved` cut, if it did."""
        if self.finer is not None:
            self.refine(self.finer)
            self.finer = None
            self.refined = True
            self.level_t0 = time.perf_counter()

    @property
    def windows(self) -> int:
        """Windows of the last level decided (a cut not applied yet included)."""
        return int((self.edges if self.finer is None else self.finer).size - 1)

    def value(self) -> float:
        """The master's optimum (rounds)."""
        return float(self.h.getInfo().objective_function_value)

    def duals(self) -> tuple[np.ndarray, np.ndarray]:
        """``u`` (shape (U,)) and ``lambda`` per round (shape (rounds + 1,)): the sum of
        ``-y_W`` over the rows whose windows hold the round."""
        y = np.asarray(self.h.getSolution().row_dual, dtype=np.float64)
        step = np.zeros(self.rounds + 2)
        for begin, end, row0 in self.groups:
            mu = -y[row0 : row0 + begin.size]
            np.add.at(step, begin + 1, mu)
            np.add.at(step, end + 1, -mu)
        lam = np.cumsum(step)[: self.rounds + 1]
        lam[0] = 0.0
        return y[: self.U], lam

    def mean_start(self) -> np.ndarray:
        """Each unit's start averaged over the master's solution (rounds, shape (U,))."""
        x = np.asarray(self.h.getSolution().col_value, dtype=np.float64)
        total = np.bincount(self.units, weights=x * self.starts, minlength=self.U)
        return total / self.count

    def memory(self) -> np.ndarray:
        """Memory per round ``0..rounds`` of the master's solution (tokens)."""
        x = np.asarray(self.h.getSolution().col_value, dtype=np.float64)
        return _memory_of(self.starts, self.s[self.units], self.o[self.units], x, self.rounds)


def aggregated_lp(
    instance: Instance,
    schedule: Schedule,
    *,
    seeds: Sequence[np.ndarray] = (),
    time_limit: float | None = 60.0,
    threads: int | None = None,
    observer: Observer | None = None,
    horizon: int | None = None,
    windows: bool = True,
    width: int | None = None,
    windows_target: int = 64,
    alpha: float = 0.5,
    tol: float = 1e-7,
    max_iterations: int | None = None,
    master_solver: str = "simplex",
) -> Result:
    """The LP relaxation of SPEC section 3 over aggregated rounds, refined on demand.

    Parameters
    ----------
    instance : Instance
        Requests ``(s_i, o_i, a_i)`` and the KV-cache budget ``M`` (tokens); arrivals from any
        round on (solved on the axis shifted by the earliest arrival).
    schedule : Schedule
        A feasible schedule: its TEL gives the horizon and the start windows
        (:func:`~lpsched.formulations.horizon.tight_horizon`), its starts the first columns.
    seeds : sequence of ndarray of int, each shape (n,)
        Starts (rounds) of other feasible schedules of ``instance``, also first columns.
    time_limit : float or None, default 60
        Seconds for the whole call; the best bound so far is returned when it runs out.
    threads : int, optional
        HiGHS threads.
    observer : Observer, optional
        Receives every strictly better bound (rounds) as found.
    horizon : int, optional
        ``T`` in rounds, ``>= min(T1, T2)``.
    windows : bool, default True
        Start windows ``p_i <= a_i + UB - sum o``; False: ``K_i = {a_i .. T - o_i}``.
    width : int, optional
        First window width (rounds). Default: the makespan of the seed columns over
        ``windows_target``, rounded up.
    windows_target : int, default 64
        Number of first windows over the seed columns' makespan when ``width`` is not given.
        At n = 2000 (makespan 31,887 rounds) 64 gives windows of 561 rounds, whose level is
        solved in 6 s (5,225,649) and refined to 5,419,241 after 77 s and 5,421,725 after
        200 s; 512 (windows of 71 rounds) reaches 5,419,134 after 46 s, 5,421,694 after 164 s.
        The coarse start gives a bound above the combinatorial one within seconds, which a
        one-minute certify needs (``benchmarks/bench_aggregated.py``).
    alpha : float, default 0.5
        Wentges smoothing weight in ``[0, 1)`` (as :func:`~lpsched.solvers.colgen.colgen_lp`).
    tol : float, default 1e-7
        A level has converged when ``master - bound <= tol * max(1, master)``; in ``(0,
        1e-4]``, as a larger one would report a restricted master's value as the LP's.
    max_iterations : int, optional
        Stop after this many master solves.
    master_solver : {"simplex", "ipm", "pdlp"}, default "simplex"
        HiGHS' algorithm for the master: the primal simplex from the basis after new columns
        and the dual simplex after new rows; or, from scratch each time and without crossover,
        the interior point method or PDLP (first-order; its approximate duals give valid
        bounds all the same, as every bound is ``L(lambda)``, but its master value is not
        reported as the LP value). Measured in ``benchmarks/bench_aggregated.py``.

    Returns
    -------
    Result
        ``method="lp-aggregated"``, ``bound`` the best Lagrangian bound (rounds), ``horizon``;
        ``info``: ``converged`` (the LP itself solved), ``lp_value`` (then), ``aggregated_value``
        (the last converged level's value), ``levels`` (per level: windows, value, seconds),
        ``windows``, ``iterations``, ``columns``, ``nonzeros``, ``mispricings``, ``master_s``,
        ``pricing_s``, ``history`` (``(seconds, bound, master value)``), ``time_shift``,
        ``mean_start`` (shape (n,): each request's start averaged over the last master's
        solution, rounds; None before the first solve) and ``column_pool`` (two arrays of
        shape (columns,): a request of each column's class of identical requests, and its
        start round) with ``column_values`` (the last master's solution: how many of the class
        start there, summing to the class's size).

    Raises
    ------
    ValueError
        ``time_limit``, ``threads``, ``width``, ``windows_target``, ``alpha`` or ``tol`` out of
        range, an unknown seed policy or ``master_solver``.
    HorizonError
        ``horizon`` below ``min(T1, T2)``.
    LPTooLargeError
        The horizon is above ``MAX_HORIZON``.
    InfeasibleScheduleError
        ``schedule`` infeasible.
    KeyboardInterrupt
        Ctrl-C during a master solve (the observer has had every improvement).

    Notes
    -----
    Validity: every bound is ``L(lambda)`` of the round-indexed LP at a piecewise-constant
    ``lambda`` (module docstring). Source: the module docstring.
    """
    time_limit, threads = check_generation_options(
        time_limit, threads, alpha, master_solver, MASTER_SOLVERS
    )
    for name, v in (("width", width), ("windows_target", windows_target)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1):
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    if not 0.0 < tol <= 1e-4:
        raise ValueError(f"tol must be a number in (0, 1e-4], got {tol!r}")
    t0 = time.perf_counter()
    instance, shift, schedule, seeds, hz, _, first, unit_of, count, lo, hi, s, o, a = unit_model(
        instance, schedule, horizon, windows, "the aggregated master", seeds
    )
    price = Pricer(lo, hi, s, o, a, count, instance.memory)
    pool = _ColumnPool()
    for seed in seed_schedules(instance, schedule, seeds):
        fits = (seed >= lo[unit_of]) & (seed <= hi[unit_of])
        pool.fresh(unit_of[fits], seed[fits])
    if width is None:
        width = max(1, -(-pool.reach(o) // windows_target))
    edges = _grid(int(hz.T), width)

    run = Generation.open(t0, time_limit, price, observer)
    master = _WindowMaster(count, s, o, a, instance.memory, edges, threads, master_solver)
    master.add(np.concatenate(pool.units), np.concatenate(pool.starts))

    def master_add(units: np.ndarray, starts: np.ndarray) -> int:
        u, k = pool.fresh(units, starts)
        master.add(u, k)
        return int(u.size)

    run.run(master, master_add, alpha, tol, max_iterations)
    mean_start = master.last_mean_start
    return run.result(
        "lp-aggregated",
        hz.T,
        shift,
        mean_start=None if mean_start is None else mean_start[unit_of] + shift,
        column_pool=(first[master.units], master.starts + shift),
        column_values=np.asarray(master.h.getSolution().col_value, dtype=np.float64),
        levels=master.levels,
        windows=master.windows,
        first_width=int(width),
        columns=int(sum(u.size for u in pool.units)),
        nonzeros=master.nnz,
        master_s=run.master_s,
        pricing_s=price.seconds,
        history=run.history,
        T=hz.T,
        slack=hz.slack,
    )


def _grid(end: int, step: int) -> np.ndarray:
    """Window boundaries ``0, step, 2 step, ..., end`` (rounds)."""
    return np.unique(np.concatenate((np.arange(0, end, step), [end]))).astype(np.int64)


class _ColumnPool:
    """Every column found so far, in the order found (the seeds', then the pricing's)."""

    def __init__(self) -> None:
        self.units: list[np.ndarray] = []
        self.starts: list[np.ndarray] = []
        self.seen: set[tuple[int, int]] = set()

    def fresh(self, units: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The columns ``(units[j], starts[j])`` not in the pool yet, now put in it."""
        keep = [
            j for j, key in enumerate(zip(units.tolist(), starts.tolist(), strict=True))
            if key not in self.seen
        ]  # fmt: skip
        u, k = units[keep], starts[keep]
        self.seen.update(zip(u.tolist(), k.tolist(), strict=True))
        self.units.append(u)
        self.starts.append(k)
        return u, k

    def reach(self, o: np.ndarray) -> int:
        """The last round the pool's columns cover (``o``: decode per unit)."""
        return int(
            max(
                int((k + o[u]).max())
                for u, k in zip(self.units, self.starts, strict=True)
                if u.size
            )
        )
