"""Prediction intervals ``l_i <= o_i <= u_i`` for the decode lengths (SPEC section 6).

Each generator returns a copy of the instance with ``decode_lo`` / ``decode_hi`` set; the true
``o_i`` stays in ``decode`` (it is revealed to a policy only when the request finishes).

The :class:`~lpsched.instance.Instance` requires ``s_i + u_i <= M``. An interval that would end
above ``M - s_i`` is handled by ``cap``: ``cap=True`` (default) lowers ``u_i`` to ``M - s_i``,
which is still a valid upper bound (``o_i <= M - s_i`` holds for every servable request and is
known to the scheduler before it starts a request); the number of capped requests is recorded in
``metadata["intervals"]["capped"]``. ``cap=False`` raises :class:`~lpsched.instance.InstanceError`
naming the first such request. Nothing else is clipped: ``l_i >= 1`` holds by construction.

Generators:

* :func:`exact` -- ``l_i = u_i = o_i`` (full information);
* :func:`multiplicative` -- a noisy point prediction ``o_hat`` with ``o / (1+eps) <= o_hat <=
  o (1+eps)`` and the interval ``[o_hat / (1+eps), o_hat (1+eps)]`` around it;
* :func:`binned` -- fixed buckets: ``o_i`` in ``[e_k, e_{k+1})`` gives ``[e_k, e_{k+1} - 1]``;
* :func:`no_information` -- one wide interval ``[1, U]`` for every request.

Source: the interval model of Chen, Ye, Zhou, arXiv 2508.14544 (section 2); the generators and
their parameters are ours.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..instance import Instance, InstanceError, quote

__all__ = [
    "exact",
    "multiplicative",
    "binned",
    "no_information",
    "with_intervals",
    "from_spec",
    "INTERVAL_SPECS",
    "DEFAULT_EDGES",
]

#: Default bucket edges of :func:`binned` (tokens): powers of two from 1 to 4096.
DEFAULT_EDGES: tuple[int, ...] = tuple(2**k for k in range(13))


def with_intervals(
    instance: Instance, lo: np.ndarray, hi: np.ndarray, *, kind: str, cap: bool = True, **params
) -> Instance:
    """A copy of ``instance`` with the intervals ``[lo, hi]``, ``hi`` capped at ``M - s_i``.

    Parameters
    ----------
    instance : Instance
    lo, hi : ndarray of int, shape (n,)
        Bounds in tokens; must satisfy ``1 <= lo <= o <= hi``.
    kind : str
        Generator name, stored in ``metadata["intervals"]``.
    cap : bool, default True
        True: lower every ``hi_i > M - s_i`` to ``M - s_i`` and count them (``capped``).
        False: raise instead.
    **params
        Generator parameters, stored in ``metadata["intervals"]``.

    Returns
    -------
    Instance
        Validated copy; ``metadata["intervals"] = {"kind", "capped", "mean_width", **params}``
        where ``mean_width`` is the mean of ``u_i - l_i`` (tokens) after capping.

    Raises
    ------
    InstanceError
        ``cap=False`` and some ``s_i + hi_i > M`` (names the request), or ``lo``/``hi`` do not
        contain ``o`` (a bug in a generator; raised by the instance validation).

    Notes
    -----
    Source: ours (SPEC section 1 demands ``s_i + u_i <= M``).
    """
    lo = np.asarray(lo, dtype=np.int64)
    hi = np.asarray(hi, dtype=np.int64)
    room = instance.memory - instance.prefill
    over = hi > room
    if over.any() and not cap:
        i = int(np.flatnonzero(over)[0])
        raise InstanceError(
            f"{instance.source}: request {quote(instance.ids[i])}: field 'decode_hi' "
            f"{int(hi[i])} plus prefill {int(instance.prefill[i])} exceeds memory "
            f"M = {instance.memory} ({int(over.sum())} such requests); pass cap=True to cap "
            "u_i at M - s_i"
        )
    hi = np.minimum(hi, room)
    meta = dict(instance.metadata)
    meta["intervals"] = {
        "kind": kind,
        "capped": int(over.sum()),
        "mean_width": float(np.mean(hi - lo)),
        **params,
    }
    return instance.replace(decode_lo=lo, decode_hi=hi, metadata=meta)


def exact(instance: Instance) -> Instance:
    """Exact intervals ``l_i = u_i = o_i`` (full information).

    Returns
    -------
    Instance
        Copy with ``decode_lo = decode_hi = decode``. Source: ours (the limit case of every
        generator; A_min and A_max then reduce to MC-SF, SPEC section 6).
    """
    return with_intervals(instance, instance.decode, instance.decode, kind="exact")


def multiplicative(
    instance: Instance, eps: float, *, seed: int = 0, centered: bool = False, cap: bool = True
) -> Instance:
    """Intervals of relative width ``(1+eps)^2`` around a noisy point prediction.

    Parameters
    ----------
    instance : Instance
    eps : float, >= 0
        Relative error: the point prediction is ``o_hat = o (1+eps)^U`` with ``U`` uniform on
        ``[-1, 1]`` (so ``o/(1+eps) <= o_hat <= o(1+eps)``), and the interval is
        ``l = max(1, floor(o_hat / (1+eps)))``, ``u = ceil(o_hat (1+eps))``, which contains
        ``o``. ``eps = 0`` gives exact intervals.
    seed : int
        Seed of ``numpy.random.default_rng`` for ``U``.
    centered : bool, default False
        True: ``U = 0``, i.e. ``[floor(o/(1+eps)), ceil(o(1+eps))]`` (then ``l`` nearly reveals
        ``o``; kept for comparison).
    cap : bool
        See :func:`with_intervals`.

    Returns
    -------
    Instance
        With intervals; ``u_i - l_i`` is about ``o_hat ((1+eps) - 1/(1+eps))`` tokens.

    Raises
    ------
    ValueError
        ``eps < 0`` or not finite. :class:`InstanceError` as :func:`with_intervals`.

    Notes
    -----
    Source: the multiplicative prediction-error model of arXiv 2508.14544 (section 5,
    experiments); drawing the centre at random is ours (an interval centred on ``o`` would
    leak ``o``).
    """
    if not (eps >= 0 and math.isfinite(eps)):
        raise ValueError(f"eps must be a finite number >= 0, got {eps}")
    o = instance.decode.astype(float)
    f = 1.0 + eps
    if centered:
        u_exp = np.zeros(instance.n)
    else:
        u_exp = np.random.default_rng(seed).uniform(-1.0, 1.0, size=instance.n)
    o_hat = o * f**u_exp
    # floor/ceil with a guard against rounding noise, then restore containment exactly
    lo = np.maximum(1, np.floor(o_hat / f + 1e-9)).astype(np.int64)
    # values beyond M are capped (or refused) by with_intervals; clip first so the cast is exact
    hi = np.ceil(np.minimum(o_hat * f - 1e-9, float(instance.memory) + 1)).astype(np.int64)
    lo = np.minimum(lo, instance.decode)
    hi = np.maximum(hi, instance.decode)
    return with_intervals(
        instance, lo, hi, kind="multiplicative", cap=cap, eps=eps, seed=seed, centered=centered
    )


def binned(
    instance: Instance, edges: Sequence[int] = DEFAULT_EDGES, *, cap: bool = True
) -> Instance:
    """Fixed buckets: ``o_i`` in ``[e_k, e_{k+1})`` gets the interval ``[e_k, e_{k+1} - 1]``.

    Parameters
    ----------
    instance : Instance
    edges : sequence of int, strictly increasing, ``edges[0] == 1``
        Bucket edges in tokens. The last bucket ``[e_last, inf)`` gets ``u_i = M - s_i``
        (the largest servable length; always counted as capped).
    cap : bool
        See :func:`with_intervals` (with ``cap=False`` a request in the last bucket raises).

    Returns
    -------
    Instance
        With intervals.

    Raises
    ------
    ValueError
        Edges not strictly increasing or not starting at 1.

    Notes
    -----
    Source: bucketed length predictors (e.g. a classifier over length bins, as in the
    prediction-based schedulers cited by arXiv 2508.14544); edges are ours.
    """
    e = np.asarray(list(edges), dtype=np.int64)
    if e.size == 0 or e[0] != 1 or np.any(np.diff(e) <= 0):
        raise ValueError("edges must be strictly increasing integers starting at 1")
    k = np.searchsorted(e, instance.decode, side="right") - 1
    lo = e[k]
    top = np.iinfo(np.int64).max // 4
    hi = np.where(k + 1 < e.size, e[np.minimum(k + 1, e.size - 1)] - 1, top)
    return with_intervals(instance, lo, hi, kind="binned", cap=cap, edges=e.tolist())


def no_information(instance: Instance, upper: int | None = None, *, cap: bool = True) -> Instance:
    """One wide interval ``[1, U]`` for every request.

    Parameters
    ----------
    instance : Instance
    upper : int, optional
        ``U`` in tokens (e.g. the serving system's generation limit); default
        ``max_i o_i``. Must be ``>= max_i o_i``. Each ``u_i`` is then capped at ``M - s_i``
        (with ``cap=True``; documented in :func:`with_intervals`).
    cap : bool
        See :func:`with_intervals`.

    Returns
    -------
    Instance
        With ``l_i = 1`` and ``u_i = min(U, M - s_i)``.

    Raises
    ------
    ValueError
        ``upper < max_i o_i``.

    Notes
    -----
    Source: the no-prediction baseline of arXiv 2508.14544; ours in detail.
    """
    top = int(instance.decode.max())
    upper = top if upper is None else int(upper)
    if upper < top:
        raise ValueError(f"upper = {upper} is below the largest decode length {top}")
    lo = np.ones(instance.n, dtype=np.int64)
    hi = np.full(instance.n, upper, dtype=np.int64)
    return with_intervals(instance, lo, hi, kind="none", cap=cap, upper=upper)


#: The interval specs of :func:`from_spec` (``lpsched generate --intervals``).
INTERVAL_SPECS = ("exact", "multiplicative:EPS", "bins", "none")


def from_spec(instance: Instance, spec: str, *, seed: int = 0) -> Instance:
    """Add prediction intervals described by a short text spec.

    Parameters
    ----------
    instance : Instance
    spec : str
        ``"exact"`` (:func:`exact`), ``"multiplicative:EPS"`` (:func:`multiplicative` with
        ``eps = EPS``), ``"bins"`` (:func:`binned` with the default edges) or ``"none"``
        (:func:`no_information`).
    seed : int
        Seed of the multiplicative noise.

    Returns
    -------
    Instance

    Raises
    ------
    ValueError
        An unknown spec or a bad ``EPS`` (the message lists the specs).

    Notes
    -----
    Source: ours (one vocabulary for the command line and the reproductions).
    """
    kind, colon, arg = spec.partition(":")
    if kind == "exact" and not colon:
        return exact(instance)
    if kind == "multiplicative" and arg:
        try:
            eps = float(arg)
        except ValueError:
            raise ValueError(f"interval spec {spec!r}: EPS must be a number") from None
        return multiplicative(instance, eps, seed=seed)
    if kind == "bins" and not colon:
        return binned(instance)
    if kind == "none" and not colon:
        return no_information(instance)
    raise ValueError(f"unknown interval spec {spec!r}; use {', '.join(INTERVAL_SPECS)}")
