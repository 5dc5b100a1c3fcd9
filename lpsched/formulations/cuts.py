"""Cover cuts on the memory rows of the time-indexed model (SPEC section 3), separated on the LP.

Row ``memory[t]`` reads ``sum_u sum_k a_{u,k}(t) x[u,k] <= M`` with ``a_{u,k}(t) = s_u + t - k``,
and a request runs at most once (``assign``), so a row is a *multiple-choice knapsack*. A
**GUB cover** of row ``t`` is a set ``C`` of requests (units of one request each) with thresholds
``theta_u`` and ``sum_{u in C} theta_u > M``. Every schedule satisfies::

    sum_{u in C u E} sum_{k : a_{u,k}(t) >= theta_u} x[u,k]  <=  |C| - 1,

where ``E`` (the extension) is every other unit with ``theta_u = max_{v in C} theta_v``: any
``|C|`` requests counted on the left hold at least ``sum_{u in C} theta_u > M`` tokens in round
``t`` together (those from ``C`` at least their own threshold, each from ``E`` at least the
largest one). A class of ``c > 1`` identical requests (aggregated column, values ``0..c``) is
counted per member, so it may sit in ``E`` but not in ``C``.

Separation (:func:`separate_cover_cuts`): per row, a dynamic programme over the capacity
``0..M+1`` picks the cover minimising ``sum_{u in C} (1 - y_u(theta_u))`` with ``y_u`` the LP mass
of ``u`` at coefficient ``>= theta_u``; a value below 1 is a violated cut. Each threshold is then
lowered as far as ``sum theta > M`` allows (a stronger cut). Source: ours (GUB covers: Wolsey,
*Valid inequalities for 0-1 knapsacks and MIPs with generalised upper bound constraints*, 1990).

Repair (:func:`overflow_cuts`): a floating-point solver may return an integral point whose
schedule overflows ``M`` by a few tokens (its feasibility tolerance is relative, and the
coefficients may be near ``1e10``). In every overflowing round the running requests, at their
own coefficients, are a cover (``sum theta > M`` in exact integer arithmetic), so the same cut
holds and cuts the point off. A class of ``c > 1`` identical requests cannot sit in ``C``; a
round that holds one gets the *uniform* cover instead: ``k`` requests that each hold at least
``theta = floor(M / k) + 1`` tokens hold more than ``M``, so at most ``k - 1`` of them run at
such a coefficient (every unit counted per member).
"""

from __future__ import annotations

import numpy as np

from ..schedule import memory_at
from .time_indexed import TimeIndexedMatrix

__all__ = ["MemoryRows", "separate_cover_cuts", "overflow_cuts"]


class MemoryRows:
    """The memory rows of ``mat`` row by row: columns, units and coefficients per round."""

    def __init__(self, mat: TimeIndexedMatrix) -> None:
        U = mat.n_units
        mask = mat.index >= U
        cols = np.repeat(np.arange(mat.ncol), np.diff(mat.indptr))[mask]
        rows = mat.index[mask].astype(np.int64) - U
        coef = mat.value[mask]
        order = np.argsort(rows, kind="stable")
        rows, cols, coef = rows[order], cols[order], coef[order]
        cut = np.searchsorted(rows, np.arange(mat.T + 1))
        self.mat = mat
        self.rows = [
            (
                cols[cut[t] : cut[t + 1]],
                mat.col_unit[cols[cut[t] : cut[t + 1]]],
                coef[cut[t] : cut[t + 1]].astype(np.int64),
            )
            for t in range(mat.T)
        ]


def _separate_row(cols, units, coef, x, count, M, eps):
    xv = x[cols]
    live = xv > eps
    if not live.any():
        return None
    opts = []  # (unit, [(theta, y)]) for single-request units with LP mass in the row
    for u in np.unique(units[live]).tolist():
        if count[u] != 1:
            continue
        sel = units == u
        cf, xu = coef[sel], xv[sel]
        o = np.argsort(-cf, kind="stable")
        cf, xu = cf[o], xu[o]
        y = np.cumsum(xu)
        last = np.r_[cf[1:] != cf[:-1], True]
        lst = [
            (int(c), float(v)) for c, v, keep in zip(cf, y, last, strict=True) if keep and v > eps
        ]
        if lst:
            opts.append((u, lst))
    if sum(lst[0][0] for _, lst in opts) <= M:  # lst[0] has the largest threshold: no cover
        return None
    cap = M + 1
    idx = np.arange(cap + 1)
    dp = np.full(cap + 1, np.inf)
    dp[0] = 0.0
    hist = []
    for _, lst in opts:
        new = dp.copy()
        ch = np.full(cap + 1, -1)
        for j, (th, mass) in enumerate(lst):
            cand = dp[np.maximum(idx - th, 0)] + (1.0 - mass)
            better = cand < new - 1e-12
            new[better] = cand[better]
            ch[better] = j
        hist.append(ch)
        dp = new
    if not dp[cap] < 1.0 - 1e-3:
        return None
    chosen: dict[int, int] = {}
    c = cap
    for pos in range(len(opts) - 1, -1, -1):
        j = hist[pos][c]
        if j >= 0:
            u, lst = opts[pos]
            chosen[u] = lst[j][0]
            c = max(c - lst[j][0], 0)
    members, rhs = _cover_cut(chosen, cols, units, coef, M)
    viol = float(x[members].sum()) - rhs
    if viol <= 1e-4:
        return None
    return viol, members.astype(np.int32), rhs


def _cover_cut(
    theta: dict[int, int], cols: np.ndarray, units: np.ndarray, coef: np.ndarray, M: int
) -> tuple[np.ndarray, int]:
    """The GUB cover cut of the cover ``theta`` (unit -> threshold, ``sum > M``) on one memory
    row: each threshold lowered as far as ``sum theta > M`` allows (``theta`` is updated), then
    the member columns (coefficient at least their unit's threshold, the other units at the
    largest) and the right-hand side ``|C| - 1``."""
    total = sum(theta.values())
    for u in list(theta):  # lower each threshold while the cover stays a cover
        low = max(M + 1 - (total - theta[u]), int(coef[units == u].min()))
        if low < theta[u]:
            total += low - theta[u]
            theta[u] = low
    assert total > M
    top = max(theta.values())
    th = np.array([theta.get(int(u), top) for u in units.tolist()], dtype=np.int64)
    return cols[coef >= th], len(theta) - 1


def separate_cover_cuts(
    rows: MemoryRows, x: np.ndarray, max_cuts: int = 200, eps: float = 1e-6
) -> list[tuple[np.ndarray, int]]:
    """Violated GUB-cover cuts ``sum_{c in cols} x_c <= rhs`` at the LP point ``x``.

    Parameters
    ----------
    rows : MemoryRows
    x : ndarray, shape (ncol,)
        LP solution.
    max_cuts : int
        At most this many cuts, the most violated first (at most one per row).
    eps : float
        LP values below this count as zero.

    Returns
    -------
    list of (cols, rhs)
        Column indices (int32) with coefficient 1, and the right-hand side.
    """
    M = rows.mat.instance.memory
    found = []
    for cols, units, coef in rows.rows:
        r = _separate_row(cols, units, coef, x, rows.mat.count, M, eps)
        if r is not None:
            found.append(r)
    found.sort(key=lambda r: -r[0])
    return [(cols, rhs) for _, cols, rhs in found[:max_cuts]]


def overflow_cuts(rows: MemoryRows, start: np.ndarray) -> list[tuple[np.ndarray, int]]:
    """Cover cuts ``sum_{c in cols} x_c <= rhs`` that cut off the integral point of ``start``
    when its schedule overflows the KV cache (module docstring), one per overflowing round.

    Parameters
    ----------
    rows : MemoryRows
    start : ndarray of int, shape (n,)
        Starts ``p_i`` (rounds) read from a solver's integral solution.

    Returns
    -------
    list of (cols, rhs)
        Column indices (int32) with coefficient 1 and the right-hand side; empty when the
        schedule fits in every round. Each cut holds for every schedule (exact integers) and is
        violated by ``start``: a GUB cover of the running requests with thresholds lowered as
        far as ``sum theta > M`` allows, or the uniform cover when a class of identical
        requests runs.

    Notes
    -----
    Source: ours (the cover argument of the module docstring).
    """
    mat = rows.mat
    inst = mat.instance
    M = int(inst.memory)
    s, o = inst.prefill.astype(np.int64), inst.decode.astype(np.int64)
    start = np.asarray(start, dtype=np.int64)
    rounds = np.arange(1, mat.T + 1, dtype=np.int64)
    over = rounds[memory_at(s, start, start + o, rounds) > M]
    unit = mat.unit_of()
    out: list[tuple[np.ndarray, int]] = []
    for t in over.tolist():
        run = np.flatnonzero((start < t) & (t <= start + o))
        coef = s[run] + t - start[run]  # tokens of each running request in round t
        cols, units, cf = rows.rows[t - 1]
        if (mat.count[unit[run]] == 1).all():
            theta = dict(zip(unit[run].tolist(), coef.tolist(), strict=True))
            members, rhs = _cover_cut(theta, cols, units, cf, M)
            out.append((members.astype(np.int32), rhs))
            continue
        desc = np.sort(coef)[::-1]
        k_all = np.arange(1, desc.size + 1)
        fits = np.flatnonzero(k_all * desc > M)
        if fits.size:
            k = int(k_all[fits[0]])
            out.append((cols[cf >= M // k + 1].astype(np.int32), k - 1))
    return out
