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

In seconds (arrivals ``arrival_s``, SPEC section 10), :func:`seconds_capacity` converts that
rate with the mean round duration ``d_bar`` of a saturated worker under a time model: offline
Sorted-F (every request waiting at 0, the cache kept full) on the same requests,
``d_bar = tau(T) / T`` over its makespan ``T``. The nominal load of ``lambda_s`` requests per
second is ``rho = lambda_s d_bar / capacity``: ``rho = 1`` is the rate at which the cache is full
on average with rounds as long as they are when it is full.

Source: ours (the trace columns are those of the public Azure / Splitwise traces, SPEC section 9).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence

import numpy as np

from ..instance import MAX_VALUE, Instance, InstanceError
from ..io import read_trace_csv

__all__ = [
    "poisson_arrivals",
    "poisson_arrival_seconds",
    "trace_arrival_rounds",
    "nominal_capacity",
    "seconds_capacity",
    "trace_window",
]


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


def poisson_arrival_seconds(n: int, rate_s: float, rng: np.random.Generator) -> np.ndarray:
    """Arrival times in seconds of a Poisson process with ``rate_s`` requests per second.

    Parameters
    ----------
    n : int
        Number of arrivals.
    rate_s : float
        Requests per second, ``> 0`` and finite.
    rng : numpy.random.Generator
        Drawn from: ``n`` exponential inter-arrival times, as :func:`poisson_arrivals` draws
        them (the same generator state gives the same gaps, in seconds instead of rounds).

    Returns
    -------
    ndarray of float64, shape (n,)
        The cumulative inter-arrival times (seconds, from 0), nondecreasing, unrounded.

    Raises
    ------
    ValueError
        ``rate_s`` not a positive finite number, or arrivals beyond 2^40 s.

    Notes
    -----
    For instances with ``arrival_s`` (SPEC section 10). Source: ours.
    """
    if not (rate_s > 0 and math.isfinite(rate_s)):
        raise ValueError(f"arrival rate must be a positive finite number per second, got {rate_s}")
    times = np.cumsum(rng.exponential(1.0 / rate_s, size=n))
    if n and times[-1] > MAX_VALUE:
        raise ValueError(f"arrival rate {rate_s} per second is so low that arrivals pass 2^40 s")
    return times


def trace_arrival_rounds(
    arrived_at: np.ndarray, round_s: float, *, rows: Sequence[str] | None = None
) -> np.ndarray:
    """Arrival rounds ``floor((t_i - t_0) / round_s)`` from times in seconds.

    Parameters
    ----------
    arrived_at : ndarray of float, shape (n,)
        Arrival times (seconds), any order.
    round_s : float
        Duration of one round (seconds), ``> 0`` and finite.
    rows : sequence of str, length n, optional
        Where each time was read (``"trace.csv: line 7"``), named in the errors; default
        ``"time i"``.

    Returns
    -------
    ndarray of int64, shape (n,)
        Rounds, the earliest at 0, each at most ``MAX_VALUE`` (2^40).

    Raises
    ------
    ValueError
        ``round_s`` not a positive finite number; or (an :class:`InstanceError`) a time that is
        not finite, or so far after the first that its round passes 2^40. The message names the
        row and the field ``arrived_at``.
    """
    t = np.asarray(arrived_at, dtype=float)
    if isinstance(round_s, bool) or not (
        isinstance(round_s, (int, float, np.integer, np.floating))
        and math.isfinite(round_s)
        and round_s > 0
    ):
        raise ValueError(
            f"round duration must be a positive finite number of seconds, got {round_s!r}"
        )
    if t.ndim != 1 or (rows is not None and len(rows) != t.size):
        raise ValueError("give one arrival time (and one row label) per request")

    def row(i: int) -> str:
        return rows[i] if rows is not None else f"time {i}"

    if t.size == 0:
        return np.zeros(0, dtype=np.int64)
    finite = np.isfinite(t)
    if not finite.all():
        i = int(np.flatnonzero(~finite)[0])
        raise InstanceError(
            f"{row(i)}: field 'arrived_at' must be a finite time in seconds, got {t[i].item()!r}"
        )
    first = int(np.argmin(t))
    with np.errstate(over="ignore"):
        rounds = np.floor((t - t[first]) / round_s + 1e-9)
    over = ~(rounds <= MAX_VALUE)  # also an overflow to inf
    if over.any():
        i = int(np.argmax(np.where(over, t, -np.inf)))
        gap = t[i].item() - t[first].item()
        raise InstanceError(
            f"{row(i)}: field 'arrived_at' = {t[i].item():g} s lies {gap:g} s "
            f"after the first arrival ({row(first)}), {rounds[i].item():.3g} rounds of "
            f"{round_s:g} s; arrival rounds must be <= 2^40: use a longer round or a shorter "
            "trace window"
        )
    return rounds.astype(np.int64)


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


def seconds_capacity(instance: Instance, model, *, solver: str = "auto") -> tuple[float, float]:
    """Requests per second that fill ``M`` on average under a time model, and the mean round.

    Parameters
    ----------
    instance : Instance
        The requests (their arrivals are ignored: the capacity is that of a full backlog).
    model : TimeModel or str
        The time model (``NAME[:key=value,...]``).
    solver : str
        Phase-1 solver of the offline Sorted-F run (``auto``: by ``n``).

    Returns
    -------
    capacity_s : float
        ``nominal_capacity / d_bar`` requests per second (module docstring).
    d_bar : float
        ``tau(T) / T`` seconds: the mean round duration of offline Sorted-F on the requests,
        all at round 0.

    Notes
    -----
    Costs one offline Sorted-F run and one :func:`~lpsched.timing.seconds.to_seconds`.
    Source: ours (the load of the seconds table of ``lpsched reproduce online-load
    --time-model``).
    """
    from ..policies.registry import run_policy
    from ..timing.seconds import to_seconds

    offline = instance.replace(arrival=np.zeros(instance.n, dtype=np.int64), arrival_s=None)
    sched = run_policy(offline, "sorted-f", solver=solver)
    d_bar = to_seconds(sched, model).makespan_s / sched.makespan
    cap = nominal_capacity(instance.prefill, instance.decode, instance.memory)
    return cap / d_bar, d_bar


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

    The rows' lengths and arrival pattern, replayed: ``a_i = floor((t_i - t_0) / round_s)``,
    ``t_0`` the time of the window's first row.

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
    if rate is not None and not (isinstance(rate, (int, float)) and 0 < rate < math.inf):
        raise ValueError(
            f"rate must be a positive finite number of requests per round, got {rate!r}"
        )
    s, o, t, line = read_trace_csv(path, with_lines=True)
    if t is None:
        raise InstanceError(f"{path}: line 1: missing column 'arrived_at' (needed for arrivals)")
    if offset < 0 or n < 2 or offset + n > s.size:
        raise InstanceError(f"{path}: rows {offset}..{offset + n - 1} requested, file has {s.size}")
    sl = slice(offset, offset + n)
    s, o, t, line = s[sl], o[sl], t[sl], line[sl]
    over = np.flatnonzero(s + o > memory)
    if over.size:
        i = int(over[0])
        raise InstanceError(
            f"{path}: line {line[i]}: num_prefill_tokens + "
            f"num_decode_tokens = {int(s[i] + o[i])} > memory M = {memory}"
        )
    if round_s is None:
        assert rate is not None  # exactly one of rate and round_s (checked above)
        span = float(t.max() - t.min())
        if not span > 0:
            raise InstanceError(
                f"{path}: lines {line[0]}-{line[-1]}: field 'arrived_at' is {t[0].item():g} s on "
                f"every row of the window, so no round duration gives the rate {rate:g} per "
                "round; the window needs arrival times that differ (or give round_s)"
            )
        round_s = rate * span / (n - 1)
    arrival = trace_arrival_rounds(t, round_s, rows=[f"{path}: line {k}" for k in line.tolist()])
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
            "rows": [int(line[0]), int(line[-1])],
        },
    )
