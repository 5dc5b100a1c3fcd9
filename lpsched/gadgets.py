"""Hard and adversarial instances: the 3-Partition gadget and families that defeat the baselines.

Two kinds of constructions, both offline (every ``a_i = 0``):

* **3-Partition gadget** (SPEC section 8, the NP-hardness proof of arXiv 2508.06133, section 3).
  A 3-Partition instance is ``3m`` integers ``a_j`` with ``B/4 < a_j < B/2`` and
  ``sum_j a_j = mB``; it is a *yes*-instance when the ``a_j`` split into ``m`` triples of sum
  ``B``. The reduction gives request ``j`` the prefill ``s_j = a_j`` and decode ``o_j = 1`` and
  sets ``M = B + 3``. Four requests never share a round (their ``sum (a_j + 1) >= B + 5``), so
  ``TEL >= 3 (1 + 2 + ... + m) = 3m(m+1)/2``, with equality iff rounds ``1..m`` each hold a
  triple of sum ``<= B``, i.e. (the total being ``mB``) of sum exactly ``B``: iff yes.
  :func:`three_partition_yes` plants ``m`` triples; :func:`three_partition_no` builds
  instances that an exact search (:func:`solve_three_partition`) or a residue argument proves
  to be no-instances; :func:`three_partition_instance` is the reduction.

* **Adversarial families** (ours, from the paper's intuition of section 3: a request with a long
  prefill and a short decode holds a lot of memory briefly; a short prefill with a long decode
  holds memory for a long time). For each of ``fcfs``, ``mcsf`` and ``size`` a family of
  instances parametrised by the budget ``M`` and an explicit good schedule, both TELs in closed
  form, so the ratio TEL(policy) / TEL(good) is known without a MIP at any ``M``; it grows like
  ``sqrt(M)``, while Sorted-F finds the good schedule on all three (ratio 1). Since
  ``TEL(good) >= OPT``, each ratio is a lower bound on the policy's true approximation ratio.
  See :data:`FAMILIES`.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cache

import numpy as np

from .instance import Instance
from .schedule import Schedule

__all__ = [
    "ThreePartition",
    "value_range",
    "tel_threshold",
    "solve_three_partition",
    "three_partition_yes",
    "three_partition_no",
    "three_partition_instance",
    "gadget",
    "partition_schedule",
    "Family",
    "FAMILIES",
    "fcfs_family",
    "mcsf_family",
    "size_family",
    "family_instance",
    "family_good_schedule",
    "family_tels",
    "family_ratio",
]

#: Largest ``m`` for which :func:`three_partition_no` tries random near-yes instances checked by
#: the exact search before it falls back to the residue construction.
NO_SEARCH_MAX_M = 8


# ==================================================================================== 3-Partition
@dataclass(frozen=True)
class ThreePartition:
    """A 3-Partition instance: ``3m`` integers ``a_j`` with ``B/4 < a_j < B/2``, sum ``mB``.

    Attributes
    ----------
    values : tuple of int, length 3m
        The integers ``a_j`` (they become the prefill lengths ``s_j``, in tokens).
    B : int
        The target sum of every triple.
    partition : tuple of tuple of int, or None
        For a yes-instance, ``m`` triples of positions into ``values`` with sum ``B`` each
        (the planted partition); ``None`` for a no-instance.
    certificate : str
        How the answer is known: ``"planted"`` (yes), ``"exact-search"`` (no, by
        :func:`solve_three_partition`) or ``"residues mod p"`` (no, every ``a_j`` has the same
        residue ``r`` modulo a prime ``p`` dividing ``m`` and ``3r != B (mod p)``, so no triple
        can sum to ``B``).
    seed : int or None
        Seed of the generator.

    Notes
    -----
    Source: SPEC section 8; Garey and Johnson (strong NP-completeness of 3-Partition).
    """

    values: tuple[int, ...]
    B: int
    partition: tuple[tuple[int, int, int], ...] | None
    certificate: str = "planted"
    seed: int | None = None

    @property
    def m(self) -> int:
        """Number of triples ``m = len(values) / 3``."""
        return len(self.values) // 3

    @property
    def is_yes(self) -> bool:
        """True for a yes-instance (a partition is known)."""
        return self.partition is not None


def value_range(B: int) -> tuple[int, int]:
    """The integers allowed in a 3-Partition instance with target ``B``.

    Parameters
    ----------
    B : int
        Target sum of a triple.

    Returns
    -------
    lo, hi : int
        ``a`` is allowed iff ``lo <= a <= hi``, i.e. ``B/4 < a < B/2``:
        ``lo = floor(B/4) + 1`` and ``hi = ceil(B/2) - 1``. Empty when ``lo > hi``.

    Notes
    -----
    Source: SPEC section 8.
    """
    return B // 4 + 1, (B - 1) // 2


def tel_threshold(m: int) -> int:
    """The TEL a schedule of the gadget reaches iff the 3-Partition instance is yes.

    Parameters
    ----------
    m : int
        Number of triples (the gadget has ``n = 3m`` requests).

    Returns
    -------
    int
        ``3m(m+1)/2`` rounds: three requests complete in each round ``1..m``.

    Notes
    -----
    Source: SPEC section 8 (arXiv 2508.06133, section 3).
    """
    return 3 * m * (m + 1) // 2


def _check_m_B(m: int, B: int) -> tuple[int, int]:
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 1:
        raise ValueError(f"m must be an integer >= 1, got {m!r}")
    if isinstance(B, bool) or not isinstance(B, (int, np.integer)):
        raise ValueError(f"B must be an integer, got {B!r}")
    lo, hi = value_range(int(B))
    if lo > hi or 3 * lo > B or 3 * hi < B:
        raise ValueError(
            f"B = {B} admits no triple of integers a with B/4 < a < B/2 and sum B "
            "(the smallest valid B are 6, 7, 9, 10, 11, ...)"
        )
    return int(m), int(B)


def solve_three_partition(values: Sequence[int], B: int) -> list[tuple[int, int, int]] | None:
    """Exact 3-Partition search: a split of ``values`` into triples of sum ``B``, or None.

    Parameters
    ----------
    values : sequence of int, length 3m
        The integers ``a_j`` (any values; the range ``B/4 < a_j < B/2`` is not required).
    B : int
        Target sum of every triple.

    Returns
    -------
    list of tuple of int, or None
        ``m`` triples of positions into ``values`` (each sorted, the list sorted), or None if
        no split exists (also when ``len(values)`` is not a multiple of 3 or the sum is not
        ``mB``).

    Notes
    -----
    Depth-first search over the multiset of remaining values: the largest remaining value
    ``x`` must be in some triple, so only the pairs ``y <= z <= x`` with ``y + z = B - x`` are
    tried; failed multisets are memoised. Exponential in ``m`` in the worst case, fast for
    ``m <= 10``. Source: ours.
    """
    vals = [int(v) for v in values]
    if len(vals) % 3 or sum(vals) != (len(vals) // 3) * B:
        return None
    distinct = sorted(set(vals))
    pos = {v: k for k, v in enumerate(distinct)}
    counts = [0] * len(distinct)
    for v in vals:
        counts[pos[v]] += 1

    @cache
    def search(state: tuple[int, ...]) -> tuple[tuple[int, int, int], ...] | None:
        top = max((k for k, c in enumerate(state) if c), default=-1)
        if top < 0:
            return ()
        x = distinct[top]
        cnt = list(state)
        cnt[top] -= 1
        rest = B - x
        for iy in range(top + 1):
            y = distinct[iy]
            z = rest - y
            if z < y:
                break
            iz = pos.get(z)
            if iz is None or iz > top:
                continue
            need = Counter((iy, iz))
            if any(cnt[k] < c for k, c in need.items()):
                continue
            nxt = cnt[:]
            for k, c in need.items():
                nxt[k] -= c
            sub = search(tuple(nxt))
            if sub is not None:
                return ((top, iy, iz),) + sub
        return None

    found = search(tuple(counts))
    if found is None:
        return None
    free: dict[int, list[int]] = {}
    for j, v in enumerate(vals):
        free.setdefault(v, []).append(j)
    triples = []
    for t in found:
        triples.append(tuple(sorted(free[distinct[k]].pop() for k in t)))
    return sorted(triples)


def _distinct_possible(m: int, B: int) -> bool:
    """Whether ``3m`` distinct values in ``(B/4, B/2)`` can sum to ``mB`` (necessary test)."""
    lo, hi = value_range(B)
    n = 3 * m
    if hi - lo + 1 < n:
        return False
    least = n * lo + n * (n - 1) // 2
    most = n * hi - n * (n - 1) // 2
    return least <= m * B <= most


def _random_triple(B: int, lo: int, hi: int, rng: np.random.Generator) -> tuple[int, int, int]:
    """Three integers in ``[lo, hi]`` with sum ``B`` (caller checked that one exists)."""
    x = int(rng.integers(max(lo, B - 2 * hi), min(hi, B - 2 * lo) + 1))
    y = int(rng.integers(max(lo, B - x - hi), min(hi, B - x - lo) + 1))
    return x, y, B - x - y


def three_partition_yes(
    m: int, B: int, *, seed: int = 0, distinct: bool = False, max_tries: int = 10_000
) -> ThreePartition:
    """A random 3-Partition yes-instance with its planted triples.

    Parameters
    ----------
    m : int
        Number of triples, ``>= 1``.
    B : int
        Target sum; every ``a_j`` satisfies ``B/4 < a_j < B/2``.
    seed : int
        Seed of ``numpy.random.default_rng``.
    distinct : bool, default False
        Require all ``3m`` values to be different.
    max_tries : int
        Restarts of the rejection sampling when ``distinct`` (200 draws per triple each).

    Returns
    -------
    ThreePartition
        ``values`` shuffled; ``partition`` the planted triples (positions into ``values``).

    Raises
    ------
    ValueError
        If ``m < 1``, if ``B`` admits no triple in range (e.g. ``B = 8``: only ``a = 3``), or
        if ``distinct`` and ``3m`` distinct allowed values cannot sum to ``mB`` (the message
        gives the least ``B`` that passes this test) or none were found in ``max_tries``
        restarts.

    Notes
    -----
    Each triple draws ``x`` uniformly among the values that leave a completable remainder,
    then ``y`` uniformly among those that complete it, ``z = B - x - y``. Source: ours.
    """
    m, B = _check_m_B(m, B)
    lo, hi = value_range(B)
    if distinct and not _distinct_possible(m, B):
        least = next(b for b in range(B + 1, 10 * B + 100) if _distinct_possible(m, b))
        raise ValueError(
            f"B = {B} is too small for 3m = {3 * m} distinct values in (B/4, B/2) with sum mB "
            f"(the {3 * m} smallest allowed values already sum to more, or there are too few); "
            f"use B >= {least} or distinct=False"
        )
    rng = np.random.default_rng(seed)
    vals: list[int] = []
    for _ in range(max_tries if distinct else 1):
        vals = []
        for _ in range(m):
            for _ in range(200 if distinct else 1):
                t = _random_triple(B, lo, hi, rng)
                if not distinct or (len(set(t)) == 3 and not set(t) & set(vals)):
                    vals.extend(t)
                    break
            else:
                break
        if len(vals) == 3 * m:
            break
    else:
        raise ValueError(
            f"found no {m} disjoint triples of distinct values in (B/4, B/2) summing to "
            f"B = {B} in {max_tries} attempts; use a larger B"
        )
    perm = rng.permutation(3 * m)
    values = [vals[k] for k in perm]
    where = np.argsort(perm)  # where[k] = new position of old value k
    partition = tuple(
        sorted(tuple(sorted(int(where[3 * t + u]) for u in range(3))) for t in range(m))
    )
    return ThreePartition(tuple(values), B, partition, "planted", seed)  # type: ignore[arg-type]


def _residue_no(m: int, B: int, rng: np.random.Generator, distinct: bool) -> list[int] | None:
    """Values all ``= r (mod p)`` for a prime ``p | m`` with ``3r != B (mod p)``, or None."""
    lo, hi = value_range(B)
    p = next(d for d in range(2, m + 1) if m % d == 0)  # smallest prime factor (m >= 2)
    for r in rng.permutation(p).tolist():
        if (3 * r - B) % p == 0:
            continue
        c0 = lo + (r - lo) % p  # smallest allowed value = r (mod p)
        if c0 > hi:
            continue
        U = (hi - c0) // p  # values c0 + p u, u in 0..U
        K = m * B - 3 * m * c0  # sum of p u over the 3m values
        if K % p:
            continue
        K //= p
        n = 3 * m
        if distinct:
            if U + 1 < n or not n * (n - 1) // 2 <= K <= n * U - n * (n - 1) // 2:
                continue
            u = list(range(n))
            K -= n * (n - 1) // 2
            # raise the largest first, keeping them distinct and <= U
            for k in range(n - 1, -1, -1):
                add = min(K, U - (n - 1 - k) - u[k])
                u[k] += add
                K -= add
        else:
            if not 0 <= K <= n * U:
                continue
            u = [K // n + (1 if k < K % n else 0) for k in range(n)]
            for _ in range(4 * n):  # random transfers keep the sum and the bounds
                i, j = rng.integers(n, size=2)
                d = int(rng.integers(0, min(u[i], U - u[j]) + 1)) if i != j else 0
                u[i] -= d
                u[j] += d
        return [c0 + p * x for x in rng.permutation(u).tolist()]
    return None


def three_partition_no(
    m: int, B: int, *, seed: int = 0, distinct: bool = False, max_tries: int = 2000
) -> ThreePartition:
    """A 3-Partition no-instance, proven by an exact search or by residues.

    Parameters
    ----------
    m : int
        Number of triples, ``>= 2`` (with ``m = 1`` every instance is yes).
    B : int
        Target sum; every ``a_j`` satisfies ``B/4 < a_j < B/2`` and ``sum a_j = mB``.
    seed : int
        Seed of ``numpy.random.default_rng``.
    distinct : bool, default False
        Require all ``3m`` values to be different.
    max_tries : int
        Steps of the random walk (candidates checked by the exact search) before the residue
        construction is tried.

    Returns
    -------
    ThreePartition
        ``partition`` is None; ``certificate`` says how no-ness was proven.

    Raises
    ------
    ValueError
        If ``m < 2``, ``B`` admits no triple in range, or no no-instance was found (some
        ``B`` admit none: with ``B = 12`` every value is 4 or 5 and the sum forces all 4s).

    Notes
    -----
    For ``m <= NO_SEARCH_MAX_M``: draw a yes-instance (:func:`three_partition_yes`), then walk
    by moving ``d`` from one value to another (staying in range, and distinct if asked; a new
    yes-instance every 50 steps) until :func:`solve_three_partition` finds no split:
    "near-yes" instances, the hard kind. Else, or
    if that fails, every value is drawn ``= r (mod p)`` for the smallest prime ``p`` dividing
    ``m`` and an ``r`` with ``3r != B (mod p)``: the sum ``3mr = mB (mod p)`` is consistent, yet
    no triple sums to ``B`` modulo ``p``. Source: ours.
    """
    m, B = _check_m_B(m, B)
    if m < 2:
        raise ValueError(
            "no-instances need m >= 2: three integers in (B/4, B/2) with sum B always form a triple"
        )
    lo, hi = value_range(B)
    rng = np.random.default_rng(seed)
    if m <= NO_SEARCH_MAX_M and hi > lo:
        vals: list[int] = []
        for step in range(max_tries):
            if step % 50 == 0:  # restart the walk from a fresh yes-instance
                vals = list(
                    three_partition_yes(
                        m, B, seed=int(rng.integers(2**31)), distinct=distinct
                    ).values
                )
            i, j = (int(x) for x in rng.choice(3 * m, size=2, replace=False))
            room = min(vals[i] - lo, hi - vals[j])
            if room <= 0:
                continue
            d = int(rng.integers(1, room + 1))
            if distinct and (vals[i] - d in vals or vals[j] + d in vals):
                continue
            vals[i] -= d
            vals[j] += d
            if solve_three_partition(vals, B) is None:
                return ThreePartition(tuple(vals), B, None, "exact-search", seed)
    vals = _residue_no(m, B, rng, distinct)
    if vals is None:
        raise ValueError(
            f"found no 3-Partition no-instance with m = {m}, B = {B}"
            + (" and distinct values" if distinct else "")
            + f": (B/4, B/2) = ({B / 4:g}, {B / 2:g}) leaves too little room; use a larger B"
        )
    return ThreePartition(tuple(vals), B, None, "residues mod p", seed)


def three_partition_instance(tp: ThreePartition, *, name: str | None = None) -> Instance:
    """The scheduling instance of the NP-hardness reduction (SPEC section 8).

    Parameters
    ----------
    tp : ThreePartition
        The 3-Partition instance (``3m`` values ``a_j``, target ``B``).
    name : str, optional
        Instance name; default ``"3partition-{yes|no}-m{m}-B{B}-s{seed}"``.

    Returns
    -------
    Instance
        ``n = 3m`` requests with ``s_j = a_j`` (tokens), ``o_j = 1``, ``a_j = 0`` and
        ``M = B + 3`` tokens. ``metadata`` holds ``source``, ``m``, ``B``, ``values``,
        ``yes``, ``tel_threshold`` (``3m(m+1)/2`` rounds), ``partition`` (the planted triples
        as lists of request positions, or None), ``certificate`` and ``seed``.

    Notes
    -----
    A round holds at most three requests: four hold ``sum (a_j + 1) > B + 4``. So
    ``TEL >= 3m(m+1)/2``, with equality iff rounds ``1..m`` each hold a triple with
    ``sum (a_j + 1) <= B + 3``, i.e. ``sum a_j = B``. Source: SPEC section 8
    (arXiv 2508.06133, section 3, Theorem on NP-hardness).
    """
    m = tp.m
    kind = "yes" if tp.is_yes else "no"
    label = name or f"3partition-{kind}-m{m}-B{tp.B}-s{tp.seed}"
    return Instance.from_arrays(
        list(tp.values),
        [1] * (3 * m),
        tp.B + 3,
        name=label,
        ids=[f"a{j}" for j in range(3 * m)],
        metadata={
            "source": "lpsched.gadgets.three_partition_instance (SPEC section 8)",
            "m": m,
            "B": tp.B,
            "values": list(tp.values),
            "yes": tp.is_yes,
            "tel_threshold": tel_threshold(m),
            "partition": None if tp.partition is None else [list(t) for t in tp.partition],
            "certificate": tp.certificate,
            "seed": tp.seed,
        },
    )


def gadget(
    m: int,
    B: int,
    *,
    yes: bool = True,
    seed: int = 0,
    distinct: bool = False,
    name: str | None = None,
) -> Instance:
    """A 3-Partition gadget instance in one call (what ``lpsched gadget three-partition`` runs).

    Parameters
    ----------
    m : int
        Number of triples (``n = 3m`` requests); ``>= 1`` for yes, ``>= 2`` for no.
    B : int
        Target sum; ``M = B + 3`` tokens.
    yes : bool
        A yes-instance (planted triples) or a no-instance.
    seed : int
        Seed.
    distinct : bool
        All ``a_j`` different.
    name : str, optional
        Instance name.

    Returns
    -------
    Instance
        See :func:`three_partition_instance`.

    Raises
    ------
    ValueError
        Bad ``m`` or ``B`` (see :func:`three_partition_yes`, :func:`three_partition_no`).

    Notes
    -----
    Source: SPEC section 8.
    """
    tp = (three_partition_yes if yes else three_partition_no)(m, B, seed=seed, distinct=distinct)
    return three_partition_instance(tp, name=name)


def partition_schedule(
    instance: Instance, partition: Sequence[Sequence[int]] | None = None
) -> Schedule:
    """The schedule that runs triple ``t`` of a partition in round ``t + 1``.

    Parameters
    ----------
    instance : Instance
        A gadget from :func:`three_partition_instance`.
    partition : sequence of triples of int, optional
        Request positions; default ``instance.metadata["partition"]``.

    Returns
    -------
    Schedule
        Starts ``p_j = t`` for the requests of triple ``t``; TEL ``3m(m+1)/2`` rounds. Feasible
        iff every triple has ``sum a_j <= B`` (check it with :meth:`Schedule.check`).

    Raises
    ------
    ValueError
        If no partition is given or stored, or it does not cover every request exactly once.

    Notes
    -----
    Source: SPEC section 8.
    """
    part = instance.metadata.get("partition") if partition is None else partition
    if part is None:
        raise ValueError(f"{instance.name}: no partition given or stored (a no-instance?)")
    start = np.full(instance.n, -1, dtype=np.int64)
    for t, triple in enumerate(part):
        for j in triple:
            if not 0 <= int(j) < instance.n or start[int(j)] >= 0:
                raise ValueError(
                    f"{instance.name}: request position {j} is out of range or in two triples"
                )
            start[int(j)] = t
    if (start < 0).any():
        raise ValueError(
            f"{instance.name}: the partition misses request "
            f"{instance.ids[int(np.flatnonzero(start < 0)[0])]}"
        )
    return Schedule(instance, start, policy="3-partition")


# ============================================================================ adversarial families
@dataclass(frozen=True)
class Family:
    """An adversarial family: instances ``I(M)``, a good schedule, both TELs in closed form.

    Attributes
    ----------
    name : str
        Family name (``fcfs``, ``mcsf``, ``size``: the policy it defeats).
    policy : str
        The registry name of the policy it defeats.
    build : callable
        ``build(M) -> Instance`` with ``metadata["good_start"]`` (the good schedule's starts).
    tels : callable
        ``tels(M) -> (TEL(policy), TEL(good))``, closed forms in rounds.
    min_memory : int
        Smallest ``M`` accepted.
    description : str
        One line for tables and plots.

    Notes
    -----
    Source: ours (see :func:`fcfs_family`, :func:`mcsf_family`, :func:`size_family`).
    """

    name: str
    policy: str
    build: Callable[[int], Instance]
    tels: Callable[[int], tuple[int, int]]
    min_memory: int
    description: str


def _check_memory(M: int, least: int, family: str) -> int:
    if isinstance(M, bool) or not isinstance(M, (int, np.integer)) or M < least:
        raise ValueError(f"the {family} family needs an integer memory M >= {least}, got {M!r}")
    return int(M)


def _fcfs_params(M: int) -> tuple[int, int]:
    L = math.isqrt(M)
    return L, M // L


def fcfs_family(M: int) -> Instance:
    """The FCFS family: one long request at the head of the queue, one round of short ones behind.

    Parameters
    ----------
    M : int
        KV-cache budget in tokens, ``>= 2``.

    Returns
    -------
    Instance
        With ``L = floor(sqrt(M))`` and ``q = floor(M / L)``: request 0 is the *blocker*
        ``s_0 = M - L``, ``o_0 = L``; requests ``1..q`` are *short*: ``s_i = L - 1``,
        ``o_i = 1`` (size ``L``). ``n = q + 1``. ``metadata["good_start"]``: the shorts at round
        0, the blocker at round 1.

    Notes
    -----
    The blocker holds ``M - L + j`` tokens in its ``j``-th round, so a short request (``L``
    tokens) never runs beside it; ``q`` shorts fit in one round (``qL <= M``).

    * FCFS (request order) starts the blocker at 0 and every short at ``L``:
      ``TEL(fcfs) = L + q (L + 1)``.
    * Good schedule, shorts at 0 and blocker at 1: ``TEL(good) = q + L + 1``. It is optimal:
      if a short runs after the blocker it alone costs ``>= L + 1``.
    * Ratio ``(L + q(L + 1)) / (q + L + 1) ~ sqrt(M) / 2`` (``q ~ L ~ sqrt(M)``).

    MC-SF, size and Sorted-F (``F(shorts) = 1/q < F(blocker) = L``) all find the good schedule
    for ``L >= 2``. Source: ours (arXiv 2508.06133, section 3 intuition: FCFS lets a request
    that holds memory for long go first).
    """
    M = _check_memory(M, 2, "fcfs")
    L, q = _fcfs_params(M)
    return Instance.from_arrays(
        [M - L] + [L - 1] * q,
        [L] + [1] * q,
        M,
        name=f"family-fcfs-M{M}",
        ids=["blocker"] + [f"short{i}" for i in range(q)],
        metadata={
            "source": "lpsched.gadgets.fcfs_family",
            "family": "fcfs",
            "M": M,
            "L": L,
            "q": q,
            "good_start": [1] + [0] * q,
        },
    )


def _fcfs_tels(M: int) -> tuple[int, int]:
    M = _check_memory(M, 2, "fcfs")
    L, q = _fcfs_params(M)
    return L + q * (L + 1), q + L + 1


def _mcsf_params(M: int) -> tuple[int, int]:
    return M // 2, math.isqrt(2 * M)


def mcsf_family(M: int) -> Instance:
    """The MC-SF family: memory-filling one-token requests ahead of one round of cheap ones.

    Parameters
    ----------
    M : int
        KV-cache budget in tokens, ``>= 4`` (below, MC-SF beats the "good" schedule).

    Returns
    -------
    Instance
        With ``q = floor(M / 2)`` and ``k = floor(sqrt(2M))``: requests ``0..q-1`` are *light*
        (``s_i = 0``, ``o_i = 2``), requests ``q..q+k-1`` are *heavy* (``s_i = M - 1``,
        ``o_i = 1``: a long prefill, a short decode). ``n = q + k``. ``metadata["good_start"]``:
        the lights at 0, heavy ``h`` at ``2 + h``.

    Notes
    -----
    A heavy request holds all ``M`` tokens in its round, so it runs alone; the ``q`` lights
    together hold ``2q <= M`` in their second round.

    * MC-SF (shortest ``o_i`` first) runs the heavies in rounds ``1..k`` and then the lights in
      rounds ``k+1, k+2``: ``TEL(mcsf) = k(k+1)/2 + q (k + 2)``.
    * Good schedule, lights first (done at round 2), heavies at rounds ``3..k+2``:
      ``TEL(good) = 2q + 2k + k(k+1)/2``.
    * Ratio ``(k(k+1)/2 + q(k+2)) / (2q + 2k + k(k+1)/2) ~ sqrt(M/2) / 2``; ``k = sqrt(2M)``
      maximises the leading term ``qk / (2q + k^2/2)``. The good schedule is optimal for
      ``4 <= M <= 16`` (checked by the exact solver in the tests); in general
      ``TEL(good) >= OPT`` is all the ratio needs.

    FCFS (lights first by index), size and Sorted-F (``F(lights) = 2/q < F(heavy) = 1``) find
    the good schedule. Source: ours (arXiv 2508.06133, section 3 intuition: a long prefill with
    a short decode holds a lot of memory briefly, and MC-SF looks at ``o_i`` only).
    """
    M = _check_memory(M, 4, "mcsf")
    q, k = _mcsf_params(M)
    return Instance.from_arrays(
        [0] * q + [M - 1] * k,
        [2] * q + [1] * k,
        M,
        name=f"family-mcsf-M{M}",
        ids=[f"light{i}" for i in range(q)] + [f"heavy{h}" for h in range(k)],
        metadata={
            "source": "lpsched.gadgets.mcsf_family",
            "family": "mcsf",
            "M": M,
            "q": q,
            "k": k,
            "good_start": [0] * q + [2 + h for h in range(k)],
        },
    )


def _mcsf_tels(M: int) -> tuple[int, int]:
    M = _check_memory(M, 4, "mcsf")
    q, k = _mcsf_params(M)
    tri = k * (k + 1) // 2
    return tri + q * (k + 2), 2 * q + 2 * k + tri


def _size_params(M: int) -> tuple[int, int]:
    L = M - 1
    return L, math.isqrt(2 * L)


def size_family(M: int) -> Instance:
    """The size family: a small-footprint, long-decode request ahead of full-memory short ones.

    Parameters
    ----------
    M : int
        KV-cache budget in tokens, ``>= 2``.

    Returns
    -------
    Instance
        With ``L = M - 1`` and ``r = floor(sqrt(2L))``: requests ``0..r-1`` are *full*
        (``s_i = M - 1``, ``o_i = 1``, size ``M``), request ``r`` is *long* (``s_r = 0``,
        ``o_r = L``, size ``M - 1``: a short prefill, a long decode). ``n = r + 1``.
        ``metadata["good_start"]``: full request ``i`` at round ``i``, the long one at ``r``.

    Notes
    -----
    A full request holds ``M`` tokens in its round and the long one holds ``j >= 1`` in its
    ``j``-th round, so no two requests ever share a round.

    * Size priority (smallest ``s_i + o_i`` first) starts the long request at 0 and the full
      ones at ``L, L+1, ...``: ``TEL(size) = L + rL + r(r+1)/2``.
    * Good schedule, full ones first: ``TEL(good) = r(r+1)/2 + r + L``. It is optimal: rounds
      are exclusive, and putting the long request before ``j`` full ones costs ``j (L - 1)``.
    * Ratio ``(L + rL + r(r+1)/2) / (r(r+1)/2 + r + L) ~ sqrt(M/2)``.

    FCFS (full ones first by index), MC-SF (``o = 1`` first) and Sorted-F (``F = 1`` against
    ``L``) find the good schedule. Source: ours (arXiv 2508.06133, section 3 intuition: a short
    prefill with a long decode holds memory for a long time, yet its size ``s_i + o_i`` is
    small).
    """
    M = _check_memory(M, 2, "size")
    L, r = _size_params(M)
    return Instance.from_arrays(
        [M - 1] * r + [0],
        [1] * r + [L],
        M,
        name=f"family-size-M{M}",
        ids=[f"full{i}" for i in range(r)] + ["long"],
        metadata={
            "source": "lpsched.gadgets.size_family",
            "family": "size",
            "M": M,
            "L": L,
            "r": r,
            "good_start": list(range(r)) + [r],
        },
    )


def _size_tels(M: int) -> tuple[int, int]:
    M = _check_memory(M, 2, "size")
    L, r = _size_params(M)
    tri = r * (r + 1) // 2
    return L + r * L + tri, tri + r + L


#: The three families, by the name of the policy each defeats.
FAMILIES: dict[str, Family] = {
    "fcfs": Family(
        "fcfs",
        "fcfs",
        fcfs_family,
        _fcfs_tels,
        2,
        "one long blocker ahead of a round of short requests",
    ),
    "mcsf": Family(
        "mcsf",
        "mcsf",
        mcsf_family,
        _mcsf_tels,
        4,
        "full-memory one-token requests ahead of a round of light ones",
    ),
    "size": Family(
        "size",
        "size",
        size_family,
        _size_tels,
        2,
        "a small long-decode request ahead of full-memory one-token ones",
    ),
}


def _family(name: str) -> Family:
    if name not in FAMILIES:
        raise ValueError(f"unknown family {name!r}; choose from {', '.join(FAMILIES)}")
    return FAMILIES[name]


def family_instance(name: str, M: int) -> Instance:
    """The instance ``I(M)`` of family ``name`` (``fcfs``, ``mcsf`` or ``size``).

    Raises
    ------
    ValueError
        Unknown family or ``M`` below its minimum. Source: ours (see :data:`FAMILIES`).
    """
    return _family(name).build(M)


def family_good_schedule(instance: Instance) -> Schedule:
    """The explicit good schedule stored in a family instance's ``metadata["good_start"]``.

    Returns
    -------
    Schedule
        Feasible (checked); its TEL is the closed form ``tels(M)[1]`` (rounds).

    Raises
    ------
    ValueError
        If the instance carries no ``good_start``. Source: ours.
    """
    starts = instance.metadata.get("good_start")
    if starts is None:
        raise ValueError(f"{instance.name}: no 'good_start' in the metadata")
    return Schedule(instance, np.asarray(starts, dtype=np.int64), policy="good").check()


def family_tels(name: str, M: int) -> tuple[int, int]:
    """Closed forms ``(TEL(policy), TEL(good))`` in rounds for family ``name`` at budget ``M``.

    No instance is built, so any ``M`` works (e.g. ``10**12``). Raises ``ValueError`` as
    :func:`family_instance`. Source: ours (formulas in the family docstrings).
    """
    return _family(name).tels(M)


def family_ratio(name: str, M: int) -> Fraction:
    """Exact ratio ``TEL(policy) / TEL(good)`` of family ``name`` at budget ``M``.

    A lower bound on the policy's approximation ratio on ``I(M)`` (``TEL(good) >= OPT``).
    Raises ``ValueError`` as :func:`family_instance`. Source: ours.
    """
    h, g = family_tels(name, M)
    return Fraction(h, g)
