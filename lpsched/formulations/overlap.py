"""Overlap clique cuts on the time-indexed model (SPEC section 3.1), separated on the LP.

When a few requests fill the KV cache, two of them can run together only briefly. Let
``P_i = s_i + o_i`` be request ``i``'s peak (tokens). If requests ``i`` and ``j`` both run in
some round and ``i`` completes first (``C_i <= C_j``), then in round ``C_i`` request ``i``
holds ``P_i`` and ``j``, started at ``p_j < C_i``, holds ``s_j + (C_i - p_j)``; so the time
``j`` has run when ``i`` completes is at most ``M - P_i - s_j``. The **overlap bound** of the
pair is ``L_ij = max(0, M - P_i - s_j, M - P_j - s_i)`` (rounds).

**The inequality.** Let ``K`` be a set of requests and ``L >= L_ij`` for every two of them,
with ``o_i > L`` for each. Call request ``i`` *late* in round ``t`` when it has run more than
``L`` rounds by then: ``p_i + L < t <= C_i``. Then at most one request of ``K`` is late in any
round::

    sum_{i in K} sum_{k : k + L < t <= k + o_i} x_{i,k}  <=  1        every round t.

*Proof* (ours). Let ``i != j`` of ``K`` both be late in round ``t``, say ``C_i <= C_j``. Then
``p_j + L < t <= C_i <= C_j``: ``j`` runs in round ``C_i`` and has run ``C_i - p_j > L``
rounds, holding at least ``s_j + L + 1`` tokens while ``i`` holds ``P_i``; together more than
``P_i + s_j + M - P_i - s_j = M`` (as ``L >= M - P_i - s_j``), which no schedule allows. So
every schedule satisfies the inequality, and the optimal TEL of the MIP is unchanged.

The proof needs less: only the request completing second must have run long, and it must
have run more than ``M - P_i - s_j`` for the ``i`` completing first. So each member ``j``
may use its own threshold ``lambda_j = max_{i in K, i != j} max(0, M - P_i - s_j) <= L``
(with an identical copy of ``j`` among the ``i`` when ``j`` is a class), and the cut counts
``x_{j,k}`` for ``k + lambda_j < t <= k + o_j``: more columns, the same right-hand side, so a
stronger cut; the proof above goes through with ``lambda_j`` in place of ``L``.

``L = 0`` is a set of requests no two of which may ever run together (a single machine); the
time-indexed LP lets fractions of such requests share rounds, which the cut forbids. A class
of ``c > 1`` identical requests (an aggregated column, values ``0..c``) may sit in ``K`` when
its own overlap bound ``L_ii`` is at most ``L`` (each member counted).

**Separation** (:func:`separate_overlap_cuts`). For each round ``t`` and each level ``L``
among the distinct pair bounds, the LP mass of each unit that is late in ``t`` is a prefix
sum over its start window; a greedy clique (units by mass, descending, each kept when its
bound with every unit kept is at most ``L``) is a cut when its mass exceeds 1. Per round, the
most violated level is kept.

Measured (``benchmarks/bench_overlap_cuts.py``): on ``jaillet-synthetic`` draws the cuts raise
the LP relaxation by a quarter to a half of its distance to the optimum.

Source: ours (the inequality and its proof; clique cuts on a conflict graph are classical,
e.g. Padberg, *On the facial structure of set packing polyhedra*, 1973).
"""

from __future__ import annotations

import numpy as np

from ..instance import Instance
from .time_indexed import TimeIndexedMatrix

__all__ = [
    "overlap_bounds",
    "separate_overlap_cuts",
    "ColumnConflicts",
    "separate_conflict_cliques",
]


def overlap_bounds(instance: Instance) -> np.ndarray:
    """The pairwise overlap bounds ``L_ij = max(0, M - P_i - s_j, M - P_j - s_i)`` (rounds).

    Parameters
    ----------
    instance : Instance
        Requests ``(s_i, o_i)`` and the KV-cache budget ``M`` (tokens).

    Returns
    -------
    ndarray of int64, shape (n, n)
        Symmetric; entry ``(i, j)`` bounds how long requests ``i`` and ``j`` can run together
        before the first of them completes (module docstring). The diagonal is the bound of
        ``i`` with an identical copy of itself.

    Notes
    -----
    Source: ours (module docstring).
    """
    s = instance.prefill.astype(np.int64)
    peak = s + instance.decode.astype(np.int64)
    one = instance.memory - peak[:, None] - s[None, :]  # i completes first, j running
    return np.maximum(0, np.maximum(one, one.T))


def separate_overlap_cuts(
    mat: TimeIndexedMatrix, x: np.ndarray, max_cuts: int = 200, eps: float = 1e-6
) -> list[tuple[np.ndarray, int]]:
    """Violated overlap cuts ``sum_{c in cols} x_c <= 1`` at the LP point ``x``.

    Parameters
    ----------
    mat : TimeIndexedMatrix
        The time-indexed model (columns ``(unit, start k)``; a unit runs rounds
        ``k + 1 .. k + o``).
    x : ndarray, shape (ncol,)
        An LP solution of ``mat`` (values, or class counts when aggregated).
    max_cuts : int, default 200
        At most this many cuts, the most violated first (at most one per round).
    eps : float, default 1e-6
        Violation below this is ignored.

    Returns
    -------
    list of (cols, rhs)
        Column indices (int32, coefficient 1) and the right-hand side 1 of each cut.

    Notes
    -----
    Source: ours (module docstring).
    """
    inst = mat.instance
    first = np.array([int(m[0]) for m in mat.members], dtype=np.int64)
    s = inst.prefill[first].astype(np.int64)
    o = inst.decode[first].astype(np.int64)
    # one[i, j]: rounds j may have run when i completes first (module docstring)
    one = np.maximum(0, inst.memory - (s + o)[:, None] - s[None, :])
    T = mat.T
    x = np.asarray(x, dtype=float)
    mass = np.zeros((mat.n_units, T + 1))
    np.add.at(mass, (mat.col_unit, mat.col_start), x)
    prefix = np.concatenate([np.zeros((mat.n_units, 1)), np.cumsum(mass, axis=1)], axis=1)
    multi = mat.count > 1
    found = []
    for t in range(1, T + 1):
        # running mass of each unit in round t: starts t - o_u <= k <= t - 1
        lo = np.clip(t - o, 0, T + 1)
        running = prefix[:, t] - prefix[np.arange(mat.n_units), lo]
        cand = np.flatnonzero(running > eps)
        if cand.size < 2 and not multi[cand].any():
            continue
        keep, total = _greedy_set(
            cand[np.argsort(-running[cand], kind="stable")], one, multi, prefix, o, t
        )
        if total > 1.0 + eps:
            found.append((total, t, keep))
    found.sort(key=lambda f: -f[0])
    cuts = []
    for _, t, (units, lam) in found[:max_cuts]:
        wait = np.full(mat.n_units, -1, dtype=np.int64)
        wait[units] = lam
        w = wait[mat.col_unit]
        k = mat.col_start
        late = (w >= 0) & (k + w < t) & (t <= k + o[mat.col_unit])
        cuts.append((np.flatnonzero(late).astype(np.int32), 1))
    return cuts


def _thresholds(units: np.ndarray, one: np.ndarray, multi: np.ndarray) -> np.ndarray:
    """``lambda_j = max_{i in K, i != j} one[i, j]`` (an identical copy counted for a class)."""
    sub = one[np.ix_(units, units)].copy()
    diag = np.where(multi[units], np.diag(sub), -1)
    np.fill_diagonal(sub, -1)
    return np.maximum(sub.max(axis=0, initial=-1), diag)


def _late_mass(units, lam, prefix, o, t) -> float:
    """LP mass of ``units`` late in round ``t``: starts ``t - o_u <= k <= t - lambda_u - 1``."""
    hi = np.clip(t - lam - 1, -1, prefix.shape[1] - 2)
    lo = np.minimum(np.clip(t - o[units], 0, None), hi + 1)
    return float((prefix[units, hi + 1] - prefix[units, lo]).sum())


def _greedy_set(order, one, multi, prefix, o, t):
    """Units taken in ``order`` while each raises the late mass of the set (thresholds
    recomputed): ``((units, lambdas), late mass)``."""
    units = np.empty(0, dtype=np.int64)
    lam = units
    total = 0.0
    for u in order.tolist():
        trial = np.append(units, u)
        tl = np.maximum(_thresholds(trial, one, multi), 0)
        value = _late_mass(trial, tl, prefix, o, t)
        if value > total:
            units, lam, total = trial, tl, value
    return (units, lam), total


class ColumnConflicts:
    """The columns of a :class:`~lpsched.formulations.time_indexed.TimeIndexedMatrix` as
    arrays, for the pairwise conflict test of SPEC section 3.1 (:meth:`conflicts`).

    Parameters
    ----------
    mat : TimeIndexedMatrix
        Columns ``(unit, start k)``; a unit runs rounds ``k + 1 .. k + o``.

    Notes
    -----
    Source: ours (SPEC section 3.1).
    """

    def __init__(self, mat: TimeIndexedMatrix) -> None:
        inst = mat.instance
        first = np.array([int(m[0]) for m in mat.members], dtype=np.int64)
        self.unit = mat.col_unit
        self.start = mat.col_start
        s = inst.prefill[first].astype(np.int64)[self.unit]
        o = inst.decode[first].astype(np.int64)[self.unit]
        self.s, self.peak, self.end = s, s + o, self.start + o
        self.single = mat.count[self.unit] == 1
        # a class column may join a clique only if two of its members at its start conflict
        self.usable = self.single | (2 * self.peak > inst.memory)
        self.memory = inst.memory

    def conflicts(self, cand: np.ndarray, c: int) -> np.ndarray:
        """Which columns of ``cand`` conflict with column ``c``: no schedule holds both.

        Parameters
        ----------
        cand : ndarray of int, shape (m,)
            Column indices.
        c : int
            A column index.

        Returns
        -------
        ndarray of bool, shape (m,)
            True where the two columns are of the same single request (and differ), or of two
            requests whose runs overlap with more than ``M`` tokens in the round where the
            first completes (a class column with itself is never a conflict here).
        """
        same = self.unit[cand] == self.unit[c]
        overlap = (self.start[cand] < self.end[c]) & (self.start[c] < self.end[cand])
        first = self.end[cand] <= self.end[c]  # the candidate completes first
        over_c = self.peak[cand] + self.s[c] + (self.end[cand] - self.start[c]) > self.memory
        over_d = self.peak[c] + self.s[cand] + (self.end[c] - self.start[cand]) > self.memory
        pair = overlap & np.where(first, over_c, over_d)
        return np.where(same, self.single[cand] & (cand != c), pair)


def separate_conflict_cliques(
    mat: TimeIndexedMatrix, x: np.ndarray, max_cuts: int = 200, eps: float = 1e-6
) -> list[tuple[np.ndarray, int]]:
    """Violated clique cuts ``sum_{c in cols} x_c <= 1`` on the conflict graph of the starts.

    Two columns ``(i, k)`` and ``(j, k')`` *conflict* when no schedule holds both: the same
    request, or two requests whose runs overlap and whose memory in the round where the first
    of them completes is above ``M`` (``P_i + s_j + (k + o_i - k') > M`` when ``i`` completes
    first; SPEC section 3.1). Of a set of pairwise conflicting columns at most one is 1. Per
    round ``t``: the columns with LP mass running in ``t``, by mass, each kept when it
    conflicts with every column kept (a greedy clique); when its mass exceeds 1 it is extended
    by every other column running in ``t`` that conflicts with all of it (a stronger cut).

    Parameters
    ----------
    mat : TimeIndexedMatrix
    x : ndarray, shape (ncol,)
        An LP solution of ``mat``.
    max_cuts : int, default 200
        Keep the cliques of this many rounds, those whose LP mass is largest.
    eps : float, default 1e-6
        LP values below this count as zero.

    Returns
    -------
    list of (cols, rhs)
        Per cut, the lifted clique's columns (int32) and 1.

    Notes
    -----
    A column of a class of identical requests (values ``0..c``) joins a clique only when two of
    its members started together would overflow (``2 P > M``), so that its value counts
    members of which at most one may run. Source: ours (clique cuts on a conflict graph:
    Padberg 1973; the conflict test is SPEC section 3.1's pair argument).
    """
    cols = ColumnConflicts(mat)
    x = np.asarray(x, dtype=float)
    live = np.flatnonzero((x > eps) & cols.usable)
    found = []
    for t in range(1, mat.T + 1):
        run = live[(cols.start[live] < t) & (t <= cols.end[live])]
        if run.size < 2 or x[run].sum() <= 1.0 + eps:
            continue
        clique: list[int] = []
        cand = run[np.argsort(-x[run], kind="stable")]
        while cand.size:
            c = int(cand[0])
            clique.append(c)
            cand = cand[1:][cols.conflicts(cand[1:], c)]
        mass = float(x[clique].sum())
        if mass <= 1.0 + eps:
            continue
        # lift: every other column running in t that conflicts with the whole clique
        allrun = np.flatnonzero((cols.start < t) & (t <= cols.end) & cols.usable)
        for c in clique:
            allrun = allrun[cols.conflicts(allrun, c)]
        lifted = list(clique)
        while allrun.size:
            c = int(allrun[0])
            lifted.append(c)
            allrun = allrun[1:][cols.conflicts(allrun[1:], c)]
        found.append((mass, np.array(sorted(lifted), dtype=np.int32)))
    found.sort(key=lambda f: -f[0])
    return [(members, 1) for _, members in found[:max_cuts]]
