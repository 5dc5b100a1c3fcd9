"""The 3-Partition gadget of the NP-hardness proof (SPEC section 8; arXiv 2508.06133, section 3).

A 3-Partition instance is ``3m`` integers ``a_j`` with ``B/4 < a_j < B/2`` and
``sum_j a_j = mB``; it is a *yes*-instance when the ``a_j`` split into ``m`` triples of sum
``B``. The reduction gives request ``j`` the prefill ``s_j = a_j`` and decode ``o_j = 1`` and
sets ``M = B + 3``. Four requests never share a round (their ``sum (a_j + 1) >= B + 5``), so
``TEL >= 3 (1 + 2 + ... + m) = 3m(m+1)/2``, with equality iff rounds ``1..m`` each hold a
triple of sum ``<= B``, i.e. (the total being ``mB``) of sum exactly ``B``: iff yes.
:func:`three_partition_yes` plants ``m`` triples; :func:`three_partition_no` builds
instances that an exact search (:func:`solve_three_partition`) or a residue argument proves
to be no-instances; :func:`three_partition_instance` is the reduction. Every instance is
offline (all ``a_i = 0``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from ..instance import Instance, quote
from ..schedule import Schedule

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
]

#: Largest ``m`` for which :func:`three_partition_no` tries random near-yes instances checked by
#: the exact search before it falls back to the residue construction.
NO_SEARCH_MAX_M = 8


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
    triples: list[tuple[int, int, int]] = []
    for t in found:
        a, b, c = sorted(free[distinct[k]].pop() for k in t)
        triples.append((a, b, c))
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


def _magic_triples(k: int, a: int, y: int, z: int) -> list[tuple[int, int, int]]:
    """``k`` (odd) triples ``(a + i, y + sigma(i), z + tau(i))`` of equal sum
    ``a + y + z + 3(k-1)/2``: ``sigma(i) = (i + (k-1)/2) mod k`` and
    ``tau(i) = 3(k-1)/2 - i - sigma(i)`` are permutations of ``0..k-1`` (``i + sigma(i)`` runs
    through ``(k-1)/2 .. 3(k-1)/2``), so each block ``[a, a+k)``, ``[y, y+k)``, ``[z, z+k)`` is
    used once. Source: ours (a standard magic-triple construction)."""
    h = (k - 1) // 2
    return [(a + i, y + (i + h) % k, z + 3 * h - i - (i + h) % k) for i in range(k)]


def _planted_distinct(m: int, B: int) -> list[tuple[int, int, int]] | None:
    """``m`` disjoint triples of distinct values in ``(B/4, B/2)``, each of sum ``B``, or None.

    Odd ``m``: the triples of :func:`_magic_triples` with blocks ``[A, A+m)``, ``[Y, Y+m)``,
    ``[Z, Z+m)`` placed apart in ``[lo, hi]`` so that ``A + Y + Z + 3(m-1)/2 = B``; it needs
    ``3 lo + 3m + 3(m-1)/2 <= B``, exactly the least sum of ``3m`` distinct values (tight).
    Even ``m = k + 1``: ``k`` magic triples and one more, laid out
    ``x, [A, A+k), y, [Y, Y+k), ..., [Z, Z+k), ..., z`` from ``x = lo`` with ``z = B - x - y``;
    at the least ``B`` the ``3m`` distinct values allow (``3 lo + (9m - 2)/2``) this is tight
    too, given room for ``z`` below ``hi``. Else the odd construction for ``m + 1`` triples,
    one dropped. Source: ours.
    """
    lo, hi = value_range(B)

    def odd(k: int) -> list[tuple[int, int, int]] | None:
        extra = B - 3 * (k - 1) // 2 - (3 * lo + 3 * k)  # to spread over the block starts
        if extra < 0 or hi - lo + 1 < 3 * k:
            return None
        z = lo + 2 * k + min(extra, hi - k + 1 - (lo + 2 * k))
        extra -= z - (lo + 2 * k)
        y = lo + k + min(extra, z - k - (lo + k))
        extra -= y - (lo + k)
        a = lo + min(extra, y - k - lo)
        return None if extra - (a - lo) else _magic_triples(k, a, y, z)

    if m % 2:
        return odd(m)
    k = m - 1
    x, a = lo, lo + 1
    y = a + k
    y0 = y + 1
    z0 = B - 3 * (k - 1) // 2 - a - y0
    last = B - x - y
    if z0 >= y0 + k and last >= z0 + k and last <= hi:
        return [(x, y, last), *_magic_triples(k, a, y0, z0)]
    more = odd(m + 1)
    return None if more is None else more[:m]


def _suggest_B(m: int, B: int, works, *, all_from: int | None = None) -> str:
    """Advice naming the least ``X > B`` with ``works(m, X)``, checked, not guessed.

    With ``all_from`` (a bound above which ``works`` is known to hold for every ``B``), also
    the least ``Y`` from which every ``B`` works: ``"use B >= Y"`` or
    ``"use B = X (or any B >= Y)"``; without it ``"B = X works"``.
    """
    limit = max(B, all_from or 0) + 64 * m * m + 1000  # both constructions succeed before it
    first = next((b for b in range(B + 1, limit) if works(m, b)), None)
    if first is None:  # not reached for m >= 1 (kept so that the advice is never wrong)
        return f"no B up to {limit} works"
    if all_from is None:
        return f"B = {first} works"
    y = max(first, all_from)
    while y - 1 > first and works(m, y - 1):
        y -= 1
    if y - 1 == first and works(m, first):
        y = first
    return f"use B >= {y}" if y == first else f"use B = {first} (or any B >= {y})"


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
        if ``distinct`` and no instance was found: ``3m`` distinct allowed values cannot sum to
        ``mB``, or neither the sampling nor the construction found triples. The message then
        gives values of ``B`` that work (checked: the construction succeeds there).

    Notes
    -----
    Each triple draws ``x`` uniformly among the values that leave a completable remainder,
    then ``y`` uniformly among those that complete it, ``z = B - x - y``. With ``distinct``,
    if ``max_tries`` restarts of this sampling fail, the triples of a deterministic
    construction are used (shuffled); it succeeds whenever ``3m`` distinct allowed values can
    sum to ``mB`` at all (checked for ``m <= 40``; see ``_planted_distinct``). Source: ours.
    """
    m, B = _check_m_B(m, B)
    lo, hi = value_range(B)
    if distinct and not _distinct_possible(m, B):
        raise ValueError(
            f"B = {B} is too small for 3m = {3 * m} distinct values in (B/4, B/2) with sum mB "
            f"(the {3 * m} smallest allowed values already sum to more, or there are too few); "
            f"{_suggest_B(m, B, _yes_works, all_from=_yes_all_from(m))}, or distinct=False"
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
        planted = _planted_distinct(m, B)
        if planted is None:
            raise ValueError(
                f"found no {m} disjoint triples of distinct values in (B/4, B/2) summing to "
                f"B = {B} in {max_tries} attempts; "
                f"{_suggest_B(m, B, _yes_works, all_from=_yes_all_from(m))}, or distinct=False"
            )
        vals = [v for t in planted for v in t]
    perm = rng.permutation(3 * m)
    values = [vals[k] for k in perm]
    where = np.argsort(perm)  # where[k] = new position of old value k
    partition = tuple(
        sorted(tuple(sorted(int(where[3 * t + u]) for u in range(3))) for t in range(m))
    )
    return ThreePartition(tuple(values), B, partition, "planted", seed)  # type: ignore[arg-type]


def _residue_fits(m: int, B: int, p: int, r: int, distinct: bool) -> tuple[int, int, int] | None:
    """``(c0, U, K)`` when ``3m`` values ``c0 + p u`` (``u`` in ``0..U``, distinct if asked)
    can have ``sum u = K`` and sum ``mB``, all ``= r (mod p)`` with ``3r != B (mod p)``."""
    lo, hi = value_range(B)
    if (3 * r - B) % p == 0:
        return None
    c0 = lo + (r - lo) % p  # smallest allowed value = r (mod p)
    if c0 > hi:
        return None
    U = (hi - c0) // p  # values c0 + p u, u in 0..U
    K = m * B - 3 * m * c0  # sum of p u over the 3m values
    if K % p:
        return None
    K //= p
    n = 3 * m
    if distinct:
        if U + 1 < n or not n * (n - 1) // 2 <= K <= n * U - n * (n - 1) // 2:
            return None
    elif not 0 <= K <= n * U:
        return None
    return c0, U, K


def _smallest_prime_factor(m: int) -> int:
    return next(d for d in range(2, m + 1) if m % d == 0)


def _residue_works(m: int, B: int, distinct: bool) -> bool:
    """Whether :func:`_residue_no` finds values (for any random order of the residues)."""
    lo, hi = value_range(B)
    if m < 2 or lo > hi or 3 * lo > B or 3 * hi < B:
        return False
    p = _smallest_prime_factor(m)
    if distinct and (hi - lo) // p + 1 < 3 * m:  # too few values of one residue (quick test)
        return False
    return any(_residue_fits(m, B, p, r, distinct) is not None for r in range(p))


def _yes_works(m: int, B: int) -> bool:
    return _planted_distinct(m, B) is not None


def _yes_all_from(m: int) -> int:
    """A ``B`` from which :func:`_planted_distinct` succeeds for every larger ``B`` too: with
    ``k <= m + 1`` blocks, ``lo <= B/4 + 1`` and ``hi >= B/2 - 1``, its three conditions hold
    once ``B >= 4 (3 + 3k + 3(k-1)/2)`` and ``B >= 12 k + 4``."""
    k = m if m % 2 else m + 1
    return max(4 * (3 + 3 * k + 3 * (k - 1) // 2), 12 * k + 4) + 4


def _no_works(m: int, B: int) -> bool:
    return _residue_works(m, B, distinct=False)


def _no_works_distinct(m: int, B: int) -> bool:
    return _residue_works(m, B, distinct=True)


def _residue_no(m: int, B: int, rng: np.random.Generator, distinct: bool) -> list[int] | None:
    """Values all ``= r (mod p)`` for a prime ``p | m`` with ``3r != B (mod p)``, or None."""
    p = _smallest_prime_factor(m)  # m >= 2
    for r in rng.permutation(p).tolist():
        fit = _residue_fits(m, B, p, r, distinct)
        if fit is None:
            continue
        c0, U, K = fit
        n = 3 * m
        if distinct:
            u = list(range(n))
            K -= n * (n - 1) // 2
            # raise the largest first, keeping them distinct and <= U
            for k in range(n - 1, -1, -1):
                add = min(K, U - (n - 1 - k) - u[k])
                u[k] += add
                K -= add
        else:
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

    ``3m`` values in ``(B/4, B/2)`` that sum to ``mB`` and yet cannot be split into ``m``
    triples of sum ``B``.

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
                try:
                    vals = list(
                        three_partition_yes(
                            m, B, seed=int(rng.integers(2**31)), distinct=distinct
                        ).values
                    )
                except ValueError:  # no yes-instance to start from: try the residues
                    break
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
    residue_vals = _residue_no(m, B, rng, distinct)
    if residue_vals is None:
        raise ValueError(
            f"found no 3-Partition no-instance with m = {m}, B = {B}"
            + (" and distinct values" if distinct else "")
            + f": (B/4, B/2) = ({B / 4:g}, {B / 2:g}) leaves too little room; "
            + _suggest_B(m, B, _no_works_distinct if distinct else _no_works)
            + " (the residue construction succeeds there)"
        )
    return ThreePartition(tuple(residue_vals), B, None, "residues mod p", seed)


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
            "source": "lpsched.generators.three_partition.three_partition_instance (SPEC 8)",
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

    :func:`three_partition_yes` or :func:`three_partition_no`, then
    :func:`three_partition_instance`.

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
            f"{quote(instance.ids[int(np.flatnonzero(start < 0)[0])])}"
        )
    return Schedule(instance, start, policy="3-partition")
