"""The windows and the pricing problem of the window-configuration relaxation.

The relaxation, its validity and its solution method are in :mod:`.window_configuration`;
this module holds what one window needs. :class:`Windows` numbers the linking rows (one per
window and time-indexed column whose run meets the window). The pricing problem of window
``w`` is ``min_{q in Q_w} sum_{(i,k) in q} mu_{w,i,k}``: a small binary program over the pairs
with ``mu_{w,i,k} < 0``, at most one start per request, one memory row per round of ``w``.
:class:`WindowPricer` solves it exactly (a one-round window by the group-knapsack dynamic program
:func:`group_knapsack`, a longer one by HiGHS, whose dual bound is returned so that the
Lagrangian bound stays valid if the MIP stops short) or greedily (pairs by increasing ``mu``
while they fit, a heuristic column).

Source: ours (the pricing problem of the configuration LP of cutting-stock / bin-packing,
Gilmore and Gomory 1961, over windows of rounds).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from ..formulations.time_indexed import TimeIndexedMatrix
from ..solvers import new_highs, run_highs

_MU_EPS = 1e-9  # pricing candidates: linking duals below -_MU_EPS


@dataclass(frozen=True, eq=False)
class Windows:
    """The linking rows: one per (window, column of ``mat`` whose run meets the window).

    ``bounds[w] = (first, last)`` rounds of window ``w``; ``link_w``, ``link_col`` the window and
    the time-indexed column of every linking row (sorted by window, then column);
    ``first_link[w]`` the first linking row of window ``w`` (length ``nw + 1``).
    """

    W: int
    bounds: list[tuple[int, int]]
    link_w: np.ndarray
    link_col: np.ndarray
    first_link: np.ndarray

    @classmethod
    def build(cls, mat: TimeIndexedMatrix, W: int) -> Windows:
        T = mat.T
        nw = -(-T // W)
        bounds = [(j * W + 1, min((j + 1) * W, T)) for j in range(nw)]
        o = mat.instance.decode[mat.col_unit]
        lo_w = mat.col_start // W  # window of round k + 1
        hi_w = (mat.col_start + o - 1) // W  # window of round k + o
        span = hi_w - lo_w + 1
        link_col = np.repeat(np.arange(mat.ncol, dtype=np.int64), span)
        offset = np.arange(link_col.size) - np.repeat(np.cumsum(span) - span, span)
        link_w = lo_w[link_col] + offset
        order = np.lexsort((link_col, link_w))
        link_w, link_col = link_w[order], link_col[order]
        first_link = np.searchsorted(link_w, np.arange(nw + 1)).astype(np.int64)
        return cls(W, bounds, link_w, link_col, first_link)

    @property
    def n_windows(self) -> int:
        return len(self.bounds)

    @property
    def n_links(self) -> int:
        return int(self.link_w.size)


def _configuration_fits(mat: TimeIndexedMatrix, cols: np.ndarray, first: int, last: int) -> bool:
    """Exact integer check: the pairs ``cols`` fit in ``M`` in every round ``first..last`` and
    hold at most one start per request."""
    inst = mat.instance
    units = mat.col_unit[cols]
    if np.unique(units).size != units.size:
        return False
    s, o, k = inst.prefill[units], inst.decode[units], mat.col_start[cols]
    t = np.arange(first, last + 1)[:, None]
    use = np.where((k < t) & (t <= k + o), s + t - k, 0).sum(axis=1)
    return bool((use <= inst.memory).all())


def set_time_limit(h, deadline: float) -> None:
    """HiGHS' ``time_limit`` for a run that must end by ``deadline`` (``perf_counter``): the
    option bounds the object's run time summed over all its runs, so add what it has used."""
    h.setOptionValue("time_limit", h.getRunTime() + max(1e-3, deadline - time.perf_counter()))


def group_knapsack(
    group: np.ndarray, weight: np.ndarray, value: np.ndarray, cols: np.ndarray, capacity: int
) -> tuple[float, np.ndarray]:
    """Exact pricing of a one-round window by dynamic programming: at most one item per group
    (request), total weight (tokens) at most ``capacity``, least total value.

    ``f[c]`` = least value of a choice among the groups seen with weight ``<= c``; one pass per
    group, ``O(items * capacity)``. Returns ``(value, cols of the items chosen)``.
    """
    f = np.zeros(capacity + 1)
    order = np.argsort(group, kind="stable")
    bounds = np.flatnonzero(np.diff(group[order])) + 1
    picks: list[np.ndarray] = []
    for items in np.split(order, bounds):
        g = f.copy()
        pick = np.full(capacity + 1, -1, dtype=np.int64)
        for j in items.tolist():
            wj = int(weight[j])
            if wj > capacity:
                continue
            cand = f[: capacity + 1 - wj] + value[j]
            better = cand < g[wj:]
            g[wj:] = np.where(better, cand, g[wj:])
            pick[wj:] = np.where(better, j, pick[wj:])
        picks.append(pick)
        f = g
    chosen = []
    c = capacity
    for pick in reversed(picks):
        j = int(pick[c])
        if j >= 0:
            chosen.append(j)
            c -= int(weight[j])
    return float(f[capacity]), np.sort(cols[np.array(chosen, dtype=np.int64)])


class WindowPricer:
    """The pricing problem of every window, solved as a small binary program by HiGHS."""

    def __init__(self, mat: TimeIndexedMatrix, win: Windows, threads: int | None) -> None:
        self.mat, self.win = mat, win
        self.h = new_highs()
        if threads is not None:
            self.h.setOptionValue("threads", threads)
        self.h.setOptionValue("mip_rel_gap", 0.0)
        self.h.setOptionValue("mip_abs_gap", 1e-9)

    def greedy(self, w: int, mu: np.ndarray) -> np.ndarray:
        """A configuration of window ``w`` built greedily: pairs by increasing ``mu``, each
        taken when its request is free and it fits in every round (a heuristic column)."""
        win, mat = self.win, self.mat
        rows = np.arange(win.first_link[w], win.first_link[w + 1])
        cand = rows[mu[rows] < -_MU_EPS]
        cand = cand[np.argsort(mu[cand], kind="stable")]
        cols = win.link_col[cand]
        first, last = win.bounds[w]
        units = mat.col_unit[cols]
        k = mat.col_start[cols]
        s, o = mat.instance.prefill[units], mat.instance.decode[units]
        t = np.arange(first, last + 1)[None, :]
        need = np.where((k[:, None] < t) & (t <= (k + o)[:, None]), (s - k)[:, None] + t, 0)
        use = np.zeros(last - first + 1, dtype=np.int64)
        free = np.ones(mat.n_units, dtype=bool)
        chosen = []
        for j in range(cols.size):
            if free[units[j]] and (use + need[j] <= mat.instance.memory).all():
                use += need[j]
                free[units[j]] = False
                chosen.append(int(cols[j]))
        return np.array(sorted(chosen), dtype=np.int64)

    def price(self, w: int, mu: np.ndarray, deadline: float | None) -> tuple[float, np.ndarray]:
        """``(bound, cols)``: a lower bound on ``min_{q in Q_w} sum_{(i,k) in q} mu_{w,i,k}``
        and the columns of the best configuration found (empty when none is negative)."""
        import highspy

        win, mat = self.win, self.mat
        rows = np.arange(win.first_link[w], win.first_link[w + 1])
        cand = rows[mu[rows] < -_MU_EPS]
        empty = np.empty(0, dtype=np.int64)
        if cand.size == 0:
            return 0.0, empty
        cols = win.link_col[cand]
        if cand.size == 1:
            return float(mu[cand[0]]), cols
        first, last = win.bounds[w]
        units = mat.col_unit[cols]
        k = mat.col_start[cols]
        s = mat.instance.prefill[units]
        o = mat.instance.decode[units]
        if first == last:
            return group_knapsack(units, s + first - k, mu[cand], cols, mat.instance.memory)
        # rows: memory of rounds first..last, then at most one start per unit (when >= 2)
        nt = last - first + 1
        _, gub_of, gub_size = np.unique(units, return_inverse=True, return_counts=True)
        gub_of = gub_of.reshape(-1)
        multi = gub_size[gub_of] >= 2
        gub_ids = np.cumsum(gub_size >= 2) - 1
        t = np.arange(first, last + 1)[None, :]
        inside = (k[:, None] < t) & (t <= (k + o)[:, None])
        coeff = np.where(inside, (s - k)[:, None] + t, 0)
        entries_r: list[np.ndarray] = []
        entries_v: list[np.ndarray] = []
        for j in range(cols.size):
            tr = np.flatnonzero(inside[j])
            r = tr if not multi[j] else np.append(tr, nt + gub_ids[gub_of[j]])
            v = coeff[j, tr].astype(np.float64)
            entries_r.append(r)
            entries_v.append(v if not multi[j] else np.append(v, 1.0))
        nrow = nt + int((gub_size >= 2).sum())
        lp = highspy.HighsLp()
        lp.num_col_ = int(cols.size)
        lp.num_row_ = nrow
        lp.col_cost_ = mu[cand].astype(np.float64)
        lp.col_lower_ = np.zeros(cols.size)
        lp.col_upper_ = np.ones(cols.size)
        lp.row_lower_ = np.full(nrow, -highspy.kHighsInf)
        lp.row_upper_ = np.concatenate(
            (np.full(nt, float(mat.instance.memory)), np.ones(nrow - nt))
        )
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.num_col_ = int(cols.size)
        lp.a_matrix_.num_row_ = nrow
        lp.a_matrix_.start_ = np.concatenate(([0], np.cumsum([r.size for r in entries_r]))).astype(
            np.int32
        )
        lp.a_matrix_.index_ = np.concatenate(entries_r).astype(np.int32)
        lp.a_matrix_.value_ = np.concatenate(entries_v)
        lp.integrality_ = [highspy.HighsVarType.kInteger] * int(cols.size)
        h = self.h
        h.clearModel()
        if deadline is not None:
            set_time_limit(h, deadline)
        h.passModel(lp)
        if run_highs(h, deadline):
            raise KeyboardInterrupt
        info = h.getInfo()
        bound = float(info.mip_dual_bound)
        if not math.isfinite(bound):
            bound = float(mu[cand].clip(max=0.0).sum())  # every negative pair at once
        bound = min(bound, 0.0)
        if info.primal_solution_status != 2:  # no feasible solution (time limit)
            return bound, empty
        chosen = cols[np.asarray(h.getSolution().col_value) > 0.5]
        if not _configuration_fits(mat, chosen, first, last):
            return bound, empty
        return bound, chosen
