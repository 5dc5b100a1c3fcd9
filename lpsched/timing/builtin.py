"""The built-in time models: ``unit`` (every round one second: the round figures back) and
``linear`` (a base cost plus a cost per prefill token, per squared prefill token, per decoding
request and per KV-cache token held).

Source: SPEC section 10 (``unit``); ``linear`` is ours, the form Vidur-style profiles are fitted
in (``lpsched/data/time_profiles.json``, :mod:`lpsched.timing.profiles`).
"""

from __future__ import annotations

import numpy as np

from .model import TimeModel

__all__ = ["unit", "linear", "check_linear", "LINEAR_DEFAULTS", "LINEAR_DOCS", "UNIT", "LINEAR"]


def unit(prefill_tokens: np.ndarray, decoding: np.ndarray, kv_tokens: np.ndarray) -> np.ndarray:
    """``d(t) = 1`` second for every round, whatever its load.

    Parameters
    ----------
    prefill_tokens, decoding, kv_tokens : ndarray of int, shape (T,)
        The loads ``P_t``, ``D_t``, ``K_t`` (ignored).

    Returns
    -------
    ndarray of float64, shape (T,)
        Ones: ``tau(t) = t``, so every figure in seconds is the round figure.

    Notes
    -----
    Source: SPEC section 10 (``unit``).
    """
    return np.ones(np.shape(prefill_tokens), dtype=np.float64)


#: Default coefficients of ``linear``: round numbers of the order of a 7B-parameter model on one
#: A100 GPU (10 ms per round, 0.1 ms per prefill token, 0.1 ms per decoding request, 0.2 us per
#: KV token read). Not a measurement: use a fitted profile or your own coefficients.
LINEAR_DEFAULTS: dict[str, float] = {
    "base_s": 0.01,
    "prefill_token_s": 1e-4,
    "prefill_token2_s": 1e-9,
    "decode_request_s": 1e-4,
    "kv_token_s": 2e-7,
}
LINEAR_DOCS: dict[str, str] = {
    "base_s": "seconds of every round, idle ones included (weights read, launch); > 0",
    "prefill_token_s": "seconds per prompt token prefilled in the round (P_t); >= 0",
    "prefill_token2_s": "seconds per squared prompt token (P_t ** 2, attention); >= 0",
    "decode_request_s": "seconds per request processed in the round (D_t); >= 0",
    "kv_token_s": "seconds per KV-cache token held in the round (K_t = m(t)); >= 0",
}


def linear(
    prefill_tokens: np.ndarray,
    decoding: np.ndarray,
    kv_tokens: np.ndarray,
    base_s: float = LINEAR_DEFAULTS["base_s"],
    prefill_token_s: float = LINEAR_DEFAULTS["prefill_token_s"],
    prefill_token2_s: float = LINEAR_DEFAULTS["prefill_token2_s"],
    decode_request_s: float = LINEAR_DEFAULTS["decode_request_s"],
    kv_token_s: float = LINEAR_DEFAULTS["kv_token_s"],
) -> np.ndarray:
    """``d = base_s + prefill_token_s P + prefill_token2_s P^2 + decode_request_s D +
    kv_token_s K`` seconds.

    Parameters
    ----------
    prefill_tokens, decoding, kv_tokens : ndarray of int, shape (T,)
        The loads ``P_t`` (tokens), ``D_t`` (requests), ``K_t`` (tokens).
    base_s, prefill_token_s, prefill_token2_s, decode_request_s, kv_token_s : float
        The coefficients (seconds, seconds per token, per token squared, per request, per
        token); defaults :data:`LINEAR_DEFAULTS`. :func:`check_linear` holds them to
        ``base_s > 0`` and the others ``>= 0``, so every round, an idle one too, lasts at least
        ``base_s > 0``.

    Returns
    -------
    ndarray of float64, shape (T,)
        Seconds (computed in float64, so ``P^2`` cannot overflow).

    Notes
    -----
    ``base_s`` alone (every other coefficient 0) is a fixed round duration, the former
    ``round_s`` of ``latency_stats``. Source: ours (the form of the fitted profiles).
    """
    P = np.asarray(prefill_tokens, dtype=np.float64)
    out = base_s + prefill_token_s * P
    if prefill_token2_s:
        out += prefill_token2_s * (P * P)
    if decode_request_s:
        out += decode_request_s * np.asarray(decoding, dtype=np.float64)
    if kv_token_s:
        out += kv_token_s * np.asarray(kv_tokens, dtype=np.float64)
    return out


def check_linear(values: dict[str, float]) -> None:
    """Refuse coefficients of ``linear`` that could make a round last 0 s or less.

    Parameters
    ----------
    values : dict of str to float
        The coefficients of :func:`linear` by name (seconds, seconds per token, ...).

    Raises
    ------
    ValueError
        ``base_s <= 0`` or another coefficient ``< 0`` (the message names it).

    Notes
    -----
    Source: ours (SPEC section 10 needs ``d(t) > 0``, idle rounds included).
    """
    if values["base_s"] <= 0:
        raise ValueError(
            f"base_s must be > 0 seconds (an idle round lasts base_s), got {values['base_s']!r}"
        )
    for k, v in values.items():
        if k != "base_s" and v < 0:
            raise ValueError(f"{k} must be >= 0, got {v!r}")


#: ``unit``: every round one second.
UNIT = TimeModel(
    "unit",
    unit,
    "every round lasts 1 s: the seconds are the rounds (SPEC section 10)",
    source="SPEC section 10",
)
#: ``linear`` with :data:`LINEAR_DEFAULTS`.
LINEAR = TimeModel(
    "linear",
    linear,
    "base_s + prefill_token_s P + prefill_token2_s P^2 + decode_request_s D + kv_token_s K",
    tuple(LINEAR_DEFAULTS.items()),
    tuple(LINEAR_DOCS.items()),
    check_linear,
    "ours (defaults: round numbers, not a measurement)",
)
