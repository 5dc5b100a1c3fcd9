"""Adversarial families that defeat FCFS, MC-SF and size-based priority (offline, ``a_i = 0``).

Ours, from the seed paper's intuition (arXiv 2508.06133, section 3): a request with a long
prefill and a short decode holds a lot of memory briefly; a short prefill with a long decode
holds memory for a long time. For each of ``fcfs``, ``mcsf`` and ``size`` a family of instances
parametrised by the budget ``M`` and an explicit good schedule, both TELs in closed form, so the
ratio TEL(policy) / TEL(good) is known without a MIP at any ``M``; it grows like ``sqrt(M)``,
while Sorted-F finds the good schedule on all three (ratio 1). Since ``TEL(good) >= OPT``, each
ratio is a lower bound on the policy's true approximation ratio. See :data:`FAMILIES`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..instance import Instance
from ..schedule import Schedule

__all__ = [
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
        KV-cache budget in tokens, ``>= 2`` (at ``M = 1`` the blocker would be one more short
        request).

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
            "source": "lpsched.generators.families.fcfs_family",
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
            "source": "lpsched.generators.families.mcsf_family",
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
        KV-cache budget in tokens, ``>= 2`` (so that the long request decodes ``L >= 1``
        tokens).

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
            "source": "lpsched.generators.families.size_family",
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
