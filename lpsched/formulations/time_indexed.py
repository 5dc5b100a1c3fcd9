"""The time-indexed MIP of SPEC section 3 and its LP relaxation, in two builds of one model.

Model (names as in ``models/README.md``)::

    sets        I   requests i = 0 .. n-1
                R   rounds t = 1 .. T
                IK  start pairs (i, k), k in K_i = {a_i, ..., hi_i}, hi_i <= T - o_i
    parameters  s[i], o[i], a[i]   prefill, decode (tokens) and arrival (round) of request i
                M                  KV-cache budget (tokens)
                T                  horizon (rounds)
    variables   x[i,k] in {0,1}    request i starts at round k  ([0,1] when relaxed)
    objective   tel     = sum_{(i,k) in IK} (k + o[i] - a[i]) x[i,k]
    constraints assign[i]:  sum_{k in K_i} x[i,k] = 1                                  i in I
                memory[t]:  sum_i sum_{k in K_i, t - o[i] <= k <= t - 1} (s[i] + t - k) x[i,k] <= M
                                                                                       t in R

Two builds, tested to agree:

* :func:`build_model` -- the Pyomo model, written constraint family by constraint family
  (``add_sets`` / ``add_parameters`` / ``add_variables`` / ``add_assign`` / ``add_memory`` /
  ``add_objective``), the reference and the source of the ``models/`` files and LP/MPS export;
* :func:`time_indexed_matrix` -- the same rows and columns as numpy arrays (column-wise sparse
  matrix), built in O(nnz) vectorised time, fed to HiGHS and CP-SAT (:mod:`lpsched.solvers`);
  the build times of both are measured in ``benchmarks/bench_exact.py`` (README).

The matrix build can also *aggregate identical requests* (same ``s_i, o_i, a_i``): one integer
column ``y[g,k] in {0..c_g}`` per class ``g`` of ``c_g`` requests replaces the ``c_g`` binary
columns, ``assign[g]`` reads ``sum_k y[g,k] = c_g``. Every schedule maps to a ``y`` with the same
TEL and memory, and every integer ``y`` to a schedule (give the class's starts to its members in
index order), so the optimum is unchanged; the LP value is unchanged too (average the ``x`` of a
class). It removes the symmetry between identical requests (ours).

Source: SPEC section 3 (the hindsight integer program of Jaillet et al., arXiv 2502.07115, with
``s`` replaced by ``s_i``, as in arXiv 2508.06133 section 5).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..instance import Instance
from .horizon import Horizon, start_windows

__all__ = [
    "TimeIndexedMatrix",
    "time_indexed_matrix",
    "resolve_horizon",
    "build_model",
    "add_sets",
    "add_parameters",
    "add_variables",
    "add_assign",
    "add_memory",
    "add_objective",
    "matrix_size",
    "units_of",
    "starts_from_pyomo",
]


def resolve_horizon(
    instance: Instance, horizon: int | Horizon, slack: int | None = None
) -> tuple[int, int | None]:
    """``(T, slack)`` for a builder's ``horizon`` argument.

    A :class:`Horizon` (:func:`~lpsched.formulations.horizon.tight_horizon`: ``min(T1, T2)``
    and the waiting slack ``UB - sum o``) -> its ``T`` and ``slack``; an int ``T`` ->
    ``(T, slack)`` as given (no windows unless ``slack`` is given). Raises
    :class:`HorizonError` when ``T < max_i (a_i + o_i)``. Source: ours.
    """
    if isinstance(horizon, Horizon):
        return horizon.T, horizon.slack if slack is None else slack
    T = int(horizon)
    start_windows(instance, T, slack)  # raises HorizonError on an empty window
    return T, slack


# =========================================================================== matrix build


@dataclass(frozen=True, eq=False)
class TimeIndexedMatrix:
    """The time-indexed model as arrays: columns ``(unit, start)``, rows ``assign`` then
    ``memory``; a unit is a request, or a class of identical requests when aggregated.

    Attributes
    ----------
    instance : Instance
    T : int
        Horizon (rounds).
    slack : int or None
        Waiting budget used for the start windows (rounds), None for plain ``K_i``.
    members : list of ndarray of int64
        ``members[u]`` = request indices of unit ``u`` (ascending); length ``U``.
    count : ndarray of int64, shape (U,)
        ``c_u = len(members[u])`` (1 for every unit when not aggregated).
    lo, hi : ndarray of int64, shape (U,)
        Start window of each unit (rounds).
    col_unit, col_start : ndarray of int64, shape (ncol,)
        The unit and start round ``k`` of each column.
    cost : ndarray of float64, shape (ncol,)
        Objective coefficient ``k + o - a`` (rounds).
    indptr : ndarray of int64, shape (ncol + 1,)
    index : ndarray of int32, shape (nnz,)
        Row of each entry: ``u`` for ``assign[u]``, ``U + t - 1`` for ``memory[t]``.
    value : ndarray of float64, shape (nnz,)
        1 in ``assign``, ``s + t - k`` (tokens) in ``memory``.
    row_lower, row_upper : ndarray of float64, shape (U + T,)
        ``c_u`` for ``assign`` rows; ``(-inf, M]`` for ``memory`` rows.
    aggregated : bool
    """

    instance: Instance
    T: int
    slack: int | None
    members: list[np.ndarray]
    count: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    col_unit: np.ndarray
    col_start: np.ndarray
    cost: np.ndarray
    indptr: np.ndarray
    index: np.ndarray
    value: np.ndarray
    row_lower: np.ndarray
    row_upper: np.ndarray
    aggregated: bool

    @property
    def ncol(self) -> int:
        """Number of columns (``|IK|``, or class-start pairs when aggregated)."""
        return int(self.col_unit.size)

    @property
    def nrow(self) -> int:
        """Number of rows ``U + T``."""
        return int(self.row_lower.size)

    @property
    def nnz(self) -> int:
        """Number of non-zeros of the constraint matrix."""
        return int(self.value.size)

    @property
    def n_units(self) -> int:
        """``U``: requests, or classes of identical requests."""
        return int(self.count.size)

    def unit_of(self) -> np.ndarray:
        """Unit of every request, shape (n,)."""
        out = np.empty(self.instance.n, dtype=np.int64)
        for u, mem in enumerate(self.members):
            out[mem] = u
        return out

    def column(self, unit: int, start: int) -> int:
        """Column index of ``(unit, start)``. Raises ``KeyError`` outside the window."""
        if not self.lo[unit] <= start <= self.hi[unit]:
            raise KeyError((unit, start))
        first = int(np.searchsorted(self.col_unit, unit, side="left"))
        return first + int(start - self.lo[unit])

    def fits(self, start: np.ndarray) -> bool:
        """True iff every start ``p_i`` lies in its window (so the schedule is a column set)."""
        u = self.unit_of()
        start = np.asarray(start)
        return bool(np.all((start >= self.lo[u]) & (start <= self.hi[u])))

    def values_from_starts(self, start: np.ndarray) -> np.ndarray:
        """Column values ``x`` (or class counts ``y``) of a schedule, shape (ncol,).

        Raises ``KeyError`` if a start lies outside its window (see :meth:`fits`).
        """
        x = np.zeros(self.ncol)
        for i, u in enumerate(self.unit_of().tolist()):
            x[self.column(u, int(start[i]))] += 1.0
        return x

    def starts_from_values(self, x: np.ndarray) -> np.ndarray:
        """Starts ``p_i`` (shape (n,)) from an integer solution: class members get the class's
        starts in ascending order of index. Values are rounded to the nearest integer."""
        counts = np.rint(np.asarray(x)).astype(np.int64)
        start = np.empty(self.instance.n, dtype=np.int64)
        for u, mem in enumerate(self.members):
            sl = slice(*np.searchsorted(self.col_unit, [u, u + 1]))
            starts = np.repeat(self.col_start[sl], counts[sl])
            if starts.size != mem.size:
                raise ValueError(f"unit {u}: {starts.size} starts for {mem.size} requests")
            start[mem] = starts
        return start

    def fractional_completion(self, x: np.ndarray) -> np.ndarray:
        """``sum_k (k + o_i) x_{i,k}`` per request (rounds), shape (n,), from an LP solution;
        members of a class share the class average ``sum_k (k + o) y_k / c``."""
        x = np.asarray(x, dtype=float)
        o = self.instance.decode[[int(m[0]) for m in self.members]]
        comp = (
            np.bincount(
                self.col_unit,
                weights=(self.col_start + o[self.col_unit]) * x,
                minlength=self.n_units,
            )
            / self.count
        )
        out = np.empty(self.instance.n)
        for u, mem in enumerate(self.members):
            out[mem] = comp[u]
        return out


def units_of(instance: Instance, aggregate: bool) -> list[np.ndarray]:
    """The classes of identical requests (same ``s_i``, ``o_i``, ``a_i``), in order of their
    first member: a list of int64 arrays of request indices (one request each without
    ``aggregate``). Source: ours."""
    n = instance.n
    if not aggregate:
        return [np.array([i], dtype=np.int64) for i in range(n)]
    keys = np.stack([instance.prefill, instance.decode, instance.arrival], axis=1)
    _, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    order = np.argsort(first, kind="stable")  # classes in order of their first member
    return [np.flatnonzero(inverse == g) for g in order]


def matrix_size(instance: Instance, horizon: int, slack: int | None = None) -> tuple[int, int]:
    """``(columns, non-zeros)`` of the time-indexed model without building it (O(n)).

    Used to decide whether the LP relaxation is affordable
    (:func:`lpsched.certify.best_bound`). Source: ours.
    """
    lo, hi = start_windows(instance, horizon, slack)
    width = hi - lo + 1
    return int(width.sum()), int((width * (instance.decode + 1)).sum())


def time_indexed_matrix(
    instance: Instance,
    horizon: int | Horizon,
    *,
    slack: int | None = None,
    aggregate: bool = False,
) -> TimeIndexedMatrix:
    """Build the time-indexed model of SPEC section 3 as a column-wise sparse matrix.

    Parameters
    ----------
    instance : Instance
    horizon : int or Horizon
        See :func:`resolve_horizon` (a :class:`Horizon`: ``min(T1, T2)`` with start windows).
    slack : int, optional
        Waiting budget for the start windows (rounds), see :func:`.start_windows`.
    aggregate : bool, default False
        One integer column per class of identical requests and start (module docstring).

    Returns
    -------
    TimeIndexedMatrix
        Columns sorted by unit then start; rows ``assign`` (U) then ``memory`` (T).

    Raises
    ------
    HorizonError
        If the horizon leaves some request no start.

    Notes
    -----
    O(nnz) time and memory, ``nnz = sum_i |K_i| (o_i + 1)``. Source: SPEC section 3; the
    vectorised build and the aggregation are ours.
    """
    T, slack = resolve_horizon(instance, horizon, slack)
    members = units_of(instance, aggregate)
    first = np.array([int(m[0]) for m in members], dtype=np.int64)
    count = np.array([m.size for m in members], dtype=np.int64)
    lo_r, hi_r = start_windows(instance, T, slack)
    lo, hi = lo_r[first], hi_r[first]
    s = instance.prefill[first]
    o = instance.decode[first]
    a = instance.arrival[first]
    U = first.size
    width = hi - lo + 1
    ncol = int(width.sum())
    col_unit = np.repeat(np.arange(U, dtype=np.int64), width)
    col_off = np.concatenate(([0], np.cumsum(width)[:-1]))
    col_start = lo[col_unit] + (np.arange(ncol, dtype=np.int64) - col_off[col_unit])
    cost = (col_start + o[col_unit] - a[col_unit]).astype(np.float64)
    col_o = o[col_unit]
    col_len = col_o + 1
    indptr = np.concatenate(([0], np.cumsum(col_len))).astype(np.int64)
    nnz = int(indptr[-1])
    pos = np.arange(nnz, dtype=np.int64) - np.repeat(indptr[:-1], col_len)  # 0 = assign row
    col_of_entry = np.repeat(np.arange(ncol, dtype=np.int64), col_len)
    # memory entries: pos j = 1..o is round t = k + j, coefficient s + j
    index = np.where(
        pos == 0, col_unit[col_of_entry], U + col_start[col_of_entry] + pos - 1
    ).astype(np.int32)
    value = np.where(pos == 0, 1.0, (s[col_unit][col_of_entry] + pos).astype(np.float64))
    row_lower = np.concatenate((count.astype(np.float64), np.full(T, -np.inf)))
    row_upper = np.concatenate((count.astype(np.float64), np.full(T, float(instance.memory))))
    return TimeIndexedMatrix(
        instance=instance,
        T=T,
        slack=slack,
        members=members,
        count=count,
        lo=lo,
        hi=hi,
        col_unit=col_unit,
        col_start=col_start,
        cost=cost,
        indptr=indptr,
        index=index,
        value=value,
        row_lower=row_lower,
        row_upper=row_upper,
        aggregated=aggregate,
    )


# =========================================================================== Pyomo build


def add_sets(m, instance: Instance, T: int, lo: np.ndarray, hi: np.ndarray) -> None:
    """Sets ``I`` (requests), ``R`` (rounds ``1..T``) and ``IK`` (pairs ``(i, k)``,
    ``k in K_i = {lo_i .. hi_i}``). Source: SPEC section 3."""
    import pyomo.environ as pyo

    m.I = pyo.Set(initialize=range(instance.n), ordered=True, doc="requests i")
    m.R = pyo.RangeSet(1, T, doc="rounds t = 1..T")
    m.IK = pyo.Set(
        dimen=2,
        ordered=True,
        doc="start pairs (i, k), k in K_i",
        initialize=[(i, k) for i in range(instance.n) for k in range(int(lo[i]), int(hi[i]) + 1)],
    )


def add_parameters(m, instance: Instance, T: int) -> None:
    """Parameters ``s[i]``, ``o[i]``, ``a[i]`` (tokens, tokens, round), ``M`` (tokens) and
    ``T`` (rounds). Source: SPEC sections 1 and 3."""
    import pyomo.environ as pyo

    m.s = pyo.Param(
        m.I,
        initialize=dict(enumerate(instance.prefill.tolist())),
        doc="prefill length s_i (tokens)",
    )
    m.o = pyo.Param(
        m.I,
        initialize=dict(enumerate(instance.decode.tolist())),
        doc="decode length o_i (tokens = rounds)",
    )
    m.a = pyo.Param(
        m.I, initialize=dict(enumerate(instance.arrival.tolist())), doc="arrival round a_i"
    )
    m.M = pyo.Param(initialize=instance.memory, doc="KV-cache budget M (tokens)")
    m.T = pyo.Param(initialize=T, doc="horizon T (rounds)")


def add_variables(m, relax: bool) -> None:
    """Variables ``x[i,k]``: binary, or in ``[0, 1]`` for the LP relaxation."""
    import pyomo.environ as pyo

    m.x = pyo.Var(
        m.IK,
        within=pyo.UnitInterval if relax else pyo.Binary,
        doc="x[i,k] = 1 iff request i starts at round k",
    )


def add_assign(m) -> None:
    """``assign[i]``: every request starts exactly once, ``sum_k x[i,k] = 1``."""
    import pyomo.environ as pyo

    starts: dict[int, list[int]] = {i: [] for i in m.I}
    for i, k in m.IK:
        starts[i].append(k)

    def rule(m, i):
        return pyo.quicksum(m.x[i, k] for k in starts[i]) == 1

    m.assign = pyo.Constraint(m.I, rule=rule, doc="each request starts once")


def add_memory(m) -> None:
    """``memory[t]``: KV cache in round ``t`` at most ``M``,
    ``sum_i sum_{t - o_i <= k <= t - 1} (s_i + t - k) x[i,k] <= M`` (SPEC section 3).

    Rounds no request can occupy are skipped."""
    import pyomo.environ as pyo

    windows: dict[int, tuple[int, int]] = {}
    for i, k in m.IK:
        lo, hi = windows.get(i, (k, k))
        windows[i] = (min(lo, k), max(hi, k))
    s, o = {i: pyo.value(m.s[i]) for i in m.I}, {i: pyo.value(m.o[i]) for i in m.I}

    def rule(m, t):
        terms = [
            (s[i] + t - k) * m.x[i, k]
            for i, (lo, hi) in windows.items()
            for k in range(max(lo, t - o[i]), min(hi, t - 1) + 1)
        ]
        if not terms:
            return pyo.Constraint.Skip
        return pyo.quicksum(terms) <= m.M

    m.memory = pyo.Constraint(m.R, rule=rule, doc="KV-cache memory in round t <= M")


def add_objective(m) -> None:
    """``tel``: minimise the total end-to-end latency ``sum (k + o_i - a_i) x[i,k]``."""
    import pyomo.environ as pyo

    m.tel = pyo.Objective(
        expr=pyo.quicksum((k + m.o[i] - m.a[i]) * m.x[i, k] for i, k in m.IK),
        sense=pyo.minimize,
        doc="total end-to-end latency TEL (rounds)",
    )


def build_model(
    instance: Instance,
    horizon: int | Horizon,
    *,
    relax: bool = False,
    slack: int | None = None,
):
    """The Pyomo time-indexed MIP of SPEC section 3 (``relax=True``: its LP relaxation).

    Parameters
    ----------
    instance : Instance
        Requests ``(s_i, o_i, a_i)`` and budget ``M``.
    horizon : int or Horizon
        A :class:`Horizon` (:func:`~lpsched.formulations.horizon.tight_horizon`) gives
        ``min(T1, T2)`` with the start windows of the waiting slack. An int ``T`` gives the
        plain windows ``K_i = {a_i .. T - o_i}`` (unless ``slack`` is given); this builder does
        not check that ``T`` is large enough to hold an optimal schedule
        (:func:`lpsched.certify.exact_horizon` does).
    relax : bool, default False
        ``x`` in ``[0, 1]`` instead of binary: the LP relaxation of the same model.
    slack : int, optional
        Waiting budget ``UB - sum o`` for the start windows.

    Returns
    -------
    pyomo.environ.ConcreteModel
        Components ``I, R, IK, s, o, a, M, T, x, assign, memory, tel`` as in
        ``models/README.md``.

    Raises
    ------
    HorizonError
        If ``T < a_i + o_i`` for some request (no schedule fits).

    Notes
    -----
    Source: SPEC section 3 (Jaillet et al., arXiv 2502.07115; arXiv 2508.06133 section 5).
    Construction is O(n T + nnz) Python work (measured in ``benchmarks/bench_exact.py``); use
    :func:`time_indexed_matrix` for large instances.
    """
    import pyomo.environ as pyo

    T, slack = resolve_horizon(instance, horizon, slack)
    lo, hi = start_windows(instance, T, slack)
    m = pyo.ConcreteModel(name=f"time_indexed_{instance.name}" + ("_lp" if relax else ""))
    add_sets(m, instance, T, lo, hi)
    add_parameters(m, instance, T)
    add_variables(m, relax)
    add_assign(m)
    add_memory(m)
    add_objective(m)
    return m


def starts_from_pyomo(m) -> np.ndarray:
    """Starts ``p_i`` (shape (n,)) read from a solved integer Pyomo model ``m``."""
    import pyomo.environ as pyo

    start = np.full(len(m.I), -1, dtype=np.int64)
    for (i, k), v in m.x.items():
        if pyo.value(v, exception=False) is not None and pyo.value(v) > 0.5:
            start[i] = k
    if (start < 0).any():
        raise ValueError("the Pyomo model holds no integer solution")
    return start
