"""The LP relaxation of the time-indexed model at the paper's scale, by column generation.

At n = 2000 (the default instance: ``T1 = sum o = 464,421`` rounds) the LP of SPEC section 3
has about ``n T`` columns, far beyond what can be built. :func:`colgen_lp` solves it
without building them: a *restricted master* holds the ``assign`` rows, the ``memory`` rows of
the rounds some column covers (a missing row has dual 0), and a subset of the columns
``(i, k)``, started from feasible schedules. With the duals ``u_i`` of ``assign`` and
``lambda_t >= 0`` of ``memory`` (``-row_dual`` as HiGHS reports it: ``d = c - A^T y`` and
``y_t <= 0`` for a ``<=`` row of a minimisation), the reduced cost of request ``i`` started at
``k`` is ::

    d_ik = (k + o_i - a_i) - u_i + sum_{t=k+1}^{k+o_i} lambda_t (s_i + t - k),

an O(1) expression in the prefix sums ``P0(t) = sum_{r<=t} lambda_r`` and
``P1(t) = sum_{r<=t} r lambda_r``, so one scan over the starts prices a request
(:func:`~lpsched.solvers.pricing.price_starts`, a kernel, shared with ``lp-aggregated``). Beyond
the last round with ``lambda_t > 0`` the memory term is 0 and the cost grows with ``k``, so the
scan stops there (at the last ``lambda_t != 0``).

The anytime bound is the Lagrangian (Farley) bound: relaxing the memory rows with prices
``lambda_t`` ::

    L(lambda) = sum_i min_k [c_ik + sum_t lambda_t a_t(i, k)] - M sum_t max(lambda_t, 0)

is at most the LP value for *every* real ``lambda`` (weak duality: for an LP-feasible ``x``
with memory ``m_t(x)`` in ``[0, M]``, ``sum c x >= sum c x + sum_t lambda_t m_t(x) - M sum_t
max(lambda_t, 0) >= L(lambda)``, the minimum taken over every column of the horizon and
windows, not only the master's; the usual ``lambda >= 0`` case, and a slightly negative
``lambda_t`` from HiGHS' dual tolerance costs nothing). The LP value is at most the optimal TEL
(the windows keep every optimal schedule, :mod:`lpsched.formulations.horizon`). The pricing
scan computes exactly these minima, so every iteration gives a valid bound; the best one is
reported (the observer's ``on_bound``, ``bound``). When no column has a negative reduced cost
the master value *is* the LP value, and the bound at the master's duals equals it.

Time-indexed column generation is degenerate and tails off. Three remedies (measured in
``benchmarks/bench_colgen.py``):

* A subgradient ascent on ``L`` first (:func:`_ascent`, Polyak steps towards the TEL of the
  schedule, deflected as Camerini, Fratta and Maffioli): one pricing scan per step and no LP,
  so it runs at n = 2000 where one master solve takes minutes; its best ``lambda`` is the
  first stability centre and the cheapest starts of its last improving steps are columns of
  the master. At n = 2000 the deflection gives 19.385 M after 300 steps against 19.369 M
  without; the volume algorithm (Barahona and Anbil) was far slower there (9-11 M after
  200-250 steps) and is not kept.
* Wentges smoothing: price at ``lambda_sep = alpha lambda_center + (1 - alpha) lambda_master``,
  ``lambda_center`` the duals of the best Lagrangian bound so far; add the starts found there
  that have a negative reduced cost at the master's duals; on a *mis-pricing* (none), price at
  the master's duals instead (so the method is exact: it stops only when no column prices out).
* Many columns per iteration: the best start of every request (``assign`` unit) with a
  negative reduced cost.

Identical requests (same ``s_i, o_i, a_i``) share one unit, as in the aggregated matrix of
:mod:`lpsched.formulations.time_indexed` (same LP value). The master is one HiGHS model kept
across iterations: columns are added with ``addCols`` and HiGHS re-solves from its basis.

At scale the master's size is the memory rows' non-zeros (``o_u`` per column: 3.5 M for the
15.6 k seed columns at n = 2000). The *difference form* (:class:`_Master`) writes the same LP
with memory variables ``m_t`` tied to the columns by second differences (at most 5 non-zeros
a column, 0.12 M in all), and the interior point method solves it: first master at n = 2000
in 101 s (47 IPM iterations), where the row form with IPM had not started its iterations
after 160 s and the primal simplex (either form), the dual simplex (10.5 M of 20.18 M after
86 s) and PDLP (primal-dual gap 1.0 after 8,000 iterations, 36 s) did not solve it. Interior
duals are well centred, themselves a stabilisation (Gondzio, Gonzalez-Brevis and Munari,
EJOR 230 (2013)). At n <= 200 the row form and the primal simplex stay the default (about 1 s
at n = 200).

Source: the LP of SPEC section 3; column generation for time-indexed scheduling: van den
Akker, Hurkens and Savelsbergh, INFORMS J. Computing 12 (2000); Wentges smoothing and its
mis-pricing rule: Wentges, ITOR 4 (1997), Pessoa, Sadykov, Uchoa and Vanderbeck, INFORMS J.
Computing 30 (2018); subgradient optimisation: Held, Wolfe and Crowder, Math. Prog. 6 (1974).
The prefix-sum pricing, the master without empty rows, its difference form and the combination
are ours.
"""

from __future__ import annotations

import numbers
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..instance import Instance
from ..schedule import Schedule
from .backends import highs
from .pricing import (
    Generation,
    Pricer,
    check_generation_options,
    memory_use,
    seed_schedules,
    unit_model,
)
from .progress import Observer
from .result import Result

MASTER_SOLVERS = ("auto", "primal", "dual", "ipm", "pdlp")
LARGE_DECODE = 100_000  # tokens of sum o_i from which "auto" takes the difference form + IPM

__all__ = ["MASTER_SOLVERS", "colgen_lp"]


class _Master:
    """The restricted master LP in one HiGHS model: ``assign`` rows ``0..U-1`` (``= c_u``), the
    memory of the rounds ``t = 1..R`` some column covers, and the columns ``(u, k)`` added so
    far.

    ``difference=False``: rows ``memory[t] <= M`` (``U + t - 1``), ``o_u + 1`` non-zeros per
    column. ``difference=True``: free-standing memory variables ``m_t <= M`` (``t = 1..R + 2``)
    tied to the columns by the second differences ``m_t - 2 m_{t-1} + m_{t-2} = sum_col
    (a_t - 2 a_{t-1} + a_{t-2}) x_col`` (rows ``U + t - 1``, ``m_0 = m_{-1} = 0``): a column's
    memory ``a_t = s + t - k`` on ``k < t <= k + o`` is linear, so it has at most 4 non-zeros
    there (rounds ``k+1, k+2, k+o+1, k+o+2``) besides its ``assign`` row. The recursion gives
    ``m_t`` exactly the memory of round ``t`` (the same LP, a linear change of rows), and by
    summation by parts the memory price of round ``t`` is ``lambda_t = -d(m_t)``, the reduced
    cost of ``m_t`` (:meth:`duals`). ``solver``: one of :data:`MASTER_SOLVERS` but "auto"."""

    def __init__(self, count, s, o, a, M: int, threads: int | None, difference: bool, solver: str):
        simplex = solver in ("primal", "dual")
        # without crossover: interior duals, and crossover alone takes minutes at n = 2000
        self.h = highs.master_highs(threads, None if simplex else solver)
        if simplex:
            self.h.setOptionValue("simplex_strategy", 4 if solver == "primal" else 1)
        self.difference = difference
        self.count, self.s, self.o, self.a, self.M = count, s, o, a, float(M)
        self.U = int(count.size)
        self.R = 0  # last round some column covers
        self.top = 0  # memory rows 1..top (R, or R + 2 in the difference form)
        self.hcols = 0  # HiGHS columns (the memory variables included)
        self.mcol = np.zeros(0, dtype=np.int32)  # HiGHS column of m_t, t = 1..top
        self.seen: set[tuple[int, int]] = set()
        self.ncol = 0
        self.nnz = 0
        c = count.astype(np.float64)
        self._add_rows(c, c)

    def _add_rows(self, lower, upper, start=None, index=None, value=None) -> None:
        m = int(lower.size)
        if start is None:
            start, index, value = np.zeros(m, dtype=np.int32), np.zeros(0, np.int32), np.zeros(0)
        self.h.addRows(m, lower, upper, int(index.size), start, index, value)

    def _extend(self, reach: int) -> None:
        """Memory rows (and variables) up to round ``reach`` (+ 2 in the difference form)."""
        top = reach + 2 if self.difference else reach
        extra = top - self.top
        if extra <= 0:
            return
        if not self.difference:
            self._add_rows(np.full(extra, -np.inf), np.full(extra, self.M))
        else:
            empty = np.zeros(0, dtype=np.int32)
            self.h.addCols(
                extra, np.zeros(extra), np.full(extra, -np.inf), np.full(extra, self.M),
                0, np.zeros(extra, dtype=np.int32), empty, np.zeros(0),
            )  # fmt: skip
            new = np.arange(self.hcols, self.hcols + extra, dtype=np.int32)
            self.mcol = np.concatenate((self.mcol, new))
            self.hcols += extra
            t = np.arange(self.top + 1, top + 1)  # row t: -m_t + 2 m_{t-1} - m_{t-2}
            lag = np.array([0, 1, 2])
            tt = t[:, None] - lag[None, :]
            ok = tt >= 1
            index = np.where(ok, self.mcol[np.maximum(tt, 1) - 1], 0)[ok].astype(np.int32)
            value = np.broadcast_to(np.array([-1.0, 2.0, -1.0]), tt.shape)[ok]
            start = np.concatenate(([0], np.cumsum(ok.sum(axis=1))[:-1])).astype(np.int32)
            self._add_rows(np.zeros(extra), np.zeros(extra), start, index, value)
        self.top = top
        self.R = reach

    def add(self, units: np.ndarray, starts: np.ndarray) -> int:
        """Add the columns ``(units[j], starts[j])`` not in the master yet; their number."""
        keep = [
            j
            for j, key in enumerate(zip(units.tolist(), starts.tolist(), strict=True))
            if key not in self.seen
        ]
        if not keep:
            return 0
        u, k = units[keep], starts[keep]
        self.seen.update(zip(u.tolist(), k.tolist(), strict=True))
        o, s = self.o[u], self.s[u]
        self._extend(max(self.R, int((k + o).max())))
        m = int(u.size)
        if self.difference:
            rounds, value = _second_differences(k, s, o)
            length = 1 + (value != 0.0).sum(axis=1)
            index = np.concatenate((u[:, None], self.U + rounds - 1), axis=1)
            value = np.concatenate((np.ones((m, 1)), value), axis=1)
            nz = np.concatenate((np.ones((m, 1), dtype=bool), value[:, 1:] != 0.0), axis=1)
            index, value = index[nz].astype(np.int32), value[nz]
        else:
            length = o + 1
            col = np.repeat(np.arange(m), length)
            pos = np.arange(int(length.sum())) - np.concatenate(([0], np.cumsum(length)))[col]
            index = np.where(pos == 0, u[col], self.U + k[col] + pos - 1).astype(np.int32)
            value = np.where(pos == 0, 1.0, (s[col] + pos).astype(np.float64))
        indptr = np.concatenate(([0], np.cumsum(length)))
        cost = (k + o - self.a[u]).astype(np.float64)
        upper = self.count[u].astype(np.float64)
        nnz = int(indptr[-1])
        self.h.addCols(m, cost, np.zeros(m), upper, nnz, indptr[:-1].astype(np.int32), index, value)
        self.hcols += m
        self.ncol += m
        self.nnz += nnz
        return m

    def solve(self, deadline: float | None) -> bool:
        """Re-solve (the simplex from the current basis, IPM and PDLP from scratch); False if a
        limit or HiGHS stopped it short.

        Raises ``KeyboardInterrupt`` on Ctrl-C (HiGHS is stopped first)."""
        import highspy

        if not highs.rerun_highs(self.h, deadline):
            return False
        return self.h.getModelStatus() == highspy.HighsModelStatus.kOptimal

    def value(self) -> float:
        """The master's optimum (rounds)."""
        return float(self.h.getInfo().objective_function_value)

    def duals(self) -> tuple[np.ndarray, np.ndarray]:
        """``u`` (shape (U,)) and ``lambda`` (shape (top + 1,), ``lambda[0] = 0``; ``>= 0`` up
        to HiGHS' dual tolerance): ``-y_memory`` (``d = c - A^T y``, ``y_t <= 0`` for a ``<=``
        row of a minimisation), or ``-d(m_t)`` in the difference form."""
        sol = self.h.getSolution()
        y = np.asarray(sol.row_dual, dtype=np.float64)
        lam = np.zeros(self.top + 1)
        if self.difference:
            lam[1:] = -np.asarray(sol.col_dual, dtype=np.float64)[self.mcol]
        else:
            lam[1:] = -y[self.U :]
        return y[: self.U], lam

    def level_solved(self, z: float, info: dict[str, Any]) -> bool:
        """No column prices out: ``z`` is the LP value (``info["lp_value"]``)."""
        info["converged"] = True
        info["lp_value"] = z
        return True

    def advance(self) -> None:
        """Nothing to refine: the rows are the rounds."""


def _second_differences(
    k: np.ndarray, s: np.ndarray, o: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Rounds and values of ``a_t - 2 a_{t-1} + a_{t-2}`` for the memory ``a_t = s + t - k``
    (``k < t <= k + o``, else 0) of each column: shape (m, 4), rounds ``k+1, k+2, k+o+1,
    k+o+2`` (0 values where zero or repeated, as the round ``k+2 = k+o+1`` of ``o = 1``)."""
    rounds = k[:, None] + np.stack((np.ones_like(o), np.full_like(o, 2), o + 1, o + 2), axis=1)

    def mem(t):
        return np.where((t > k[:, None]) & (t <= (k + o)[:, None]), s[:, None] + t - k[:, None], 0)

    value = (mem(rounds) - 2 * mem(rounds - 1) + mem(rounds - 2)).astype(np.float64)
    value[o == 1, 2] = 0.0
    return rounds, value


def colgen_lp(
    instance: Instance,
    schedule: Schedule,
    *,
    seeds: Sequence[np.ndarray] = (),
    time_limit: float | None = 60.0,
    threads: int | None = None,
    observer: Observer | None = None,
    horizon: int | None = None,
    windows: bool = True,
    alpha: float = 0.5,
    tol: float = 1e-7,
    max_iterations: int | None = None,
    ascent: int = 2000,
    ascent_share: float = 1.0,
    deflect: float = 1.5,
    master_solver: str = "auto",
    difference: bool | None = None,
) -> Result:
    """The LP relaxation of SPEC section 3 by column generation, with an anytime bound.

    Parameters
    ----------
    instance : Instance
        Requests ``(s_i, o_i, a_i)`` and the KV-cache budget ``M`` (tokens); arrivals from any
        round on (solved on the axis shifted by the earliest arrival, which changes no bound).
    schedule : Schedule
        A feasible schedule: its TEL ``UB`` gives the horizon ``min(T1, T2)`` and the start
        windows (:func:`~lpsched.formulations.horizon.tight_horizon`), its starts the first
        columns.
    seeds : sequence of ndarray of int, each shape (n,)
        Starts (rounds) of other feasible schedules of ``instance``, also first columns
        (the certify method passes the list policies', strict and with backfill).
    time_limit : float or None, default 60
        Seconds for the whole call (seeds and master solves included); the best bound so far
        is returned when it runs out.
    threads : int, optional
        HiGHS threads.
    observer : Observer, optional
        Receives every strictly better Lagrangian bound (rounds) as found
        (:meth:`~lpsched.solvers.progress.Observer.on_bound`).
    horizon : int, optional
        ``T`` in rounds after the earliest arrival, ``>= min(T1, T2)``.
    windows : bool, default True
        Start windows ``p_i <= a_i + UB - sum o``; False: ``K_i = {a_i .. T - o_i}``.
    alpha : float, default 0.5
        Wentges smoothing weight in ``[0, 1)`` of the stability centre (0: plain column
        generation).
    tol : float, default 1e-7
        Converged when ``master - bound <= tol * max(1, master)``.
    max_iterations : int, optional
        Stop after this many master solves.
    ascent : int, default 2000
        Most steps of the subgradient ascent before the master (0: none); it also ends when
        it stalls (``theta < 1e-6``), after 200-400 steps at n <= 200.
    ascent_share : float, default 1.0
        Share of ``time_limit`` the ascent may use, in ``(0, 1]``. At n = 2000 the ascent
        still improves after 600 s (19.444 M after 300 s, 19.464 M after 600 s) while the
        first master (difference form, IPM; 101 s on the seed columns alone) with the ascent's
        columns was not solved in 240 s (``benchmarks/bench_colgen.py``, ``--ascent-share
        0.6``), so by default it may use all of it.
    deflect : float, default 1.5
        Deflection of the ascent's subgradient in ``[0, 2]`` (0: plain subgradient; 1.5:
        Camerini-Fratta-Maffioli), :func:`_ascent`.
    master_solver : {"auto", "primal", "dual", "ipm", "pdlp"}, default "auto"
        HiGHS' algorithm for the master: primal or dual simplex (re-solved from the basis),
        interior point without crossover (solved from scratch; well-centred duals) or PDLP.
        "auto": the primal simplex when ``sum o_i < 100,000`` tokens (one schedule's columns
        have fewer memory non-zeros), else the interior point method (the only one that solves
        the first master at n = 2000 within minutes, ``benchmarks/bench_colgen.py``).
    difference : bool, optional
        The master's memory in the second-difference form (:class:`_Master`, at most 5
        non-zeros per column instead of ``o_u + 1``). Default: with "auto"'s size rule.

    Returns
    -------
    Result
        ``method="lp-colgen"``, ``bound`` the best Lagrangian bound (valid whenever the call
        stops), ``horizon`` ``T``; ``info``: ``converged``, ``lp_value`` (the master value,
        when converged), ``master_value`` (last), ``iterations``, ``columns``, ``rows``,
        ``nonzeros``, ``mispricings``, ``master_s``, ``pricing_s``, ``seed_s``, ``ascent_s``,
        ``ascent_steps``, ``ascent_bound`` (the ascent's best), ``history``
        (``(seconds, bound, master value)`` per iteration), ``time_shift``.

    Raises
    ------
    ValueError
        ``time_limit``, ``threads``, ``alpha``, ``ascent``, ``ascent_share`` or ``deflect`` out
        of range, an unknown ``master_solver`` or seed policy.
    HorizonError
        ``horizon`` below ``min(T1, T2)``.
    LPTooLargeError
        The horizon is above ``MAX_HORIZON`` (:func:`~lpsched.solvers.options.check_horizon`:
        the master keeps a memory row per round), before anything of that length is made.
    InfeasibleScheduleError
        ``schedule`` infeasible.
    KeyboardInterrupt
        Ctrl-C during a master solve (HiGHS is stopped first; the observer has had every
        improvement).

    Notes
    -----
    Validity: every reported bound is ``L(lambda)`` for some ``lambda`` (the ascent's, the
    master's duals or their smoothed mix), at most the LP value at this horizon and windows,
    which is at most the optimal TEL (module docstring).
    Source: SPEC section 3; the method's sources are in the module docstring.
    """
    time_limit, threads = check_generation_options(
        time_limit, threads, alpha, master_solver, MASTER_SOLVERS
    )
    if isinstance(ascent, bool) or not isinstance(ascent, numbers.Integral) or ascent < 0:
        raise ValueError(f"ascent must be a non-negative integer (steps), got {ascent!r}")
    if not 0.0 < ascent_share <= 1.0:
        raise ValueError(f"ascent_share must be a number in (0, 1], got {ascent_share!r}")
    if not 0.0 <= deflect <= 2.0:
        raise ValueError(f"deflect must be a number in [0, 2], got {deflect!r}")
    t0 = time.perf_counter()
    instance, shift, schedule, seeds, hz, slack, first, unit_of, count, lo, hi, s, o, a = (
        unit_model(instance, schedule, horizon, windows, "the column generation's master", seeds)
    )

    large = int(instance.decode.sum()) >= LARGE_DECODE
    if master_solver == "auto":
        master_solver = "ipm" if large else "primal"
    if difference is None:
        difference = large
    master = _Master(count, s, o, a, instance.memory, threads, difference, master_solver)
    price = Pricer(lo, hi, s, o, a, count, instance.memory)
    for seed in seed_schedules(instance, schedule, seeds):
        fits = (seed >= lo[unit_of]) & (seed <= hi[unit_of])
        master.add(unit_of[fits], seed[fits])
    seed_s = time.perf_counter() - t0

    run = Generation.open(t0, time_limit, price, observer)
    if ascent > 0:
        t1 = time.perf_counter()
        end = None if run.deadline is None else t1 + ascent_share * (run.deadline - t1)
        steps, starts = _ascent(
            price,
            s,
            o,
            count,
            instance.memory,
            hz.T,
            schedule.tel,
            end,
            ascent,
            run.bound.offer,
            deflect,
        )
        units = np.arange(lo.size, dtype=np.int64)
        for k in starts:
            master.add(units, k)
        run.info["ascent_steps"] = steps
        run.info["ascent_s"] = time.perf_counter() - t1
        run.info["ascent_bound"] = run.bound.best
    run.run(master, master.add, alpha, tol, max_iterations)
    return run.result(
        "lp-colgen",
        hz.T,
        shift,
        columns=master.ncol,
        rows=master.U + master.R,
        nonzeros=master.nnz,
        master_s=run.master_s,
        pricing_s=price.seconds,
        seed_s=seed_s,
        alpha=alpha,
        history=run.history,
        T=hz.T,
        slack=slack,
    )


def _ascent(
    price: Pricer,
    s: np.ndarray,
    o: np.ndarray,
    count: np.ndarray,
    M: int,
    rounds: int,
    target: float,
    deadline: float | None,
    iterations: int,
    on_better: Callable[[float, np.ndarray], None],
    deflect: float = 0.0,
    keep: int = 5,
) -> tuple[int, list[np.ndarray]]:
    """Projected, deflected subgradient ascent on ``L(lambda)`` over ``lambda >= 0`` (rounds
    ``1..rounds``).

    Polyak steps ``theta (target - L) / |d|^2`` towards ``target`` (the TEL of a schedule, above
    the LP value) along ``d = g + beta d_prev``, ``g_t = m_t - M`` the memory of the cheapest
    starts minus the budget, projected (0 where ``lambda_t = 0`` and ``g_t < 0``), and
    ``beta = max(0, -deflect g . d_prev / |d_prev|^2)`` (0: plain subgradient); ``theta``
    halves after 10 steps without a better bound. Stops after ``iterations`` steps, at
    ``deadline``, or when ``theta < 1e-6``. Each better ``L`` and its ``lambda`` (shape
    (rounds + 1,)) go to ``on_better`` as found.

    Returns
    -------
    steps : int
        Steps taken (pricing scans).
    starts : list of ndarray of int64, shape (U,)
        The cheapest starts of the last ``keep`` improving steps (columns for the master).

    Notes
    -----
    Every ``L(lambda)`` is a valid bound (module docstring); the ascent only chooses which.
    Source: Held, Wolfe and Crowder, Math. Prog. 6 (1974) (subgradient optimisation with
    Polyak steps); Camerini, Fratta and Maffioli, Math. Prog. Study 3 (1975) (the deflection,
    ``deflect = 1.5`` as theirs); ours for this model.
    """
    lam = np.zeros(rounds + 1)
    best = -np.inf
    starts: list[np.ndarray] = []
    prev: np.ndarray | None = None
    theta, stall, steps = 1.0, 0, 0
    while steps < iterations:
        if deadline is not None and time.perf_counter() >= deadline:
            break
        start, _, value = price(lam)
        steps += 1
        if value > best:
            best, stall = value, 0
            on_better(value, lam)
            starts = [*starts[-(keep - 1) :], start]
        else:
            stall += 1
            if stall >= 10:
                theta, stall = theta / 2, 0
                if theta < 1e-6:
                    break
        g = memory_use(start, s, o, count, rounds) - M
        g[0] = 0.0
        g[(lam <= 0.0) & (g < 0.0)] = 0.0
        if not g.any():  # the cheapest starts fit: L(lambda) is the LP value
            break
        d = g
        if deflect and prev is not None:
            d = g + max(0.0, -deflect * float(g @ prev) / float(prev @ prev)) * prev
        prev = d
        lam = np.maximum(0.0, lam + theta * (target - value) / float(d @ d) * d)
    return steps, starts
