"""Fix-and-optimize / large-neighbourhood search on the time-indexed model (upper side).

:func:`improve_lns` improves a feasible schedule by repeating one step: choose a small set ``S``
of requests (a *neighbourhood*), fix every other request at its current start, and re-solve the
starts of ``S`` exactly with a small time-indexed MIP (:func:`solve_neighbourhood`) whose memory
rows have the *residual capacity* ``R(t) = M - m_fixed(t)`` (tokens) left by the fixed requests in
round ``t``, and whose objective is the TEL of ``S``. The current starts of ``S`` are a feasible
solution of that MIP (its MIP start), so an accepted step never raises the TEL.

Neighbourhoods (rounds on the time axis shifted by the earliest arrival):

* **windows of rounds** -- the ``k`` requests that follow position ``j`` in start order (their
  starts lie in a window ``[t0, t0 + W)``, ``W`` set by ``k``), free to start anywhere in
  ``[t0 - e, t0 + W + e]`` (``e`` rounds of extension each side, at least their arrival). The
  window slides left to right by ``k / 2`` requests, so space freed in one window is pulled
  earlier by the next; after the last window a new pass starts at round 0;
* **random / related sets** (``n <= RELATED_MAX_N``) -- a random request and its neighbours in
  start order plus random others, each free over its whole valid window
  ``[a_i, a_i + UB - sum o]`` (:func:`~lpsched.formulations.horizon.start_windows`).

The size ``k`` adapts to the sub-solve time: a sub-MIP stopped by its time limit shrinks ``k``,
a pass of fast proven sub-MIPs without an improvement grows it (up to ``k_max``).

The sub-MIP is small even at n = 2000 (the Azure mix: makespan about 45k rounds): its
columns are only the starts at which a request fits *alone* in the residual capacity (a sliding
minimum of ``R(t) - t``), and its rows only the rounds where a violation can first show. Between
two completions memory only grows (SPEC section 2), so if the fixed memory does not drop after
round ``t`` (``R(t+1) <= R(t)``) and no request of ``S`` completes at ``t``, a violation at ``t``
is also one at ``t + 1``; following the chain, every violation shows at a row of
``{t : R(t+1) > R(t)}`` or at a candidate completion ``k + o_i`` of a column, and those are the
rows. The residual profile is built once with numpy (``O(sum o)``) and updated in ``O(o_i)`` per
moved request; the full time-indexed matrix is never built.

HiGHS checks rows in floating point, so each sub-solution is checked against the exact integer
residual capacity and rejected when it overflows (``info["rejected"]``); CP-SAT's are exact.

Source: ours (fix-and-optimize and large-neighbourhood search: Pochet and Wolsey, *Production
Planning by Mixed Integer Programming*, 2006, chapter 3; Shaw, CP 1998, for related
neighbourhoods), on the model of SPEC section 3.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...executor import execute
from ...formulations.time_indexed import TimeIndexedMatrix
from ...instance import Instance
from ...schedule import Schedule
from ...solvers import (
    build_cpsat,
    build_highs,
    configure_solver,
    run_highs,
    run_interruptible,
    set_start,
)
from ...solvers.options import SolveOptions, check_horizon, check_time_limit, shift_arrivals
from ...solvers.progress import Observer
from ..method import Method, solver_options

__all__ = [
    "METHOD",
    "RELATED_MAX_N",
    "FULL_WINDOW_MAX_N",
    "MAX_ROUNDS",
    "COMPACT_MIN_N",
    "SUB_SOLVERS",
    "ResidualMemory",
    "earliest_fit_schedule",
    "solve_neighbourhood",
    "improve_lns",
]

#: Instances up to this many requests also get random / related neighbourhoods.
RELATED_MAX_N = 200
#: Up to this many requests the related neighbourhoods free each request over every start from
#: its arrival to ``e`` rounds past the makespan; above, over a band of rounds around its start.
FULL_WINDOW_MAX_N = 40
#: Above this many requests :func:`improve_lns` compacts with the executor by default.
COMPACT_MIN_N = 200
#: Longest time axis (rounds from the earliest arrival to past the makespan) whose residual
#: memory profile is stored (8 bytes a round); above it :func:`improve_lns` refuses the instance.
MAX_ROUNDS = 20_000_000
#: Back ends for the sub-MIPs.
SUB_SOLVERS = ("highs", "cpsat")


class ResidualMemory:
    """The memory profile ``m(t)`` of a schedule, kept up to date as requests move.

    Parameters
    ----------
    instance : Instance
        Arrivals already shifted so that the earliest is 0.
    start : ndarray of int, shape (n,)
        Starts ``p_i`` (rounds) of a feasible schedule; copied.
    length : int
        Rounds ``0 .. length`` are stored (``length >= max_i C_i``); no request may be placed
        past ``length``.

    Attributes
    ----------
    start : ndarray of int64, shape (n,)
    mem : ndarray of int64, shape (length + 1,)
        ``mem[t] = m(t)`` in tokens (``mem[0] = 0``).

    Notes
    -----
    Built once in ``O(n + length)`` with difference arrays (``m(t) = A(t) + t N(t)``, ``A`` the
    sum of ``s_i - p_i`` and ``N`` the count of the requests active at ``t``); :meth:`remove` and
    :meth:`place` cost ``O(o_i)``. Source: SPEC section 2; ours.
    """

    def __init__(self, instance: Instance, start: np.ndarray, length: int) -> None:
        self.instance = instance
        self.start = np.array(start, dtype=np.int64)
        self.length = int(length)
        s, o, p = instance.prefill, instance.decode, self.start
        if int((p + o).max()) > self.length:
            raise ValueError("ResidualMemory: a completion lies past the stored rounds")
        dA = np.zeros(self.length + 2, dtype=np.int64)
        dN = np.zeros(self.length + 2, dtype=np.int64)
        np.add.at(dA, p + 1, s - p)
        np.add.at(dA, p + o + 1, p - s)
        np.add.at(dN, p + 1, 1)
        np.add.at(dN, p + o + 1, -1)
        t = np.arange(self.length + 1, dtype=np.int64)
        self.mem = np.cumsum(dA)[: self.length + 1] + t * np.cumsum(dN)[: self.length + 1]

    def _add(self, i: int, p: int, sign: int) -> None:
        s, o = int(self.instance.prefill[i]), int(self.instance.decode[i])
        self.mem[p + 1 : p + o + 1] += sign * (s + np.arange(1, o + 1, dtype=np.int64))

    def remove(self, idx: np.ndarray) -> None:
        """Take the requests ``idx`` out of the profile (their starts are kept)."""
        for i in np.asarray(idx).tolist():
            self._add(i, int(self.start[i]), -1)

    def place(self, idx: np.ndarray, starts: np.ndarray) -> None:
        """Put the requests ``idx`` (out of the profile) back at ``starts``."""
        for i, p in zip(np.asarray(idx).tolist(), np.asarray(starts).tolist(), strict=True):
            self.start[i] = p
            self._add(i, int(p), +1)

    def residual(self) -> np.ndarray:
        """``R(t) = M - m(t)`` in tokens, shape (length + 1,)."""
        return self.instance.memory - self.mem


@dataclass
class _Neighbourhood:
    """The answer of :func:`solve_neighbourhood`.

    Attributes
    ----------
    start : ndarray of int64, shape (k,) or None
        Best starts found for the free requests (rounds), exactly feasible in the residual
        capacity; None when none was found (or the one found overflowed).
    objective : int or None
        ``sum_i start_i`` of that solution (the TEL of the set up to a constant).
    optimal : bool
        The sub-MIP was solved to optimality, or proven infeasible (then ``start`` is None).
    rejected : bool
        The solver's solution overflowed the exact residual capacity (HiGHS tolerance).
    columns, rows, nnz : int
        Size of the sub-MIP.
    seconds : float
    """

    start: np.ndarray | None
    objective: int | None
    optimal: bool
    rejected: bool = False
    columns: int = 0
    rows: int = 0
    nnz: int = 0
    seconds: float = 0.0


def sliding_min(values: np.ndarray, width: int) -> np.ndarray:
    """Minimum of every window of ``width`` consecutive entries: shape ``(len - width + 1,)``.

    Van Herk / Gil-Werman: the running minima within blocks of ``width``, forwards and
    backwards, give each window's minimum from two entries, in O(len) time and memory whatever
    ``width`` is (a strided view and ``min`` take O(len * width): hours for decode lengths of
    10^6, measured by an attacker's pass). Source: van Herk, Pattern Recognition Letters 13
    (1992); Gil and Werman, IEEE PAMI 15 (1993).
    """
    n = values.shape[0]
    if width < 1 or width > n:
        raise ValueError(f"window width must be in 1..{n}, got {width}")
    blocks = -(-n // width)
    padded = np.full(blocks * width, np.iinfo(np.int64).max, dtype=np.int64)
    padded[:n] = values
    rows = padded.reshape(blocks, width)
    forward = np.minimum.accumulate(rows, axis=1).ravel()
    backward = np.minimum.accumulate(rows[:, ::-1], axis=1)[:, ::-1].ravel()
    starts = np.arange(n - width + 1)
    return np.minimum(backward[starts], forward[starts + width - 1])


def _fitting_starts(residual: np.ndarray, s: int, o: int, lo: int, hi: int) -> np.ndarray:
    """Starts ``k`` in ``[lo, hi]`` at which a request ``(s, o)`` alone fits: ``s + j <= R(k+j)``
    for ``j = 1..o``, i.e. ``min_{t in (k, k+o]} (R(t) - t) >= s - k``."""
    g = residual[lo + 1 : hi + o + 1] - np.arange(lo + 1, hi + o + 1, dtype=np.int64)
    low = sliding_min(g.astype(np.int64), o)
    k = np.arange(lo, hi + 1, dtype=np.int64)
    return k[low >= s - k]


def earliest_fit_schedule(
    instance: Instance, order: np.ndarray, deadline: float | None = None
) -> Schedule | None:
    """Serial schedule generation: each request of ``order`` at its earliest start that fits.

    Walks ``order`` once and gives request ``i`` the smallest start ``p >= a_i`` at which it fits
    in the KV cache beside the requests placed before it (``s_i + j <= M - m(p + j)`` for ``j =
    1..o_i``, found with :func:`_fitting_starts`); those keep their starts. Unlike the executor
    (SPEC section 4, a walk over rounds) a request may start before an earlier one of the list,
    in a gap that request leaves, but it never delays one (conservative backfilling).

    Parameters
    ----------
    instance : Instance
    order : ndarray of int, shape (n,)
        A permutation of the requests (the priority list).
    deadline : float, optional
        ``time.perf_counter()`` value: None is returned if it passes first.

    Returns
    -------
    Schedule or None
        Feasible by construction (and checked by its consumers), policy
        ``"earliest-fit"``.

    Raises
    ------
    ValueError
        ``order`` is not a permutation of the requests.
    LPTooLargeError
        The latest arrival after the first plus the longest decode is above
        :data:`~lpsched.solvers.options.MAX_HORIZON` rounds (the profile keeps one entry a
        round; :func:`~lpsched.solvers.options.check_horizon`).

    Notes
    -----
    The profile starts at the first arrival and grows by doubling, so its memory is
    O(makespan), whatever the arrivals' offset. A start at or after the last completion so far
    always fits (``s_i + o_i <= M``), so every
    request is placed. O(n C_max) time: one sliding minimum over the rounds up to the current
    makespan per request (5 s at n = 2000, ``benchmarks/bench_aggregated.py``). Source: the
    serial schedule-generation scheme of project scheduling (Kolisch, EJOR 90 (1996)) on the
    memory rows of SPEC section 2; ours for the growing KV cache.
    """
    order = np.asarray(order, dtype=np.int64)
    n = instance.n
    if order.shape != (n,) or not np.array_equal(np.sort(order), np.arange(n)):
        raise ValueError(f"order must be a permutation of the {n} requests")
    s = instance.prefill.astype(np.int64)
    o = instance.decode.astype(np.int64)
    shift = int(instance.arrival.min())
    a = instance.arrival.astype(np.int64) - shift  # the profile starts at the first arrival
    check_horizon(instance, int(a.max() + o.max()), "earliest fit's KV-cache profile")
    memory = int(instance.memory)
    residual = np.full(int(a.max() + 2 * o.max()) + 2, memory, dtype=np.int64)
    start = np.zeros(n, dtype=np.int64)
    reach = 0  # last completion so far
    for i in order.tolist():
        if deadline is not None and time.perf_counter() >= deadline:
            return None
        lo, si, oi = int(a[i]), int(s[i]), int(o[i])
        hi = max(lo, reach)
        if hi + oi >= residual.size:  # the profile grows by doubling: O(makespan) memory
            grown = np.full(max(2 * residual.size, hi + oi + 2), memory, dtype=np.int64)
            grown[: residual.size] = residual
            residual = grown
        p = int(_fitting_starts(residual, si, oi, lo, hi)[0])
        start[i] = p
        residual[p + 1 : p + oi + 1] -= si + np.arange(1, oi + 1, dtype=np.int64)
        reach = max(reach, p + oi)
    start += shift
    return Schedule(instance, start, policy="earliest-fit")


def solve_neighbourhood(
    residual: np.ndarray,
    prefill: np.ndarray,
    decode: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    *,
    current: np.ndarray | None = None,
    solver: str = "highs",
    time_limit: float | None = None,
    threads: int | None = None,
) -> _Neighbourhood:
    """Re-solve the starts of a few free requests exactly in a residual memory capacity.

    Solves ``min sum_i p_i`` over ``p_i in [lo_i, hi_i]`` subject to
    ``sum_{i : p_i < t <= p_i + o_i} (s_i + t - p_i) <= R(t)`` for every round ``t``: the
    time-indexed MIP of SPEC section 3 restricted to the free requests, with the capacity ``M``
    of each memory row replaced by what the fixed requests leave.

    Parameters
    ----------
    residual : ndarray of int, shape (L + 1,)
        ``R(t)`` in tokens for rounds ``t = 0 .. L`` (``R >= 0``); ``L >= max_i (hi_i + o_i)``.
    prefill, decode : ndarray of int, shape (k,)
        ``s_i`` and ``o_i`` of the free requests (tokens).
    lo, hi : ndarray of int, shape (k,)
        Start windows (rounds).
    current : ndarray of int, shape (k,), optional
        A feasible assignment (the MIP start; always among the columns).
    solver : {"highs", "cpsat"}
    time_limit : float, optional
        Seconds for the solver run.
    threads : int, optional

    Returns
    -------
    _Neighbourhood
        The sub-MIP's answer: ``start`` (or None), ``objective``, ``optimal``, ``rejected``,
        its size and ``seconds`` (the class's attributes); ``start`` is checked in exact
        integer arithmetic against ``R``.

    Raises
    ------
    KeyboardInterrupt
        Ctrl-C during the solve (the solver is stopped first).
    ValueError
        An unknown ``solver``.

    Notes
    -----
    Columns: only starts where request ``i`` fits alone; rows: the rounds ``t`` with
    ``R(t+1) > R(t)`` and the candidate completions (exact, argument in the module docstring).
    Source: SPEC section 3; the reductions are ours.
    """
    if solver not in SUB_SOLVERS:
        raise ValueError(f"unknown sub-MIP solver {solver!r}; choose from {', '.join(SUB_SOLVERS)}")
    t_begin = time.perf_counter()
    R = np.asarray(residual, dtype=np.int64)
    s = np.asarray(prefill, dtype=np.int64)
    o = np.asarray(decode, dtype=np.int64)
    lo = np.asarray(lo, dtype=np.int64)
    hi = np.asarray(hi, dtype=np.int64)
    k = s.size
    ks = [_fitting_starts(R, int(s[u]), int(o[u]), int(lo[u]), int(hi[u])) for u in range(k)]
    if current is not None:
        ks = [np.union1d(ks[u], [int(current[u])]) for u in range(k)]
    if any(c.size == 0 for c in ks):
        return _Neighbourhood(None, None, True, seconds=time.perf_counter() - t_begin)
    col_unit = np.repeat(np.arange(k, dtype=np.int64), [c.size for c in ks])
    col_start = np.concatenate(ks)
    col_o = o[col_unit]
    first, last = int(lo.min()), int((hi + o).max())
    rises = first + 1 + np.flatnonzero(np.diff(R[first + 1 : last + 2]) > 0)
    rows = np.union1d(rises, col_start + col_o)
    rows = rows[(rows > first) & (rows <= last)]
    a = np.searchsorted(rows, col_start, side="right")  # rows t > k
    b = np.searchsorted(rows, col_start + col_o, side="right")  # rows t <= k + o
    covered = np.cumsum(
        np.bincount(a, minlength=rows.size + 1) - np.bincount(b, minlength=rows.size + 1)
    )
    if not covered[: rows.size].all():  # a row no column reaches constrains nothing
        rows = rows[covered[: rows.size] > 0]
        a = np.searchsorted(rows, col_start, side="right")
        b = np.searchsorted(rows, col_start + col_o, side="right")
    n_mem = b - a
    ncol = int(col_start.size)
    indptr = np.concatenate(([0], np.cumsum(n_mem + 1))).astype(np.int64)
    nnz = int(indptr[-1])
    pos = np.arange(nnz, dtype=np.int64) - np.repeat(indptr[:-1], n_mem + 1)  # 0 = assign row
    col_of = np.repeat(np.arange(ncol, dtype=np.int64), n_mem + 1)
    row_pos = a[col_of] + pos - 1
    mem_round = rows[np.clip(row_pos, 0, max(rows.size - 1, 0))]
    index = np.where(pos == 0, col_unit[col_of], k + row_pos).astype(np.int32)
    value = np.where(
        pos == 0, 1.0, (s[col_unit[col_of]] + mem_round - col_start[col_of]).astype(np.float64)
    )
    cap = R[rows].astype(np.float64)
    sub = Instance.from_arrays(s, o, int(max(int(R.max()), int((s + o).max()))), lo, name="lns")
    mat = TimeIndexedMatrix(
        instance=sub,
        T=last,
        slack=None,
        members=[np.array([u], dtype=np.int64) for u in range(k)],
        count=np.ones(k, dtype=np.int64),
        lo=lo,
        hi=hi,
        col_unit=col_unit,
        col_start=col_start,
        cost=col_start.astype(np.float64),
        indptr=indptr,
        index=index,
        value=value,
        row_lower=np.concatenate((np.ones(k), np.full(rows.size, -np.inf))),
        row_upper=np.concatenate((np.ones(k), cap)),
        aggregated=False,
    )
    x0 = None
    if current is not None:
        offset = np.concatenate(([0], np.cumsum([c.size for c in ks])[:-1]))
        x0 = np.zeros(ncol)
        x0[[int(offset[u] + np.searchsorted(ks[u], current[u])) for u in range(k)]] = 1.0
    run = _run_highs if solver == "highs" else _run_cpsat
    x, optimal = run(mat, x0, time_limit, threads)
    out = _Neighbourhood(None, None, optimal, columns=ncol, rows=int(rows.size), nnz=nnz)
    if x is not None:
        start = mat.starts_from_values(x)
        if _fits(R, s, o, start):
            out.start, out.objective = start, int(start.sum())
        else:
            out.rejected, out.optimal = True, False
    out.seconds = time.perf_counter() - t_begin
    return out


def _fits(R: np.ndarray, s: np.ndarray, o: np.ndarray, start: np.ndarray) -> bool:
    """Exact check: the free requests at ``start`` hold at most ``R(t)`` tokens in every round."""
    used = np.zeros(R.size, dtype=np.int64)
    for si, oi, p in zip(s.tolist(), o.tolist(), start.tolist(), strict=True):
        if p + oi >= R.size:
            return False
        used[p + 1 : p + oi + 1] += si + np.arange(1, oi + 1, dtype=np.int64)
    return bool((used <= R).all())


def _run_highs(
    mat: TimeIndexedMatrix, x0: np.ndarray | None, time_limit: float | None, threads: int | None
) -> tuple[np.ndarray | None, bool]:
    import highspy

    h = build_highs(mat, time_limit=time_limit, threads=threads)
    if x0 is not None:
        set_start(h, x0)
    if run_highs(h):
        raise KeyboardInterrupt
    st = h.getModelStatus()
    MS = highspy.HighsModelStatus
    if h.getInfo().primal_solution_status != 2:
        return None, st == MS.kInfeasible
    return np.asarray(h.getSolution().col_value), st == MS.kOptimal


def _run_cpsat(
    mat: TimeIndexedMatrix, x0: np.ndarray | None, time_limit: float | None, threads: int | None
) -> tuple[np.ndarray | None, bool]:
    from ortools.sat.python import cp_model

    model = build_cpsat(mat, start=x0)
    U = mat.n_units
    for r in range(mat.nrow - U):  # every memory row has entries (a candidate completion)
        model.proto.constraints[U + r].linear.domain[1] = int(mat.row_upper[U + r])
    solver = cp_model.CpSolver()
    # one worker unless asked: CP-SAT's full portfolio does not pay on sub-MIPs this small
    configure_solver(solver, remaining=time_limit, threads=threads or 1)
    code, interrupted = run_interruptible(lambda: solver.solve(model), solver.stop_search)
    if interrupted:
        raise KeyboardInterrupt
    if code not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None, code == cp_model.INFEASIBLE
    return np.asarray(solver.response_proto.solution, dtype=float)[
        : mat.ncol
    ], code == cp_model.OPTIMAL


@dataclass
class _Stats:
    """Counters reported in ``info["lns"]``."""

    solves: int = 0
    improving: int = 0
    ties: int = 0
    rejected: int = 0
    timeouts: int = 0
    passes: int = 0
    compactions: int = 0
    compaction_gain: int = 0
    sub_seconds: float = 0.0
    max_nnz: int = 0
    sizes: list[int] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        sizes = d.pop("sizes")
        d["k_final"] = sizes[-1] if sizes else 0
        d["k_max_used"] = max(sizes) if sizes else 0
        return d


def improve_lns(
    instance: Instance,
    schedule: Schedule,
    *,
    time_limit: float | None,
    seed: int = 0,
    threads: int | None = None,
    observer: Observer | None = None,
    solver: str = "cpsat",
    k_start: int = 8,
    k_max: int = 40,
    extension: int | None = None,
    sub_time_limit: float | None = None,
    accept_ties: bool = True,
    compact: bool | None = None,
) -> Schedule:
    """Improve a feasible schedule by fix-and-optimize over windows of rounds and request sets.

    Parameters
    ----------
    instance : Instance
    schedule : Schedule
        A feasible schedule of ``instance``: the start point, returned if nothing better is
        found.
    time_limit : float or None
        Seconds for the whole call (the sub-MIPs included). None: no limit; the search stops
        after a pass of windows that improved nothing and could not grow (size ``k_max``
        reached, or a sub-MIP stopped by its time limit).
    seed : int, default 0
        Seed of the random / related neighbourhoods.
    threads : int, optional
        Threads of each sub-MIP solver run.
    observer : Observer, optional
        Receives each strictly better (feasible, checked) schedule as it is found
        (:meth:`~lpsched.solvers.progress.Observer.on_incumbent`).
    solver : {"highs", "cpsat"}, default "cpsat"
        Back end of the sub-MIPs (measured in ``benchmarks/bench_lns.py``: about as fast as
        HiGHS, exact integer rows, so no sub-solution is rejected).
    k_start, k_max : int
        First and largest number of free requests per neighbourhood.
    extension : int, optional
        Rounds ``e`` a window's requests may move beyond its first and last start; default
        the median decode length ``o``.
    sub_time_limit : float, optional
        Seconds per sub-MIP; default ``clamp(time_limit / 300, 0.3, 2)`` (2 without a limit).
    accept_ties : bool, default True
        Also accept a different sub-solution of equal TEL (moves along plateaus).
    compact : bool, optional
        After each step that moved a request, re-run the executor (strict,
        :func:`~lpsched.executor.execute`) on the requests in start order and keep its
        schedule when its TEL is lower: it pulls every later request into the space the step
        freed. Default: on above :data:`COMPACT_MIN_N` requests (measured in
        ``benchmarks/bench_lns.py``: most of the gain at n = 2000, a worse end at n = 30).

    Returns
    -------
    Schedule
        Feasible (checked), TEL at most that of ``schedule``; ``policy`` ``"lns"`` when it
        improved, ``info["lns"]`` with the counters (sub-MIPs solved, improving, ties, rejected,
        timed out, passes, sub-MIP seconds, the neighbourhood sizes).

    Raises
    ------
    InfeasibleScheduleError
        ``schedule`` is infeasible.
    ValueError
        ``time_limit`` not None or a finite number > 0; the schedule spans more than
        :data:`MAX_ROUNDS` rounds (arrivals spread over ~1e7+ rounds: the profile is dense).
    KeyboardInterrupt
        Ctrl-C; every improvement was reported to the observer before.

    Notes
    -----
    Works on the time axis shifted by the earliest arrival
    (:func:`~lpsched.solvers.options.shift_arrivals`). Each step keeps the schedule feasible
    (exact integer check of the sub-solution) and never raises the TEL (the current starts are
    the MIP start). Source: ours (module docstring).

    Measured (``benchmarks/bench_lns.py``, threads = 1 on a shared 2-core machine,
    provisional): from the best list policy, 60 s at n = 30 (``scaled_mix``, seeds 0-2) gives
    626 / 608 / 544 without compaction (the list local search: 626 / 629 / 554); 300 s at
    n = 200 gives 19,154 (local search 19,151; local search then this search 19,045; best list
    policy 20,456); 600 s on the Azure mix at n = 2000 (``mix-80-20`` seed 0, the default
    instance before the paper's workload replaced it) gives 21,308,521 against
    Sorted-F's 21,714,905 (-1.9 %; the local search: -1.0 % in 120 s), 400k of the 406k
    rounds gained by the compaction.
    """
    if solver not in SUB_SOLVERS:
        raise ValueError(f"unknown sub-MIP solver {solver!r}; choose from {', '.join(SUB_SOLVERS)}")
    time_limit = check_time_limit(time_limit)
    t_begin = time.perf_counter()
    deadline = math.inf if time_limit is None else t_begin + float(time_limit)
    schedule.check()
    inst, shift = shift_arrivals(instance)
    n = inst.n
    best = schedule
    stats = _Stats()
    if n < 2:
        return best
    rng = np.random.default_rng(seed)
    p0 = schedule.start - shift
    o = inst.decode
    ext = int(np.median(o)) if extension is None else int(extension)
    # rounds stored: requests may move up to ext + max o rounds past the makespan
    length = int((p0 + o).max()) + ext + int(o.max()) + 1
    if length > MAX_ROUNDS:
        raise ValueError(
            f"{instance.name}: the schedule spans {length:,} rounds, above the {MAX_ROUNDS:,} "
            "whose memory profile the LNS stores"
        )
    if sub_time_limit is not None:
        sub_limit = float(sub_time_limit)
    else:
        sub_limit = 2.0 if time_limit is None else min(2.0, max(0.3, time_limit / 300))
    if compact is None:
        compact = n > COMPACT_MIN_N
    walk = _Walk(
        inst, ResidualMemory(inst, p0, length), schedule.tel, ext, length, max(2, min(k_start, n)),
        k_max, sub_limit, rng, stats, solver, threads, accept_ties,
    )  # fmt: skip
    while time.perf_counter() < deadline - 0.01:
        free = walk.neighbourhood(converge=time_limit is None)
        if free is None:
            break  # converged: a pass of the largest windows solved improved nothing
        if walk.resolve(*free, deadline) and compact:
            walk.compact()
        if walk.cur_tel < best.tel:
            cand = Schedule(instance, walk.prof.start + shift, policy="lns")
            cand.check()
            best = cand
            if observer is not None:
                observer.on_incumbent(best)
    if best is schedule:  # a copy, so that the caller's schedule keeps its info
        best = Schedule(instance, schedule.start, policy=schedule.policy, info=dict(schedule.info))
    else:
        best.info["heuristic"] = "lns"
    best.info["lns"] = stats.as_dict() | {
        "solver": solver,
        "compact": compact,
        "runtime_s": time.perf_counter() - t_begin,
    }
    return best


#: A neighbourhood: the free requests and their start windows ``(free, lo, hi)`` (rounds).
_Free = tuple[np.ndarray, np.ndarray, np.ndarray]


@dataclass
class _Walk:
    """:func:`improve_lns`'s search state: profile, TEL, size ``k``, window position, pass."""

    inst: Instance  # arrivals shifted to start at round 0
    prof: ResidualMemory
    cur_tel: int
    ext: int
    length: int
    k: int
    k_max: int
    sub_limit: float
    rng: np.random.Generator
    stats: _Stats
    solver: str
    threads: int | None
    accept_ties: bool
    j: int = 0
    step: int = 0
    pass_improved: bool = False
    pass_all_optimal: bool = True

    def neighbourhood(self, converge: bool) -> _Free | None:
        """The next window or related set; None once a pass ends converged (``converge``)."""
        n, a = self.inst.n, self.inst.arrival
        p = self.prof.start
        order = np.lexsort((np.arange(n), p))
        use_related = n <= RELATED_MAX_N and self.step % 2 == 1
        self.step += 1
        if use_related:
            free, lo, hi = self._related(order, p)
        else:
            window = self._window(order, p, converge)
            if window is None:
                return None
            free, lo, hi = window
        # a schedule of TEL <= cur_tel has every wait p_i - a_i <= cur_tel - sum o: no start
        # later is worth a column (and a window across an idle gap between arrivals stays small)
        slack = self.cur_tel - int(self.inst.decode.sum())
        return free, lo, np.maximum(np.minimum(hi, a[free] + slack), p[free])

    def _related(self, order: np.ndarray, p: np.ndarray) -> _Free:
        """A random request, its neighbours in start order and random others."""
        n, o, a, ext = self.inst.n, self.inst.decode, self.inst.arrival, self.ext
        kk = min(self.k, n)
        anchor = int(self.rng.integers(n))
        pos = int(np.flatnonzero(order == anchor)[0])
        near = order[max(0, pos - kk // 4) : pos + kk // 4 + 1]
        rest = np.setdiff1d(np.arange(n), near)
        extra = self.rng.choice(rest, size=max(0, min(kk - near.size, rest.size)), replace=False)
        free = np.union1d(near, extra).astype(np.int64)
        # every start up to ext rounds past the makespan; above FULL_WINDOW_MAX_N
        # requests, a band of rounds around the current starts
        makespan = int((p + o).max())
        lo, hi = a[free].copy(), np.maximum(min(makespan + ext, self.length) - o[free], p[free])
        if n > FULL_WINDOW_MAX_N:
            band = max(ext, makespan * kk // n)
            lo = np.maximum(lo, p[free] - band)
            hi = np.maximum(np.minimum(hi, p[free] + band), p[free])
        return free, lo, hi

    def _window(self, order: np.ndarray, p: np.ndarray, converge: bool) -> _Free | None:
        """The ``k`` requests from position ``j`` in start order; ``k`` may grow after a pass."""
        n, o, a, ext = self.inst.n, self.inst.decode, self.inst.arrival, self.ext
        kk = min(self.k, n)
        if self.j >= n - 1:
            self.j = 0
            self.stats.passes += 1
            if not self.pass_improved:
                if self.pass_all_optimal and self.k < min(self.k_max, n):
                    self.k = min(self.k_max, n, self.k + max(1, self.k // 4))
                    kk = min(self.k, n)
                elif converge:
                    return None
            self.pass_improved, self.pass_all_optimal = False, True
        free = order[self.j : self.j + kk].astype(np.int64)
        t0, t1 = int(p[free].min()), int(p[free].max())
        lo = np.maximum(a[free], t0 - ext)
        hi = np.maximum(np.minimum(t1 + ext, self.length - o[free]), p[free])
        self.j += max(1, kk // 2)
        return free, lo, hi

    def resolve(self, free: np.ndarray, lo: np.ndarray, hi: np.ndarray, deadline: float) -> bool:
        """Re-solve ``free`` in ``[lo, hi]``, adapt ``k``, keep a better start; True if moved."""
        s, o, stats = self.inst.prefill, self.inst.decode, self.stats
        cur = self.prof.start[free].copy()
        stats.sizes.append(int(free.size))
        self.prof.remove(free)
        limit = max(0.05, min(self.sub_limit, deadline - time.perf_counter()))
        try:
            res = solve_neighbourhood(
                self.prof.residual(), s[free], o[free], lo, hi, current=cur, solver=self.solver,
                time_limit=limit, threads=self.threads,
            )  # fmt: skip
        except BaseException:
            self.prof.place(free, cur)
            raise
        stats.solves += 1
        stats.sub_seconds += res.seconds
        stats.max_nnz = max(stats.max_nnz, res.nnz)
        stats.rejected += int(res.rejected)
        if not res.optimal:
            self.pass_all_optimal = False
            if not res.rejected:
                stats.timeouts += 1
                self.k = max(2, int(self.k * 0.7))
        elif res.seconds < self.sub_limit / 8:
            self.k = min(self.k_max, self.inst.n, self.k + 1)
        new = cur
        if res.start is not None and res.objective is not None:
            gain = int(cur.sum()) - res.objective
            if gain > 0 or (self.accept_ties and gain == 0 and not np.array_equal(res.start, cur)):
                new = res.start
                if gain > 0:
                    stats.improving += 1
                    self.pass_improved = True
                else:
                    stats.ties += 1
                self.cur_tel -= gain
        self.prof.place(free, new)
        return new is not cur

    def compact(self) -> None:
        """The strict executor on the requests in start order, kept when its TEL is lower."""
        inst, o, a = self.inst, self.inst.decode, self.inst.arrival
        packed = execute(inst, np.lexsort((np.arange(inst.n), self.prof.start))).start
        gain = self.cur_tel - int((packed + o - a).sum())
        self.stats.compactions += 1
        if gain > 0:
            self.stats.compaction_gain += gain
            self.cur_tel -= gain
            self.pass_improved = True
            self.length = max(self.length, int((packed + o).max()) + self.ext + int(o.max()) + 1)
            self.prof = ResidualMemory(inst, packed, self.length)


# --------------------------------------------------------------------------- the certify method


def run(instance: Instance, schedule: Schedule, options: SolveOptions, observer: Observer) -> None:
    """Report every better schedule of :func:`improve_lns` to ``observer``; the contract is
    :class:`~lpsched.certify.method.Method`."""
    better = improve_lns(instance, schedule, seed=options.seed, **solver_options(options, observer))
    observer.on_incumbent(better)


METHOD = Method(
    "lns",
    "upper",
    "large-neighbourhood search: windows of requests re-solved as sub-MIPs",
    run,
)
