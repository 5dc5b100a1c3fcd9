"""Arrival rounds for online instances: trace timestamps and a nominal load scale (SPEC 5).

A round is one decode iteration. A trace gives arrival times in seconds (``arrived_at``); with a
stated round duration ``round_s`` (seconds) request ``i`` arrives at round
``floor((t_i - t_0) / round_s)``, ``t_0`` the first time of the window. Poisson arrivals come
from :func:`poisson_arrivals`.

To sweep from light load to overload on one scale, :func:`nominal_capacity` gives the rate (in
requests per round) at which the KV cache would be exactly full on average:
``M / mean_i A_i`` with ``A_i = o_i s_i + o_i (o_i + 1) / 2`` the token-rounds request ``i``
occupies (SPEC section 7). The nominal load of an arrival rate ``lambda`` is
``rho = lambda / capacity``; queues grow without bound for ``rho`` above about 1 (below 1 when
memory fragmentation wastes cache).

Source: ours (the trace columns are those of the public Azure / Splitwise traces, SPEC section 9).
"""

from __future__ import annotations

import math
import os

import numpy as np

from ..instance import MAX_VALUE, Instance, InstanceError
from ..io import read_trace_csv

__all__ = ["poisson_arrivals", "trace_arrival_rounds", "nominal_capacity", "trace_window"]


def poisson_arrivals(n: int, rate: float, rng: np.random.Generator) -> np.ndarray:
    """Arrival rounds of a Poisson process with ``rate`` requests per round.

    Returns
    -------
    ndarray of int64, shape (n,)
        ``floor`` of the cumulative exponential inter-arrival times (rounds), nondecreasing.

    Raises
    ------
    ValueError
        If ``rate <= 0``.
    """
    if not (rate > 0 and math.isfinite(rate)):
        raise ValueError(f"arrival rate must be a positive finite number, got {rate}")
    times = np.floor(np.cumsum(rng.exponential(1.0 / rate, size=n)))
    if times[-1] > MAX_VALUE:
        raise ValueError(f"arrival rate {rate} is so low that arrivals pass 2^40 rounds")
    return times.astype(np.int64)


def trace_arrival_rounds(arrived_at: np.ndarray, round_s: float) -> np.ndarray:
    """Arrival rounds ``floor((t_i - t_0) / round_s)`` from times in seconds.

    Parameters
    ----------
    arrived_at : ndarray of float, shape (n,)
        Arrival times (seconds), any order.
    round_s : float
        Duration of one round (seconds), ``> 0``.

    Returns
    -------
    ndarray of int64, shape (n,)
        Rounds, the earliest at 0.

    Raises
    ------
    ValueError
        ``round_s <= 0`` or a time is not finite.
    """
    t = np.asarray(arrived_at, dtype=float)
    if not round_s > 0:
        raise ValueError(f"round duration must be positive, got {round_s}")
    if not np.all(np.isfinite(t)):
        raise ValueError("arrival times must be finite")
    return np.floor((t - t.min()) / round_s + 1e-9).astype(np.int64)


def nominal_capacity(prefill: np.ndarray, decode: np.ndarray, memory: int) -> float:
    """Requests per round that fill ``M`` on average: ``M / mean_i (o_i s_i + o_i (o_i+1)/2)``.

    Parameters
    ----------
    prefill, decode : ndarray of int, shape (n,)
        ``s_i`` and ``o_i`` (tokens).
    memory : int
        ``M`` (tokens).

    Returns
    -------
    float
        Requests per round. Source: ours (a fluid bound: no policy sustains a higher rate).
    """
    s = np.asarray(prefill, dtype=float)
    o = np.asarray(decode, dtype=float)
    return memory / float(np.mean(o * s + o * (o + 1) / 2))


def trace_window(
    path: str | os.PathLike[str],
    n: int,
    memory: int,
    *,
    offset: int = 0,
    rate: float | None = None,
    round_s: float | None = None,
    name: str | None = None,
) -> Instance:
    """``n`` consecutive trace rows with their own arrival times, converted to rounds.

    Parameters
    ----------
    path : path-like
        Trace CSV with ``arrived_at`` (seconds).
    n : int
        Rows taken, starting at row ``offset`` (wrapping around the end of the file is not
        done: ``offset + n`` must not exceed the rows).
    memory : int
        ``M`` (tokens).
    rate : float, optional
        Target arrival rate in requests per round: sets ``round_s = rate * span / (n - 1)``
        (``span`` = last minus first time of the window), i.e. the trace's own arrival
        pattern, time-scaled. Give exactly one of ``rate`` and ``round_s``.
    round_s : float, optional
        Round duration in seconds.
    name : str, optional
        Instance name.

    Returns
    -------
    Instance
        ``metadata`` records the file, offset, ``round_s`` and the rows.

    Raises
    ------
    InstanceError
        No ``arrived_at`` column, too few rows, or a row with ``s + o > M`` (named).
    ValueError
        Not exactly one of ``rate`` and ``round_s``.
    """
    if (rate is None) == (round_s is None):
        raise ValueError("give exactly one of rate and round_s")
    s, o, t = read_trace_csv(path)
    if t is None:
        raise InstanceError(f"{path}: no 'arrived_at' column")
    if offset < 0 or n < 2 or offset + n > s.size:
        raise InstanceError(f"{path}: rows {offset}..{offset + n - 1} requested, file has {s.size}")
    sl = slice(offset, offset + n)
    s, o, t = s[sl], o[sl], t[sl]
    over = np.flatnonzero(s + o > memory)
    if over.size:
        i = int(over[0])
        raise InstanceError(
            f"{path}: line {offset + i + 2}: num_prefill_tokens + "
            f"num_decode_tokens = {int(s[i] + o[i])} > memory M = {memory}"
        )
    if round_s is None:
        assert rate is not None  # exactly one of rate and round_s (checked above)
        span = float(t.max() - t.min())
        round_s = rate * span / (n - 1)
    arrival = trace_arrival_rounds(t, round_s)
    return Instance.from_arrays(
        s,
        o,
        memory,
        arrival,
        name=name or f"{os.path.basename(os.fspath(path))}-o{offset}-n{n}",
        metadata={
            "generator": "lpsched.generators.arrivals.trace_window",
            "trace": os.path.basename(os.fspath(path)),
            "offset": offset,
            "round_s": round_s,
            "rows": [offset + 2, offset + n + 1],
        },
    )
