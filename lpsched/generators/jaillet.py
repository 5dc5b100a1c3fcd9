"""The synthetic workload of Jaillet et al. and the round convention of their model.

* :func:`jaillet_synthetic` -- ``jaillet-synthetic``: the distribution of the predecessor
  paper's synthetic experiment (arXiv 2502.07115), ``M ~ U[30, 50]``, ``s_i ~ U[1, 5]``,
  ``o_i ~ U[1, M - s_i]``, ``n ~ U[40, 60]``, all requests at round 0, seeded;
* :func:`jaillet_reading` and :func:`jaillet_tel` -- the second reading of the round
  convention: a request's start round counts and its memory is freed a round after its last
  token. It is lpsched's model (SPEC section 2) on ``(s_i - 1, o_i + 1)`` with every completion
  one round later, so a TEL in that reading is the lpsched TEL of the transformed instance
  minus ``n``;
* :data:`CONVENTIONS`, :func:`convention_instance` and :func:`convention_tel` -- the two
  readings by name, for the ``jaillet-synthetic`` reproduction.

The derivation. In the second reading a request started at round ``p >= a_i`` holds
``s_i, s_i + 1, ..., s_i + o_i`` tokens in rounds ``p, p + 1, ..., p + o_i`` (both ends
counted) and completes at ``C = p + o_i``. lpsched's model on ``s' = s_i - 1``,
``o' = o_i + 1`` with the same start ``p`` runs it in rounds ``p + 1, ..., p + o_i + 1``
holding ``s' + j = s_i - 1 + j`` tokens in round ``p + j``: the same memory curve, one round
later, for every request alike. So a schedule is feasible in one reading iff it is feasible in
the other (the memory constraint of round ``r`` of the one is that of round ``r + 1`` of the
other, and ``p >= a_i`` in both), and ``C' = p + o' = C + 1`` for every request:
``TEL = TEL' - n``. A constant shift changes ratios, so ratios in that reading are taken on
``TEL' - n``. ``s_i >= 1`` keeps ``s_i - 1 >= 0``; ``s' + o' = s_i + o_i`` keeps every
request's fit in ``M``.

Source: the distribution is the paper's (arXiv 2502.07115, synthetic experiment: 200 trials);
the inclusive integer bounds, the order of the draws and the reading of the round convention
are ours (the issue's reading, worked out above).
"""

from __future__ import annotations

import numpy as np

from ..instance import Instance
from .workloads import check_size

__all__ = [
    "JAILLET_MEMORY",
    "JAILLET_N",
    "JAILLET_PREFILL",
    "JAILLET_MIN_MEMORY",
    "CONVENTIONS",
    "jaillet_synthetic",
    "jaillet_reading",
    "jaillet_tel",
    "convention_instance",
    "convention_tel",
]

#: ``M ~ U[30, 50]`` (tokens), both ends included.
JAILLET_MEMORY = (30, 50)
#: ``n ~ U[40, 60]`` (requests), both ends included.
JAILLET_N = (40, 60)
#: ``s_i ~ U[1, 5]`` (tokens), both ends included.
JAILLET_PREFILL = (1, 5)
#: The least ``M`` given explicitly: a prefill of 5 tokens leaves room for one decode token.
JAILLET_MIN_MEMORY = JAILLET_PREFILL[1] + 1
#: The two readings of the round convention: lpsched's (SPEC section 2) and Jaillet's (a
#: request's start round counts, memory freed a round after its last token).
CONVENTIONS = ("lpsched", "jaillet")


def jaillet_synthetic(n: int | None = None, seed: int = 0, memory: int | None = None) -> Instance:
    """Jaillet et al.'s synthetic instances: M ~ U[30,50], n ~ U[40,60], s ~ U[1,5], o ~ U[1,M-s].

    ``M`` uniform on the integers ``30..50``, ``n`` on ``40..60``, then for each request in
    turn ``s_i`` uniform on ``1..5`` and ``o_i`` on ``1..M - s_i`` (every bound included), so
    every request fits: ``s_i + o_i <= M``.

    Parameters
    ----------
    n : int, optional
        Number of requests; default drawn from ``U[40, 60]``. Given, it replaces the draw
        (e.g. ``n = 10..60`` for a frontier table).
    seed : int, default 0
        Seed of ``numpy.random.default_rng``.
    memory : int, optional
        KV-cache budget ``M`` in tokens; default drawn from ``U[30, 50]``. Given, it replaces
        the draw; at least :data:`JAILLET_MIN_MEMORY` (6) tokens.

    Returns
    -------
    Instance
        Named ``jaillet-n{n}-M{M}-s{seed}``; ``metadata`` records the seed and whether ``n``
        and ``M`` were drawn.

    Raises
    ------
    ValueError
        ``n`` not a positive integer; ``memory`` not an integer of at least 6 tokens.

    Notes
    -----
    Source: the distribution is that of arXiv 2502.07115 (synthetic experiment). Our reading
    where the paper is silent: ``U[a, b]`` is uniform on the integers ``a..b``, both ends
    included. How the seed is used (ours): ``M`` is drawn first and ``n`` second, always, even
    when given (a given value replaces the draw but the stream moves on the same way); then the
    requests, ``s_i`` then ``o_i``, one request after the other. So for one seed, a given
    ``n`` keeps the drawn ``M``, and the instance with ``n`` requests is the first ``n``
    requests of any larger one (the frontier's instances are nested); a given ``M`` changes
    the bounds of the ``o_i`` and hence the requests.
    """
    check_size(1 if n is None else n, 1 if memory is None else memory)
    if memory is not None and memory < JAILLET_MIN_MEMORY:
        raise ValueError(
            f"jaillet-synthetic needs memory M >= {JAILLET_MIN_MEMORY} tokens (a prefill of up "
            f"to {JAILLET_PREFILL[1]} tokens and at least one decode token), got {memory}"
        )
    rng = np.random.default_rng(seed)
    drawn_m = int(rng.integers(JAILLET_MEMORY[0], JAILLET_MEMORY[1] + 1))
    drawn_n = int(rng.integers(JAILLET_N[0], JAILLET_N[1] + 1))
    m = drawn_m if memory is None else int(memory)
    count = drawn_n if n is None else int(n)
    s = np.empty(count, dtype=np.int64)
    o = np.empty(count, dtype=np.int64)
    for i in range(count):  # one request after the other: nested instances across n
        s[i] = rng.integers(JAILLET_PREFILL[0], JAILLET_PREFILL[1] + 1)
        o[i] = rng.integers(1, m - s[i] + 1)
    return Instance.from_arrays(
        s,
        o,
        m,
        name=f"jaillet-n{count}-M{m}-s{seed}",
        metadata={
            "generator": "lpsched.generators.jaillet.jaillet_synthetic",
            "workload": "jaillet-synthetic",
            "seed": seed,
            "n": count,
            "memory": m,
            "n_drawn": n is None,
            "memory_drawn": memory is None,
        },
    )


def jaillet_reading(instance: Instance) -> Instance:
    """The instance on which lpsched's model is Jaillet's round convention: ``(s_i - 1, o_i + 1)``.

    Parameters
    ----------
    instance : Instance
        Every ``s_i >= 1`` (tokens); arrivals and ``M`` are kept, and prediction intervals
        move with ``o_i`` (``l_i + 1``, ``u_i + 1``).

    Returns
    -------
    Instance
        Named ``{name}-jaillet``, ``metadata["convention"] = "jaillet"``. A schedule (start
        rounds ``p_i``) is feasible on it iff it is feasible on ``instance`` in Jaillet's
        reading, and its TEL is the TEL in that reading plus ``n`` (:func:`jaillet_tel`).

    Raises
    ------
    ValueError
        A request with ``s_i = 0`` (named): it has no prefill token to give up.

    Notes
    -----
    Source: ours (the derivation is in the module docstring).
    """
    empty = np.flatnonzero(instance.prefill < 1)
    if empty.size:
        i = int(empty[0])
        raise ValueError(
            f"{instance.name}: request {instance.ids[i]} has prefill 0; Jaillet's reading "
            "needs s_i >= 1 (it runs lpsched's model on s_i - 1)"
        )

    def longer(x: np.ndarray | None) -> np.ndarray | None:
        return None if x is None else x + 1

    return instance.replace(
        prefill=instance.prefill - 1,
        decode=instance.decode + 1,
        decode_lo=longer(instance.decode_lo),
        decode_hi=longer(instance.decode_hi),
        name=f"{instance.name}-jaillet",
        metadata={**dict(instance.metadata), "convention": "jaillet"},
    )


def jaillet_tel(tel: float, n: int) -> float:
    """A TEL (or a bound on it) of :func:`jaillet_reading`'s instance, in Jaillet's reading.

    Parameters
    ----------
    tel : int or float
        TEL in rounds of a schedule of the transformed instance (lpsched's model), or a lower
        bound on it.
    n : int
        Number of requests.

    Returns
    -------
    int or float
        ``tel - n``: every completion is one round earlier in Jaillet's reading. An integer
        for an integer ``tel``.

    Notes
    -----
    Source: ours (module docstring).
    """
    return tel - n


def convention_instance(instance: Instance, convention: str) -> Instance:
    """The instance lpsched solves for a reading of the round convention: ``instance``
    itself for ``"lpsched"``, :func:`jaillet_reading`'s for ``"jaillet"``.

    Raises
    ------
    ValueError
        A convention not in :data:`CONVENTIONS`, or what :func:`jaillet_reading` refuses.
        Source: ours.
    """
    _check_convention(convention)
    return instance if convention == "lpsched" else jaillet_reading(instance)


def convention_tel(tel: float, convention: str, n: int) -> float:
    """A TEL (or a bound on it) of :func:`convention_instance`'s instance, in the reading
    ``convention``: itself for ``lpsched``, :func:`jaillet_tel` for ``jaillet``.

    Parameters
    ----------
    tel : int or float
        Rounds, on the instance lpsched solved for ``convention``.
    convention : str
        A name of :data:`CONVENTIONS`.
    n : int
        Number of requests.

    Returns
    -------
    int or float

    Raises
    ------
    ValueError
        An unknown convention.

    Notes
    -----
    Source: ours.
    """
    _check_convention(convention)
    return tel if convention == "lpsched" else jaillet_tel(tel, n)


def _check_convention(convention: str) -> None:
    """``ValueError`` unless ``convention`` is a name of :data:`CONVENTIONS`."""
    if convention not in CONVENTIONS:
        raise ValueError(f"unknown convention {convention!r}; choose from {', '.join(CONVENTIONS)}")
