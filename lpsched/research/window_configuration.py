"""The configuration relaxation over windows of ``W`` consecutive rounds.

A research bound: how much of the gap between the time-indexed LP (SPEC section 3) and the
optimal TEL does a relaxation see whose columns are *integral partial schedules* over a few
rounds? It is solved by column generation with stabilised duals; the value reported is a
Lagrangian bound, valid at every iteration.

Definition
----------
Take a valid horizon ``T`` with start windows ``K_i = {lo_i .. hi_i}``
(:func:`~lpsched.formulations.horizon.tight_horizon`: ``T = min(T1, T2)`` and
``hi_i <= a_i + UB - sum o``; the windows keep every optimal schedule). Columns ``(i, k)``,
``k in K_i``, cost ``c_{i,k} = k + o_i - a_i`` (rounds), run ``R(i, k) = [k + 1, k + o_i]``. Split
the rounds ``1..T`` into consecutive windows ``w_j = [jW + 1, min((j + 1) W, T)]``. A
*configuration* of window ``w`` is a set ``q`` of pairs ``(i, k)`` whose runs meet ``w``, at most
one per request, whose KV cache fits in every round of ``w``:
``sum_{(i,k) in q, k < t <= k + o_i} (s_i + t - k) <= M`` for ``t in w``. There is no covering
requirement: a request may run wholly outside ``w``. ``Q_w`` is the set of all of them (the
empty set included). The relaxation is the LP::

    minimise    sum_{i,k} c_{i,k} x_{i,k}
    subject to  sum_k x_{i,k} = 1                                      every request i
                x_{i,k} = sum_{q in Q_w, (i,k) in q} lambda_{w,q}      every w, (i,k) meeting w
                sum_{q in Q_w} lambda_{w,q} = 1                        every window w
                x >= 0, lambda >= 0.

Validity (ours). Every schedule ``p`` with TEL ``<= UB`` (hence every optimal one) lies in the
windows; set ``x_{i,p_i} = 1`` and, in each window ``w``, ``lambda_{w,q_w} = 1`` for
``q_w = {(i, p_i) : R(i, p_i) meets w}``, a configuration because ``p`` is feasible. All rows
hold and the cost is ``TEL(p)``, so the LP value is at most the optimal TEL.

* ``W = 1`` is the per-round configuration LP; it implies every memory row of the time-indexed
  LP (round ``t``'s memory is ``sum_q lambda_{t,q} m_q(t) <= M``), so ``LP <= bound(1)``.
* ``W >= T`` (one window) gives the optimum: every run meets the window, so ``sum_k x_{i,k} =
  1`` forces every configuration with ``lambda > 0`` to hold every request, i.e. to be a
  feasible schedule; the LP is a convex combination of schedules.
* Monotone in *nested* windows: if every window of ``W'`` is a union of windows of ``W``
  (``W`` divides ``W'``: 1 | 2 | 4 | 8, and 1 | 2 | 4 | 12, but not 8 | 12), then
  ``bound(W) <= bound(W')``. Restrict each configuration ``q'`` of a window ``w'`` to a
  sub-window ``w``: ``q'|w = {(i,k) in q' : R(i,k) meets w}`` is a configuration of ``w`` and
  ``lambda_{w,q} = sum_{q' : q'|w = q} lambda_{w',q'}`` satisfies ``w``'s rows with the same
  ``x``.

Solution method
---------------
Column generation on ``lambda`` with every ``x_{i,k}`` in the restricted master; every window
starts with the empty configuration and the seed schedule's (when it lies in the windows). Let
``mu_{w,i,k}`` be the duals of the linking rows. Relaxing the linking rows with any multipliers
``mu`` gives the Lagrangian bound::

    L(mu) = sum_i min_{k in K_i} (c_{i,k} - sum_{w meeting R(i,k)} mu_{w,i,k})
          + sum_w min_{q in Q_w} sum_{(i,k) in q} mu_{w,i,k}

which is at most the LP value for *every* ``mu`` (weak duality: the relaxed problem keeps the
assignment simplices and the configuration simplices), so the best ``L`` seen is a valid lower
bound at any time. The inner minimum is the *pricing problem* of window ``w``: a small binary
program over the pairs with ``mu_{w,i,k} < 0`` (only those can lower the sum; dropping a pair
from a configuration keeps it one), at most one start per request, one memory row per round of
``w``. A one-round window is a knapsack with one item group per request, solved exactly by
dynamic programming over the tokens used; longer windows are solved by HiGHS, whose dual bound
(not its incumbent) enters ``L``, so ``L`` stays valid if the MIP stops short. For those, only
every :data:`EXACT_EVERY`-th round is exact (it gives ``L``); the others add greedy
configurations (pairs by increasing ``mu`` while they fit), and a greedy round that finds no
column of negative reduced cost is followed by an exact one. The windows and the pricing
problem are in :mod:`.window_pricing`; the master, the bound and its driver here.

For ``W = 1`` there is a shortcut (:func:`_arc_flow`, on by default): each round's pricing
problem is a group knapsack whose DP graph (nodes = tokens used by the first ``l`` requests of
the round, ``0..M``) is acyclic with one source, so its flow polytope projects onto the convex
hull of the round's configurations. Replacing every ``lambda_t`` by such a flow gives one LP of
``O(T n M)`` rows whose value *is* the relaxation's, solved once (HiGHS interior point with
crossover by default); its linking duals are evaluated in ``L`` by the exact DP, and the bound
reported is that ``L`` (equal to the LP value up to round-off; column generation resumes from
it only if it falls short). Measured: mix12-s1 at the tight horizon of the
optimum, column generation had not converged after 420 s (``L`` 107.20, master 113.88); the
arc-flow LP gives 108.82 in 14 s by interior point, 89 s by dual simplex.

Stabilisation: a box step. The master is solved with the duals confined to
``|mu - centre| <= delta`` (two penalty columns per linking row), the centre being the best
``L`` point so far; a pricing round whose ``L`` beats the centre moves it there (a serious step,
``delta`` doubled when the point was on the box's edge). The first centre is the better of the
time-indexed LP's memory duals spread over the linking rows,
``mu_{w,i,k} = sum_{t in w, t in R(i,k)} y_t (s_i + t - k)``, for which ``L(mu) >= LP``
(``y_t <= 0``: the assignment term is at least ``sum_i pi_i`` by LP dual feasibility and each
configuration uses at most ``M`` per round), and the lifted multipliers of a nested ``W'``
(``start``), for which ``L_W >= L_W'``. Stop when ``L`` reaches the box master's value (within
``1e-6`` relative): the centre, interior to its box, then maximises the concave ``L`` within
the box, hence everywhere, so ``L`` is the relaxation's value. Unconverged, the relaxation's
value lies between the best ``L`` and the restricted master solved without the box (``upper``:
a restriction of the relaxation's LP to the columns generated, feasible by the empty
configurations), which is enough for a go/no-go when that upper value is below the target.
Measured (mix12-s1, optimum 114): ``W = 2`` from the lifted ``W = 1`` duals, 90 s,
``L`` 108.85 and ``upper`` 110.09 (primal simplex master, 504 pricing rounds) or 109.90
(interior-point master, 428 rounds), no serious step in either.

Source: ours (the configuration LP of cutting-stock / bin-packing, Gilmore and Gomory 1961, over
windows of rounds; the box step of Marsten, Hogan and Blankenship, 1975).
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from ..certify import exact_horizon
from ..formulations.horizon import Horizon, tight_horizon
from ..formulations.time_indexed import TimeIndexedMatrix, resolve_horizon, time_indexed_matrix
from ..instance import Instance
from ..schedule import Schedule
from ..solvers import new_highs, run_highs
from ..solvers.options import (
    check_max_nonzeros,
    check_size,
    check_threads,
    check_time_limit,
    shift_arrivals,
)
from ..solvers.result import Result
from .window_pricing import WindowPricer, Windows, set_time_limit

__all__ = ["BOX", "EXACT_EVERY", "LP_SOLVERS", "TOLERANCE", "window_configuration_bound"]

#: Initial half-width of the dual box around the stability centre (rounds).
BOX = 1.0
#: Relative gap between the Lagrangian bound and the master value at which the bound converged.
TOLERANCE = 1e-6
#: Pricing rounds between exact ones for windows of >= 2 rounds (the others price greedily;
#: an exact round also follows every greedy round that found no column).
EXACT_EVERY = 5
#: HiGHS solvers accepted for the arc-flow LP of ``W = 1``.
LP_SOLVERS = ("ipm", "simplex", "pdlp")
_RC_EPS = 1e-7  # a column enters the master when its reduced cost is below -_RC_EPS


def _x_columns(mat: TimeIndexedMatrix, win: Windows) -> tuple[np.ndarray, np.ndarray]:
    """Column-wise ``(start, index)`` of the ``x_{i,k}``: row ``i`` (``assign``) and the
    linking rows ``n + r`` of every window its run meets, all with coefficient +1."""
    by_col = np.argsort(win.link_col, kind="stable")
    counts = np.bincount(win.link_col, minlength=mat.ncol)
    start = np.concatenate(([0], np.cumsum(counts + 1)))
    index = np.empty(int(start[-1]), dtype=np.int32)
    first = start[:-1]
    index[first] = mat.col_unit
    pos = np.ones(index.size, dtype=bool)
    pos[first] = False
    index[pos] = mat.n_units + by_col
    return start, index


class _Stopped(RuntimeError):
    """The master LP ended without an optimal solution (the time limit)."""


def _solve_optimal(h, deadline: float | None) -> tuple[float, np.ndarray]:
    """Run the LP in ``h`` (Ctrl-C stops it and raises ``KeyboardInterrupt``) and return its
    value and row duals; :class:`_Stopped` when it ends without an optimum (the time limit)."""
    import highspy

    if deadline is not None:
        set_time_limit(h, deadline)
    if run_highs(h, deadline):
        raise KeyboardInterrupt
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        raise _Stopped(h.modelStatusToString(h.getModelStatus()))
    return float(h.getInfo().objective_function_value), np.asarray(h.getSolution().row_dual)


class _Master:
    """The restricted master LP in HiGHS, box-stepped.

    Rows: ``assign`` (n, = 1), linking (``win.n_links``, = 0), convexity (one per window, = 1).
    Columns: every ``x_{i,k}``; two box columns per linking row (``+e_r`` at cost
    ``centre_r + delta``, ``-e_r`` at cost ``-(centre_r - delta)``, which in the dual are
    ``centre_r - delta <= mu_r <= centre_r + delta``); then the configurations.
    """

    def __init__(self, mat: TimeIndexedMatrix, win: Windows, threads: int | None) -> None:
        import highspy

        self.mat, self.win = mat, win
        n, nl, nw = mat.n_units, win.n_links, win.n_windows
        self.n_rows = n + nl + nw
        start, index = _x_columns(mat, win)
        box_rows = np.repeat(n + np.arange(nl, dtype=np.int32), 2)
        box_vals = np.tile([1.0, -1.0], nl)
        h = new_highs()
        if threads is not None:
            highspy.Highs.resetGlobalScheduler(True)
            h.setOptionValue("threads", threads)
        lp = highspy.HighsLp()
        ncol = mat.ncol + 2 * nl
        lp.num_col_ = ncol
        lp.num_row_ = self.n_rows
        lp.col_cost_ = np.concatenate((mat.cost, np.zeros(2 * nl)))
        lp.col_lower_ = np.zeros(ncol)
        lp.col_upper_ = np.full(ncol, highspy.kHighsInf)
        rhs = np.concatenate((np.ones(n), np.zeros(nl), np.ones(nw)))
        lp.row_lower_ = rhs
        lp.row_upper_ = rhs
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.num_col_ = ncol
        lp.a_matrix_.num_row_ = self.n_rows
        lp.a_matrix_.start_ = np.concatenate((start, start[-1] + 1 + np.arange(2 * nl))).astype(
            np.int32
        )
        lp.a_matrix_.index_ = np.concatenate((index, box_rows))
        lp.a_matrix_.value_ = np.concatenate((np.ones(index.size), box_vals))
        h.setOptionValue("simplex_strategy", 4)  # primal simplex: columns keep the basis feasible
        h.passModel(lp)
        self.h = h
        self.columns = 0
        self._box_cols = mat.ncol + np.arange(2 * nl, dtype=np.int32)
        self._link_key = win.link_w * mat.ncol + win.link_col  # sorted: (window, column)

    def set_box(self, centre: np.ndarray, delta: float) -> None:
        """Dual box ``centre - delta <= mu <= centre + delta`` on the linking rows."""
        cost = np.empty(2 * centre.size)
        cost[0::2] = centre + delta
        cost[1::2] = -(centre - delta)
        self.h.changeColsCost(int(cost.size), self._box_cols, cost)

    def unboxed_value(self) -> float:
        """The restricted master's value without the box (its penalty columns fixed at 0):
        an *upper* bound on the relaxation's value, since the restricted master keeps only
        some of its columns and stays feasible (the empty configurations). No time limit."""
        import highspy

        nb = self._box_cols.size
        h = self.h
        h.changeColsBounds(nb, self._box_cols, np.zeros(nb), np.zeros(nb))
        h.setOptionValue("time_limit", highspy.kHighsInf)
        if run_highs(h):
            raise KeyboardInterrupt
        ok = h.getModelStatus() == highspy.HighsModelStatus.kOptimal
        value = float(h.getInfo().objective_function_value)
        h.changeColsBounds(nb, self._box_cols, np.zeros(nb), np.full(nb, highspy.kHighsInf))
        if not ok:
            raise _Stopped(h.modelStatusToString(h.getModelStatus()))
        return value

    def add(self, w: int, cols: np.ndarray) -> None:
        """Add configuration ``cols`` (time-indexed columns) of window ``w`` as a column."""
        key = w * self.mat.ncol + np.sort(cols)
        rows = self.mat.n_units + np.searchsorted(self._link_key, key)
        conv = self.mat.n_units + self.win.n_links + w
        idx = np.append(rows, conv).astype(np.int32)
        val = np.append(-np.ones(rows.size), 1.0)
        self.h.addCol(0.0, 0.0, 1e30, int(idx.size), idx, val)
        self.columns += 1

    def solve(self, deadline: float | None) -> tuple[float, np.ndarray, np.ndarray]:
        """``(value, mu, sigma)``: master value, linking duals, convexity duals.

        HiGHS' duals satisfy ``reduced cost = cost - A^T y``; the Lagrangian of the module
        docstring uses ``mu = y`` on the linking rows.
        """

        value, y = _solve_optimal(self.h, deadline)
        n, nl = self.mat.n_units, self.win.n_links
        return value, y[n : n + nl], y[n + nl :]


def _arc_flow(
    mat: TimeIndexedMatrix, win: Windows, threads: int | None, deadline, solver: str
) -> tuple[float, np.ndarray]:
    """``W = 1`` solved exactly, without column generation: ``(value, mu)``, the relaxation's
    value and the linking duals.

    Each round's configuration simplex is replaced by the flow polytope of its knapsack DP
    (arc-flow): nodes ``(l, c)``, ``c = 0..M`` tokens used by the first ``l`` requests of
    the round (reachable ones only), one unit of flow from ``(0, 0)``, a *skip* arc
    ``(l, c) -> (l + 1, c)`` and one arc ``(l, c) -> (l + 1, c + s_i + t - k)`` per pair
    ``(i, k)`` of request ``l`` running in ``t``; the linking row reads ``x_{i,k} = flow on the
    arcs of (i, k)``. The DP's graph is acyclic with one source, so its flow polytope's vertices
    are its paths, i.e. exactly the configurations of the round (at most one pair per request,
    ``<= M``): the projection is the convex hull of ``Q_t`` and the LP value is the relaxation's.
    :class:`_Stopped` when ``deadline`` passes while it is built (seconds for a few thousand
    rounds).
    Rows: ``n + n_links + nodes``; columns: ``ncol + arcs``, each arc with <= 3 entries.
    """
    import highspy

    inst = mat.instance
    M = int(inst.memory)
    n, nl = mat.n_units, win.n_links
    tail_r: list[np.ndarray] = []  # per arc: tail row, head row, linking row (-1: none)
    head_r: list[np.ndarray] = []
    link_r: list[np.ndarray] = []
    tail_v: list[np.ndarray] = []
    rhs: list[float] = []
    nrow = n + nl

    def on_time() -> None:  # the build takes seconds for a few thousand rounds: look often
        if deadline is not None and time.perf_counter() > deadline:
            raise _Stopped("time limit reached while building the arc-flow LP")

    for w in range(win.n_windows):
        on_time()
        t = win.bounds[w][0]
        rows = np.arange(win.first_link[w], win.first_link[w + 1])
        cols = win.link_col[rows]
        units = mat.col_unit[cols]
        weight = inst.prefill[units] + t - mat.col_start[cols]
        fit = weight <= M
        rows, units, weight = rows[fit], units[fit], weight[fit]
        groups = np.unique(units)
        if groups.size == 0:
            continue
        node = np.full(M + 1, -1, dtype=np.int64)
        node[0] = nrow  # the source: outflow = 1
        rhs.append(1.0)
        nrow += 1
        for layer, g in enumerate(groups.tolist()):
            last = layer == groups.size - 1
            tails = np.flatnonzero(node >= 0)
            sign = 1.0 if layer == 0 else -1.0  # source: +outflow; inner nodes: in - out = 0
            mine = units == g
            heads = [tails] + [tails + int(wj) for wj in weight[mine]]
            links = [-1] + (n + rows[mine]).tolist()
            reach = np.zeros(M + 1, dtype=bool)
            for h_c in heads:
                reach[h_c[h_c <= M]] = True
            nxt = np.full(M + 1, -1, dtype=np.int64)
            if not last:  # the last layer's nodes are sinks: no row
                nxt[reach] = nrow + np.arange(int(reach.sum()))
                rhs.extend([0.0] * int(reach.sum()))
                nrow += int(reach.sum())
            for h_c, lr in zip(heads, links, strict=True):
                ok = h_c <= M
                tail_r.append(node[tails[ok]])
                head_r.append(nxt[h_c[ok]])
                link_r.append(np.full(int(ok.sum()), lr, dtype=np.int64))
                tail_v.append(np.full(int(ok.sum()), sign))
            node = nxt
    tr, hr, lr = np.concatenate(tail_r), np.concatenate(head_r), np.concatenate(link_r)
    tv = np.concatenate(tail_v)
    na = tr.size
    on_time()
    ent_r = np.stack((tr, hr, lr), axis=1)  # (arcs, 3)
    ent_v = np.stack((tv, np.ones(na), -np.ones(na)), axis=1)
    keep = ent_r >= 0
    arc_start = np.concatenate(([0], np.cumsum(keep.sum(axis=1))))
    on_time()
    x_start, x_index = _x_columns(mat, win)
    on_time()
    ncol = mat.ncol + na
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = ncol, nrow
    lp.col_cost_ = np.concatenate((mat.cost, np.zeros(na)))
    lp.col_lower_ = np.zeros(ncol)
    lp.col_upper_ = np.full(ncol, highspy.kHighsInf)
    b = np.concatenate((np.ones(n), np.zeros(nl), np.array(rhs)))
    on_time()
    lp.row_lower_, lp.row_upper_ = b, b
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = ncol, nrow
    lp.a_matrix_.start_ = np.concatenate((x_start, x_start[-1] + arc_start[1:])).astype(np.int32)
    on_time()
    lp.a_matrix_.index_ = np.concatenate((x_index, ent_r[keep])).astype(np.int32)
    on_time()
    lp.a_matrix_.value_ = np.concatenate((np.ones(x_index.size), ent_v[keep]))
    on_time()
    h = new_highs()
    if threads is not None:
        highspy.Highs.resetGlobalScheduler(True)
        h.setOptionValue("threads", threads)
    h.setOptionValue("solver", solver)
    h.passModel(lp)
    value, y = _solve_optimal(h, deadline)
    return value, y[n : n + nl]


def _lp_duals(mat: TimeIndexedMatrix, win: Windows, threads: int | None, deadline) -> np.ndarray:
    """Linking multipliers from the time-indexed LP's memory duals ``y_t <= 0``:
    ``mu_{w,i,k} = sum_{t in w, k < t <= k + o_i} y_t (s_i + t - k)``, for which
    ``L(mu) >= LP`` (module docstring)."""

    from ..solvers import build_highs

    h = build_highs(mat, relax=True, threads=threads)
    y = _solve_optimal(h, deadline)[1][mat.n_units :]  # memory rows t = 1..T
    inst = mat.instance
    mu = np.zeros(win.n_links)
    k = mat.col_start[win.link_col]
    u = mat.col_unit[win.link_col]
    s, o = inst.prefill[u], inst.decode[u]
    first = np.array([b[0] for b in win.bounds])[win.link_w]
    last = np.array([b[1] for b in win.bounds])[win.link_w]
    for j in range(win.W):  # offset j inside the window
        t = first + j
        on = (t <= last) & (k < t) & (t <= k + o)
        mu[on] += y[t[on] - 1] * (s[on] + t[on] - k[on])
    return mu


def _lift(start: Result, mat: TimeIndexedMatrix, win: Windows) -> np.ndarray:
    """The multipliers of ``start`` (windows of ``W'``) summed into the windows of ``win``:
    ``mu_{w,i,k} = sum_{w' in w} mu'_{w',i,k}``, so that ``L_W(mu) >= L_W'(mu')`` (the
    assignment term is the same, and a configuration of ``w`` restricts to one of each
    ``w'``)."""
    old_w = int(start.info["W"])
    if start.horizon != mat.T or start.info.get("slack") != mat.slack or win.W % old_w:
        raise ValueError(
            f"start: a bound at W = {old_w}, horizon {start.horizon}, slack "
            f"{start.info.get('slack')} does not nest in W = {win.W}, horizon {mat.T}, slack "
            f"{mat.slack} (same horizon, and W a multiple of its W)"
        )
    old = Windows.build(mat, old_w)
    key = (old.link_w * old_w // win.W) * mat.ncol + old.link_col
    rows = np.searchsorted(win.link_w * mat.ncol + win.link_col, key)
    mu = np.zeros(win.n_links)
    np.add.at(mu, rows, np.asarray(start.info["multipliers"]))
    return mu


def _assignment_term(mat: TimeIndexedMatrix, win: Windows, mu: np.ndarray) -> float:
    """``sum_i min_k (c_{i,k} - sum_w mu_{w,i,k})`` of the Lagrangian (module docstring)."""
    red = mat.cost - np.bincount(win.link_col, weights=mu, minlength=mat.ncol)
    best = np.full(mat.n_units, np.inf)
    np.minimum.at(best, mat.col_unit, red)
    return float(best.sum())


def _configurations_of(mat: TimeIndexedMatrix, win: Windows, start: np.ndarray) -> list:
    """The configuration ``q_w`` of schedule ``start`` in every window (validity argument)."""
    cols = np.array([mat.column(i, int(p)) for i, p in enumerate(start.tolist())])
    on = np.zeros(mat.ncol, dtype=bool)
    on[cols] = True
    out = []
    for w in range(win.n_windows):
        rows = slice(win.first_link[w], win.first_link[w + 1])
        c = win.link_col[rows]
        out.append(c[on[c]])
    return out


class _Search:
    """One column generation: the master, the pricer, the best Lagrangian point (the box's
    centre), and what the result reports (counters, seconds, the arc-flow LP)."""

    def __init__(
        self,
        mat: TimeIndexedMatrix,
        win: Windows,
        threads: int | None,
        deadline: float | None,
        box: float,
    ) -> None:
        self.mat, self.win, self.threads, self.deadline = mat, win, threads, deadline
        self.master = _Master(mat, win, threads)
        self.pricer = WindowPricer(mat, win, threads)
        for w in range(win.n_windows):  # the empty configuration: the master is always feasible
            self.master.add(w, np.empty(0, dtype=np.int64))
        self.start_bound: float | None = None
        self.stopped: str | None = None
        self.iterations = self.serious = 0
        self.value = math.inf
        self.converged = False
        self.pricing_s = self.master_s = 0.0
        self.arc_value: float | None = None
        self.arc_s: float | None = None
        self.centre = np.zeros(win.n_links)
        self.best = _assignment_term(mat, win, self.centre)  # L(0) = sum_i min_k c_{i,k}
        self.delta = box

    def add(self, found: list[np.ndarray]) -> None:
        """Add one configuration per window (``found[w]`` of window ``w``) to the master."""
        for w, cols in enumerate(found):
            self.master.add(w, cols)

    def lagrangian(self, mu: np.ndarray) -> tuple[float, list[np.ndarray]]:
        """``L(mu)`` and each window's best configuration (exact pricing)."""
        t = time.perf_counter()
        lagr, found = _assignment_term(self.mat, self.win, mu), []
        for w in range(self.win.n_windows):
            bound_w, cols = self.pricer.price(w, mu, self.deadline)
            lagr += bound_w
            found.append(cols)
        self.pricing_s += time.perf_counter() - t
        return lagr, found

    def run(self, start: Result | None, arc_flow: bool, lp_solver: str) -> None:
        """Start from the LP duals (the lifted ``start``, the arc-flow duals) and step the box
        until ``L`` meets the master's value or the deadline; an LP stopped short (the time
        limit) leaves the best ``L`` as it stands, with HiGHS' status in ``stopped``."""
        try:
            self._begin(self._starts(start, arc_flow, lp_solver))
            greedy_ok = True
            while not self.converged and (
                self.deadline is None or time.perf_counter() < self.deadline
            ):
                greedy_ok = self._step(greedy_ok)
        except _Stopped as exc:  # an LP ended without an optimum (the time limit): L stands
            self.stopped = str(exc)

    def _starts(self, start: Result | None, arc_flow: bool, lp_solver: str) -> list[np.ndarray]:
        """The first multipliers: the time-indexed LP's duals, the lifted ``start``, and for
        ``W = 1`` with ``arc_flow`` the arc-flow LP's duals (its value in ``arc_value``)."""
        mat, win = self.mat, self.win
        starts = [_lp_duals(mat, win, self.threads, self.deadline)]
        if start is not None:
            starts.append(_lift(start, mat, win))
        if arc_flow and win.W == 1:
            t = time.perf_counter()
            self.arc_value, mu_af = _arc_flow(mat, win, self.threads, self.deadline, lp_solver)
            self.arc_s = time.perf_counter() - t
            starts.append(mu_af)
        return starts

    def _begin(self, starts: list[np.ndarray]) -> None:
        """Evaluate ``L`` at each start, add its configurations, centre the box on the best;
        converged at once when that ``L`` meets the arc-flow LP's value."""
        for mu0 in starts:
            lagr, found = self.lagrangian(mu0)
            self.start_bound = lagr if self.start_bound is None else max(self.start_bound, lagr)
            self.add(found)
            if lagr > self.best:
                self.best, self.centre = lagr, mu0
        arc = self.arc_value
        if arc is not None and self.best >= arc - TOLERANCE * max(1.0, abs(arc)):
            self.value, self.converged = arc, True

    def _step(self, greedy_ok: bool) -> bool:
        """One pricing round: solve the boxed master, stop when ``L`` meets its value, else
        price (exactly, or greedily for a long window) and add the columns of negative reduced
        cost. Returns whether the next round may price greedily."""
        self.master.set_box(self.centre, self.delta)
        t = time.perf_counter()
        self.value, mu, sigma = self.master.solve(self.deadline)
        self.master_s += time.perf_counter() - t
        if self.best >= self.value - TOLERANCE * max(1.0, abs(self.value)):
            self.converged = True
            return greedy_ok
        self.iterations += 1
        exact = self.win.W == 1 or not greedy_ok or self.iterations % EXACT_EVERY == 0
        if exact:
            lagr, found = self.lagrangian(mu)
            if lagr > self.best:  # serious step: move the centre, widen the box at its edge
                if np.abs(mu - self.centre).max() >= self.delta * (1.0 - 1e-9):
                    self.delta *= 2.0
                self.best, self.centre = lagr, mu
                self.serious += 1
        else:
            t = time.perf_counter()
            found = [self.pricer.greedy(w, mu) for w in range(self.win.n_windows)]
            self.pricing_s += time.perf_counter() - t
        added = self._add_improving(found, mu, sigma)
        return exact or added > 0

    def _add_improving(self, found: list[np.ndarray], mu: np.ndarray, sigma: np.ndarray) -> int:
        """Add the configurations of negative reduced cost (the empty one too); how many."""
        win, added = self.win, 0
        for w, cols in enumerate(found):
            rows = win.first_link[w] + np.searchsorted(
                win.link_col[win.first_link[w] : win.first_link[w + 1]], np.sort(cols)
            )
            if mu[rows].sum() - sigma[w] < -_RC_EPS:
                self.master.add(w, cols)
                added += 1
        return added

    def info(self, upper: bool) -> dict[str, Any]:
        """The result's ``info`` but for ``instance`` and ``slack``; with ``upper`` and not
        converged, the unboxed master is solved for ``info["upper"]``."""
        relax_upper = self.value if self.converged else None
        if upper and not self.converged:
            relax_upper = self.master.unboxed_value()
        return {
            "W": self.win.W,
            "windows": self.win.n_windows,
            "iterations": self.iterations,
            "columns": self.master.columns,
            "converged": self.converged,
            "master_value": self.value,
            "lp_value": self.value if self.converged else None,
            "serious_steps": self.serious,
            "stopped": self.stopped,
            "box": self.delta,
            "bound_at_lp_duals": self.start_bound,
            "pricing_s": self.pricing_s,
            "master_s": self.master_s,
            "upper": relax_upper,
            "arc_flow_value": self.arc_value,
            "arc_flow_s": self.arc_s,
        }


def window_configuration_bound(
    instance: Instance,
    W: int,
    *,
    horizon: int | Horizon | None = None,
    schedule: Schedule | None = None,
    time_limit: float | None = None,
    threads: int | None = None,
    box: float = BOX,
    start: Result | None = None,
    arc_flow: bool = True,
    lp_solver: str = "ipm",
    upper: bool = False,
    max_nonzeros: int | None = None,
) -> Result:
    """Lower bound on the optimal TEL from the configuration relaxation over windows of ``W``
    rounds (module docstring: definition, validity, solution method).

    Parameters
    ----------
    instance : Instance
        Requests ``(s_i, o_i, a_i)`` and KV-cache budget ``M`` (tokens); arrivals allowed (the
        model is built on the axis shifted by the earliest arrival).
    W : int
        Window length in rounds, ``>= 1``; ``W >= T`` is one window (the optimum).
    horizon : int or Horizon, optional
        On the shifted axis. A :class:`Horizon` gives ``T`` and its start windows; an int ``T``
        gives the plain windows ``K_i = {a_i .. T - o_i}`` (``T`` must hold an optimal schedule,
        e.g. ``T >= T1``; not checked). Default: the tight horizon of ``schedule``.
    schedule : Schedule, optional
        A feasible schedule of ``instance``: the upper bound behind the default horizon
        (:func:`~lpsched.formulations.horizon.tight_horizon`) and the first configurations.
        Default: the best list policy improved by 4000 local-search moves.
    time_limit : float, optional
        Seconds for the whole call; None: run to convergence. When reached, the best
        Lagrangian bound so far is returned (valid) with ``info["converged"] = False``.
    threads : int, optional
        HiGHS threads.
    box : float, default BOX
        Initial half-width of the dual box step (rounds), ``> 0``.
    start : Result, optional
        A result of this function for the same instance and horizon at a ``W'`` dividing
        ``W``: its multipliers, lifted to ``W`` (``mu_{w,i,k} = sum`` over the sub-windows),
        give ``L >= start.bound`` from the first iteration (module docstring, nesting).
    arc_flow : bool, default True
        For ``W = 1``: first solve the relaxation as one LP with each round's configurations
        replaced by the flow polytope of its knapsack DP (exact, no column generation), and
        evaluate ``L`` at its linking duals; column generation runs only if that ``L`` falls
        short of the LP value (numerical trouble).
    lp_solver : str, default "ipm"
        HiGHS ``solver`` option for the arc-flow LP (``"ipm"``, with crossover: vertex duals;
        ``"simplex"``; ``"pdlp"``).
    upper : bool, default False
        When column generation stops unconverged, solve the restricted master once more
        without the box (no time limit): ``info["upper"]``, an upper bound on the
        relaxation's value (for a go/no-go: if it is below a target, so is the relaxation).
    max_nonzeros : int or None
        Size limit of the time-indexed matrix the windows are cut from
        (:func:`~lpsched.solvers.options.check_size`; None: ``LP_MAX_NONZEROS``).

    Returns
    -------
    Result
        ``method = f"window-configuration-W{W}"``, ``bound`` the best Lagrangian bound
        (rounds, unrounded), ``horizon = T``; ``info``: ``iterations`` (pricing rounds),
        ``columns`` (configurations generated), ``converged``, ``master_value`` (the last
        restricted master value), ``lp_value`` (the relaxation's value, when converged),
        ``windows``, ``serious_steps``, ``box``, ``bound_at_lp_duals`` (``L`` at the
        time-indexed LP's duals, ``>= LP``, or at the lifted ``start``), ``pricing_s``,
        ``master_s``, ``upper`` (an upper bound on the relaxation's value: its value when
        converged, the unboxed restricted master's with ``upper``, else None),
        ``arc_flow_value`` and ``arc_flow_s`` (``W = 1`` with ``arc_flow``:
        the arc-flow LP's value and seconds, else None), ``multipliers`` (the best ``mu``,
        for ``start``), ``slack``,
        ``stopped`` (HiGHS' status when the time limit ended a master LP, else None).

    Raises
    ------
    ValueError
        ``W`` not a positive integer, ``box <= 0``, ``lp_solver`` not in
        :data:`LP_SOLVERS`, ``time_limit`` or ``threads`` out of
        range; a ``start`` that does not nest (another horizon, or ``W'`` not dividing ``W``).
    HorizonError
        ``horizon`` leaves some request no start.
    LPTooLargeError
        The time-indexed matrix would exceed ``max_nonzeros``, or the horizon
        ``MAX_HORIZON``; refused before it is built.
    KeyboardInterrupt
        Ctrl-C during a HiGHS solve (the solve is stopped first).

    Notes
    -----
    Source: ours (module docstring). ``W = 1`` is the per-round configuration LP; bounds are
    monotone for nested windows (``W`` dividing ``W'``).
    """
    _check_method_options(W, box, lp_solver)
    time_limit = check_time_limit(time_limit)
    threads = check_threads(threads)
    max_nonzeros = check_max_nonzeros(max_nonzeros)
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + time_limit
    shifted, schedule = _shifted(instance, schedule)
    if horizon is None:
        horizon = tight_horizon(shifted, schedule)
    T, slack = resolve_horizon(shifted, horizon)
    check_size(shifted, T, slack, max_nonzeros)
    method = f"window-configuration-W{W}"
    mat = time_indexed_matrix(shifted, T, slack=slack)
    search = _Search(mat, Windows.build(mat, int(min(W, T))), threads, deadline, box)
    if mat.fits(schedule.start):
        search.add(_configurations_of(mat, search.win, schedule.start))
    search.run(start, arc_flow, lp_solver)
    info = {
        **search.info(upper),
        "instance": instance.name,
        "slack": slack,
        "multipliers": search.centre,
    }
    return Result.of_bound(
        method=method,
        bound=search.best,
        runtime_s=time.perf_counter() - t0,
        horizon=T,
        info=info,
    )


def _check_method_options(W: int, box: float, lp_solver: str) -> None:
    """``ValueError`` unless ``W`` is a positive integer, ``box > 0`` and ``lp_solver`` known."""
    if isinstance(W, bool) or not isinstance(W, (int, np.integer)) or W < 1:
        raise ValueError(f"W must be a positive integer (rounds per window), got {W!r}")
    if not box > 0:
        raise ValueError(f"box must be a positive number of rounds, got {box!r}")
    if lp_solver not in LP_SOLVERS:
        raise ValueError(f"lp_solver must be one of {LP_SOLVERS}, got {lp_solver!r}")


def _shifted(instance: Instance, schedule: Schedule | None) -> tuple[Instance, Schedule]:
    """``instance`` on the axis shifted by its earliest arrival, and ``schedule`` on it
    (default: the best list policy improved by 4000 local-search moves)."""
    shifted, shift = shift_arrivals(instance)
    if schedule is not None:
        return shifted, Schedule(shifted, schedule.start - shift)
    best = exact_horizon(shifted, local_search=4000).schedule
    assert best is not None
    return shifted, best
