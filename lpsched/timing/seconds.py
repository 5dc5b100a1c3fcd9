"""A schedule in seconds (SPEC section 10): the load of every round, the clock ``tau`` and each
request's latency, time to first token and time per output token.

Round ``t`` lasts ``d(t) = f(P_t, D_t, K_t)`` seconds, with

* ``P_t`` the prompt tokens prefilled in round ``t``: ``s_i`` summed over the runs whose first
  round is ``t`` (a run started at ``p`` has its first round ``p + 1``; a request restarted
  after a preemption or an eviction pays its prefill again in the round it restarts);
* ``D_t`` the requests processed in round ``t``: the runs with ``p < t <= end``;
* ``K_t = m(t)`` the KV-cache tokens held in round ``t`` (SPEC section 2, every run counted, as
  :meth:`lpsched.schedule.Schedule.memory_at` counts them).

``tau(t) = d(1) + ... + d(t)`` (``tau(0) = 0``) is the wall-clock end of round ``t``. Request
``i`` (start ``p_i`` of its final run, completion ``C_i``, arrival round ``a_i``, arrival
``alpha_i`` seconds: given, or the instance's ``arrival_s``, else ``tau(a_i)``) has latency
``tau(C_i) - alpha_i``, time to first token ``tau(p_i + 1) - alpha_i`` and time per output
token ``(tau(C_i) - tau(p_i + 1)) / (o_i - 1)`` for ``o_i > 1``. A round with nothing
running lasts ``f(0, 0, 0)``.

The loads come from difference arrays over the busy rounds (the rounds in which some run is
processed; the idle gaps between them are compressed, each idle round costing ``f(0, 0, 0)``),
evaluated in chunks: the memory is one float per busy round (the clock) plus O(n), whatever the
makespan, and :data:`MAX_ROUNDS` bounds the busy rounds. Source: SPEC section 10; the sweep is
ours.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..schedule import Schedule, latency_summary
from .model import TimeModel
from .registry import parse_time_model

__all__ = [
    "MAX_ROUNDS",
    "CHUNK_ROUNDS",
    "SECONDS_COLUMNS",
    "round_loads",
    "to_seconds",
    "ScheduleSeconds",
    "seconds_cell",
    "model_line",
]

#: Most busy rounds :func:`to_seconds` converts (one float64 of the clock each: 1 GiB); a
#: schedule that keeps the worker busy longer is refused with a message (from Python, pass
#: ``max_rounds``; the command line keeps the limit).
#: For scale: MC-SF on a million conversations (M = 16,492) is busy 18.5 million rounds.
MAX_ROUNDS = 2**27
#: Rounds whose loads and durations are computed at once (bounds the temporary arrays to a few
#: MB, docs/dev/performance.md).
CHUNK_ROUNDS = 2**18


@dataclass(frozen=True)
class _Runs:
    """The runs of a schedule on the compressed axis of its busy rounds.

    ``lo``/``hi``: first and last round of each run, clipped to rounds ``>= 1`` (runs that
    process nothing are dropped), the runs ordered by ``lo``; ``s``, ``p``: its prefill and
    start (a run holds ``s + t - p`` tokens in round ``t``; its prefill round ``p + 1`` counts
    only from round 1 on, which only a malformed run record can break); the busy rounds are the
    union of the ``[lo, hi]``, as maximal intervals ``[first[k], last[k]]`` whose busy rounds
    are numbered from ``offset[k]`` on (0-based); ``busy`` = their count.
    """

    s: np.ndarray
    p: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    first: np.ndarray
    last: np.ndarray
    offset: np.ndarray
    busy: int

    @classmethod
    def of(cls, schedule: Schedule) -> _Runs:
        s, p, end = schedule._intervals()
        s, p = np.asarray(s, dtype=np.int64), np.asarray(p, dtype=np.int64)
        lo = np.maximum(p + 1, 1)
        hi = np.asarray(end, dtype=np.int64)
        keep = lo <= hi
        order = np.flatnonzero(keep)
        order = order[np.argsort(lo[order])]  # the runs by first round
        s, p, slo, shi = s[order], p[order], lo[order], hi[order]
        if slo.size:
            reach = np.maximum.accumulate(shi)
            new = np.ones(slo.size, dtype=bool)
            new[1:] = slo[1:] > reach[:-1] + 1  # a gap of at least one idle round
            starts = np.flatnonzero(new)
            first = slo[starts]
            last = reach[np.append(starts[1:] - 1, slo.size - 1)]
        else:
            first = last = np.zeros(0, dtype=np.int64)
        length = last - first + 1
        offset = np.concatenate(([0], np.cumsum(length)[:-1])).astype(np.int64)
        return cls(s, p, slo, shi, first, last, offset, int(length.sum()))

    def index(self, rounds: np.ndarray) -> np.ndarray:
        """Compressed index of busy rounds (each must be busy)."""
        k = np.searchsorted(self.first, rounds, side="right") - 1
        return self.offset[k] + (rounds - self.first[k])

    def rounds(self, j0: int, j1: int) -> tuple[np.ndarray, np.ndarray | int]:
        """The rounds of the busy indices ``j0 .. j1 - 1`` (int64), and the idle rounds
        before each (an int when all lie in one busy interval)."""
        k0, k1 = np.searchsorted(self.offset, [j0, j1 - 1], side="right") - 1
        if k0 == k1:  # one busy interval: consecutive rounds
            shift = int(self.first[k0] - self.offset[k0])
            return np.arange(j0 + shift, j1 + shift, dtype=np.int64), shift - 1
        j = np.arange(j0, j1, dtype=np.int64)
        k = np.searchsorted(self.offset, j, side="right") - 1
        shift_j = self.first[k] - self.offset[k]
        return j + shift_j, shift_j - 1


def _refuse(rounds: int, makespan: int, max_rounds: int, what: str) -> None:
    """Raise when ``rounds`` (the busy rounds, or the makespan) exceed ``max_rounds``."""
    if rounds > max_rounds:
        raise ValueError(
            f"the schedule {what} {rounds:,} rounds (makespan {makespan:,}); reading it in "
            f"seconds holds a number for each, at most max_rounds = {max_rounds:,} "
            f"({8 * max_rounds / 2**30:.1f} GiB an array); from Python, raise it with "
            "to_seconds(..., max_rounds=N) or tau_profile(max_rounds=N) (the command line "
            "keeps this limit)"
        )


class _Sweep:
    """Chunks of the loads ``(rounds, P, D, K)`` over the busy rounds, in order."""

    def __init__(self, runs: _Runs) -> None:
        self.runs = runs
        w = runs.s - runs.p  # a run holds s + t - p = w + t tokens in round t
        prefill = np.where(runs.lo == runs.p + 1, runs.s, 0)
        self.a, self.sa, self.wa = runs.index(runs.lo), prefill, w  # sorted, as lo
        b = runs.index(runs.hi) + 1
        ob = np.argsort(b)
        self.b, self.wb = b[ob], w[ob]
        self.carry_d = 0
        self.carry_w = 0

    def chunk(
        self, j0: int, j1: int
    ) -> tuple[np.ndarray, np.ndarray | int, np.ndarray, np.ndarray, np.ndarray]:
        """``(rounds, idle rounds before each, P, D, K)`` of busy indices ``j0 .. j1 - 1``;
        call in increasing order."""
        size = j1 - j0
        ia0, ia1 = np.searchsorted(self.a, [j0, j1], side="left")
        ib0, ib1 = np.searchsorted(self.b, [j0, j1], side="left")
        pos_a, pos_b = self.a[ia0:ia1] - j0, self.b[ib0:ib1] - j0
        dd = np.zeros(size, dtype=np.int64)
        dw = np.zeros(size, dtype=np.int64)
        P = np.zeros(size, dtype=np.int64)
        np.add.at(dd, pos_a, 1)
        np.add.at(dd, pos_b, -1)
        np.add.at(dw, pos_a, self.wa[ia0:ia1])
        np.add.at(dw, pos_b, -self.wb[ib0:ib1])
        np.add.at(P, pos_a, self.sa[ia0:ia1])
        dd[0] += self.carry_d
        dw[0] += self.carry_w
        D = np.cumsum(dd, out=dd)
        W = np.cumsum(dw, out=dw)
        self.carry_d, self.carry_w = int(D[-1]), int(W[-1])
        rounds, idle_before = self.runs.rounds(j0, j1)
        K = W
        K += rounds * D
        return rounds, idle_before, P, D, K


def round_loads(
    schedule: Schedule, *, max_rounds: int = MAX_ROUNDS
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The load of every round ``1 .. makespan``: ``(P, D, K)``, index ``t - 1`` for round ``t``.

    Parameters
    ----------
    schedule : Schedule
        Any schedule (with ``runs``: every run, cut short or not).
    max_rounds : int, default :data:`MAX_ROUNDS`
        Refuse a makespan above this (three int64 arrays of the makespan are returned).

    Returns
    -------
    P : ndarray of int64, shape (makespan,)
        Prompt tokens prefilled in each round (tokens): ``s_i`` summed over the runs whose first
        round it is.
    D : ndarray of int64, shape (makespan,)
        Requests processed in each round, ``|{runs : p < t <= end}|``.
    K : ndarray of int64, shape (makespan,)
        KV-cache tokens held, ``m(t)`` (tokens), as :meth:`Schedule.memory_at`.

    Raises
    ------
    ValueError
        A makespan above ``max_rounds``.

    Notes
    -----
    Source: SPEC section 10; difference arrays over the busy rounds, ours.
    """
    runs = _Runs.of(schedule)
    T = max(schedule.makespan, int(runs.hi.max(initial=0)))
    _refuse(T, T, max_rounds, "has")
    out = [np.zeros(T, dtype=np.int64) for _ in range(3)]
    sweep = _Sweep(runs)
    for j0 in range(0, runs.busy, CHUNK_ROUNDS):
        rounds, _, *loads = sweep.chunk(j0, min(runs.busy, j0 + CHUNK_ROUNDS))
        for arr, load in zip(out, loads, strict=True):
            arr[rounds - 1] = load
    return out[0], out[1], out[2]


def _whole_rounds(rounds: Any) -> np.ndarray:
    """``rounds`` as int64, each a whole number: integers, or floats with no fractional part.

    Raises
    ------
    ValueError
        A value of another kind (a string, a boolean, a complex number) or with a fractional
        part (``1.7``: never truncated). Source: ours.
    """
    raw = np.asarray(rounds)
    if raw.dtype.kind in "iu":
        return raw.astype(np.int64)
    if raw.dtype.kind == "f":
        whole = np.isfinite(raw) & (raw == np.round(raw))
        if whole.all():
            return raw.astype(np.int64)
        bad = raw[~whole].ravel()[0].item()
    else:
        bad = raw.ravel()[0].item() if raw.size else raw.dtype
    raise ValueError(f"rounds must be whole numbers, got {bad!r}")


def _tau_at(
    first: np.ndarray,
    last: np.ndarray,
    offset: np.ndarray,
    busy_tau: np.ndarray,
    idle: float,
    rounds: Any,
) -> np.ndarray:
    """``tau`` at ``rounds`` from its values at the busy rounds (see :class:`ScheduleSeconds`):
    the last busy round ``r <= t`` gives ``tau(t) = tau(r) + (t - r) f(0, 0, 0)``."""
    t = _whole_rounds(rounds)
    if t.size and t.min() < 0:
        raise ValueError(f"rounds must be >= 0, got {int(t.min())}")
    k = np.searchsorted(first, t, side="right") - 1
    out = np.asarray(t * idle, dtype=np.float64)  # no busy round at or before t
    has = k >= 0
    if np.any(has):
        kk, tt = k[has], t[has]
        r = np.minimum(tt, last[kk])
        out[has] = busy_tau[offset[kk] + (r - first[kk])] + (tt - r) * idle
    return out


@dataclass(frozen=True, eq=False)
class ScheduleSeconds:
    """A schedule read in seconds under a time model (SPEC section 10).

    Attributes
    ----------
    model : TimeModel
        The time model (name and parameter values).
    latency_s : ndarray of float64, shape (n,)
        ``tau(C_i) - alpha_i`` seconds, in instance order.
    ttft_s : ndarray of float64, shape (n,)
        Time to first token ``tau(p_i + 1) - alpha_i`` seconds (``p_i`` the start of the final
        run).
    tpot_s : ndarray of float64, shape (n,)
        Time per output token ``(tau(C_i) - tau(p_i + 1)) / (o_i - 1)`` seconds; NaN for
        ``o_i = 1``.
    arrival_s : ndarray of float64, shape (n,)
        ``alpha_i`` seconds (given to :func:`to_seconds`, else the instance's ``arrival_s``,
        else ``tau(a_i)``).
    output_tokens : int
        ``sum_i o_i``.
    makespan : int
        ``max_i C_i`` (rounds).
    idle_s : float
        Seconds of an idle round, ``f(0, 0, 0)``.
    busy_first, busy_last, busy_offset : ndarray of int64, shape (G,)
        The busy rounds as maximal intervals ``[busy_first[k], busy_last[k]]`` of rounds in
        which something runs, numbered from ``busy_offset[k]`` on in ``busy_tau``.
    busy_tau : ndarray of float64, shape (B,)
        ``tau(t)`` seconds at every busy round ``t``, in increasing ``t``.

    Notes
    -----
    :meth:`tau_at` gives ``tau`` at any rounds (exact between busy rounds: the rounds there are
    idle); :meth:`stats` the summary figures. Under ``unit`` every figure is the round figure
    exactly (integers in float64, up to 2^53). Source: SPEC section 10; the class is ours.
    """

    model: TimeModel
    latency_s: np.ndarray = field(repr=False)
    ttft_s: np.ndarray = field(repr=False)
    tpot_s: np.ndarray = field(repr=False)
    arrival_s: np.ndarray = field(repr=False)
    output_tokens: int
    makespan: int
    idle_s: float
    busy_first: np.ndarray = field(repr=False)
    busy_last: np.ndarray = field(repr=False)
    busy_offset: np.ndarray = field(repr=False)
    busy_tau: np.ndarray = field(repr=False)

    def tau_at(self, rounds: Any) -> np.ndarray:
        """``tau(t)``, the wall-clock end of round ``t`` in seconds (``tau(0) = 0``).

        Parameters
        ----------
        rounds : array_like of int, any shape
            Rounds ``t >= 0`` (beyond the makespan the rounds are idle).

        Returns
        -------
        ndarray of float64, the shape of ``rounds``
            Seconds.

        Raises
        ------
        ValueError
            A negative round, or one that is not a whole number (``1.7``, ``"1"``, ``True``):
            refused, not truncated.

        Notes
        -----
        Source: SPEC section 10 (``tau(t) = d(1) + ... + d(t)``, idle rounds ``f(0, 0, 0)``).
        """
        return _tau_at(
            self.busy_first, self.busy_last, self.busy_offset, self.busy_tau, self.idle_s, rounds
        )

    def admission_rounds(self, arrival_s: Any) -> np.ndarray:
        """The first decision time at which each arrival has happened on this clock.

        Parameters
        ----------
        arrival_s : array_like of float, any shape
            Arrival times ``alpha`` in seconds (finite).

        Returns
        -------
        ndarray of int64, the shape of ``arrival_s``
            ``min {p >= 0 : tau(p) >= alpha}`` (rounds): a request arriving at ``alpha`` may
            start at ``p`` (first round ``p + 1``) from then on. Beyond the makespan the rounds
            are idle (``f(0, 0, 0)`` each).

        Raises
        ------
        ValueError
            An arrival that is not finite, or one reached 2^62 rounds or more after the
            makespan (no int64 holds the round).

        Notes
        -----
        The rule of the online executors with arrivals in seconds, "admits at round ``t``
        only the requests with ``alpha_i <= tau(t - 1)``" (``t = p + 1``): with a schedule they
        made, these are its arrival rounds exactly (the executors' clock is this ``tau``, bit
        for bit). Bisection on :meth:`tau_at`. Source: SPEC section 10.
        """
        alpha = np.asarray(arrival_s, dtype=np.float64)
        if alpha.size and not np.all(np.isfinite(alpha)):
            raise ValueError("arrival_s must be finite numbers of seconds")
        flat = alpha.ravel()
        out = np.zeros(flat.shape, dtype=np.int64)
        todo = np.flatnonzero(flat > 0)  # tau(0) = 0 reaches the others
        if todo.size:
            a = flat[todo]
            end = self.tau_at(self.makespan)
            with np.errstate(over="ignore"):
                over = np.ceil(np.maximum(a - end, 0.0) / self.idle_s)
            if over.max() >= 2.0**62:  # no int64 round
                far = float(a[np.argmax(over)])
                exp = math.log10(far - float(end)) - math.log10(self.idle_s)
                raise ValueError(
                    f"an arrival_s of {far!r} s is reached about 10^{exp:.1f} rounds after the "
                    f"makespan on this clock (idle rounds of {self.idle_s!r} s), beyond the "
                    "rounds of a schedule (2^40)"
                )
            hi = self.makespan + over.astype(np.int64) + 2
            lo = np.zeros(a.shape, dtype=np.int64)  # tau(lo) < a <= tau(hi)
            while True:
                gap = np.flatnonzero(hi - lo > 1)
                if not gap.size:
                    break
                mid = (lo[gap] + hi[gap]) // 2
                reached = self.tau_at(mid) >= a[gap]
                hi[gap[reached]] = mid[reached]
                lo[gap[~reached]] = mid[~reached]
            out[todo] = hi
        return out.reshape(alpha.shape)

    def tau_profile(self, *, max_rounds: int = MAX_ROUNDS) -> tuple[np.ndarray, np.ndarray]:
        """``tau`` at every round ``0 .. makespan``: ``(rounds, tau)``, both shape
        (makespan + 1,) (rounds, seconds).

        Raises
        ------
        ValueError
            A makespan above ``max_rounds`` (default :data:`MAX_ROUNDS`).

        Notes
        -----
        Source: SPEC section 10.
        """
        _refuse(self.makespan, self.makespan, max_rounds, "has")
        rounds = np.arange(self.makespan + 1, dtype=np.int64)
        return rounds, self.tau_at(rounds)

    @property
    def makespan_s(self) -> float:
        """``tau(max_i C_i)`` seconds: the end of the last round."""
        return float(self.tau_at(self.makespan))

    @property
    def tel_s(self) -> float:
        """``sum_i latency_s`` seconds (TEL in seconds)."""
        return float(self.latency_s.sum())

    def stats(self) -> dict[str, Any]:
        """The summary figures in seconds.

        Returns
        -------
        dict
            ``tel_s``, ``mean_latency_s``, ``p50_latency_s``, ``p90_latency_s``,
            ``p99_latency_s`` (linear interpolation, numpy's default), ``mean_ttft_s``,
            ``mean_tpot_s`` (over the requests with ``o_i > 1``; None when there are none),
            ``throughput_tokens_s`` (output tokens per second over the busy span
            ``tau(max_i C_i) - min_i alpha_i``), ``throughput_requests_s``, ``makespan_s``.

        Raises
        ------
        ValueError
            A busy span of 0 s or less (only with ``arrival_s`` at or after the last
            completion).

        Notes
        -----
        The figures come from :func:`lpsched.schedule.latency_summary`, the one home of the
        latency figures in rounds too (:func:`lpsched.schedule.latency_stats`), so under
        ``unit`` they equal the round figures. Source: SPEC section 10.
        """
        span = self.makespan_s - float(self.arrival_s.min())
        if not span > 0:
            raise ValueError(
                f"the busy span is {span!r} s: every arrival_s is at or after the last "
                f"completion ({self.makespan_s!r} s), so there is no throughput"
            )
        fig = latency_summary(self.latency_s, self.output_tokens, span)
        multi = ~np.isnan(self.tpot_s)
        return {
            "tel_s": self.tel_s,
            "mean_latency_s": fig["mean_latency"],
            "p50_latency_s": fig["p50_latency"],
            "p90_latency_s": fig["p90_latency"],
            "p99_latency_s": fig["p99_latency"],
            "mean_ttft_s": float(self.ttft_s.mean()),
            "mean_tpot_s": float(self.tpot_s[multi].mean()) if multi.any() else None,
            "throughput_tokens_s": fig["token_throughput"],
            "throughput_requests_s": fig["throughput"],
            "makespan_s": self.makespan_s,
        }


def to_seconds(
    schedule: Schedule,
    model: TimeModel | str = "unit",
    *,
    arrival_s: Any = None,
    max_rounds: int = MAX_ROUNDS,
) -> ScheduleSeconds:
    """Read a schedule in seconds under a time model (SPEC section 10).

    Parameters
    ----------
    schedule : Schedule
        Any schedule (feasible or not; with ``runs``, every run's load counts and a restarted
        request pays its prefill again). Unchanged.
    model : TimeModel or str, default "unit"
        A model, or its command-line form ``NAME[:key=value,...]``
        (:func:`~lpsched.timing.registry.parse_time_model`).
    arrival_s : array_like of float, shape (n,), optional
        Arrivals ``alpha_i`` in seconds on the clock of ``tau`` (``tau(0) = 0``); default the
        instance's own ``arrival_s`` when it has one (an online executor's schedule with
        arrivals in seconds, :mod:`lpsched.policies.online`), else ``tau(a_i)``, the end of
        the arrival round. A schedule that did not admit by these arrivals (a round policy on
        an instance with ``arrival_s``) may start a request before ``alpha_i``: its TTFT and
        latency then count from a time after the start.
    max_rounds : int, default :data:`MAX_ROUNDS`
        Most busy rounds converted (memory: 8 bytes each).

    Returns
    -------
    ScheduleSeconds

    Raises
    ------
    ValueError
        More busy rounds than ``max_rounds`` (the message says how many), or ``arrival_s`` of
        the wrong shape or not finite.
    TimeModelError
        The model gives a duration that is not a positive finite number of seconds (the message
        gives the round's load), or its function fails.
    KeyError
        An unknown model name.

    Notes
    -----
    O(R log R + B) time for R runs and B busy rounds (one pass of difference arrays, in
    chunks of :data:`CHUNK_ROUNDS`), O(R + B) memory; idle gaps cost nothing but their
    ``f(0, 0, 0)`` each. Source: SPEC section 10; the sweep is ours.
    """
    model = parse_time_model(model)
    inst = schedule.instance
    runs = _Runs.of(schedule)
    _refuse(runs.busy, schedule.makespan, max_rounds, "keeps the worker busy in")
    idle = model.idle_s
    tau = np.empty(runs.busy, dtype=np.float64)
    sweep = _Sweep(runs)
    total = 0.0
    for j0 in range(0, runs.busy, CHUNK_ROUNDS):
        j1 = min(runs.busy, j0 + CHUNK_ROUNDS)
        rounds, idle_before, P, D, K = sweep.chunk(j0, j1)
        part = tau[j0:j1]
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow: one error below
            np.cumsum(model.durations(P, D, K), out=part)
            part += total
            total = float(part[-1])
            part += idle_before * idle  # the idle rounds before each busy round
        model.require_finite(part[-1], f"tau at round {int(rounds[-1])} of {inst.name!r}")
    tau.setflags(write=False)

    def at(rounds: np.ndarray) -> np.ndarray:
        return _tau_at(runs.first, runs.last, runs.offset, tau, idle, rounds)

    if arrival_s is None and inst.arrival_s is not None:
        alpha = np.array(inst.arrival_s, dtype=np.float64)
    elif arrival_s is None:
        alpha = at(inst.arrival)
    else:
        alpha = np.array(arrival_s, dtype=np.float64)
        if alpha.shape != (inst.n,) or not np.all(np.isfinite(alpha)):
            raise ValueError(
                f"arrival_s must give {inst.n} finite arrival times in seconds, one a request"
            )
    first, done = at(schedule.start + 1), at(schedule.completion)
    o = inst.decode
    tpot = np.full(inst.n, np.nan)
    multi = o > 1
    tpot[multi] = (done[multi] - first[multi]) / (o[multi] - 1)
    latency, ttft = done - alpha, first - alpha
    with np.errstate(over="ignore", invalid="ignore"):
        sums = [latency.sum(), ttft.sum(), np.nansum(tpot)]
    model.require_finite(sums, f"a sum of the latencies, TTFTs or TPOTs of {inst.name!r}")
    for a in (latency, ttft, tpot, alpha):
        a.setflags(write=False)
    secs = ScheduleSeconds(
        model,
        latency,
        ttft,
        tpot,
        alpha,
        output_tokens=int(inst.decode.sum()),
        makespan=schedule.makespan,
        idle_s=idle,
        busy_first=runs.first,
        busy_last=runs.last,
        busy_offset=runs.offset,
        busy_tau=tau,
    )
    return secs


#: The figures in seconds that the tables of ``lpsched run`` and ``lpsched check`` show: key of
#: :meth:`ScheduleSeconds.stats` (which their ``--json`` prints whole), header, format.
SECONDS_COLUMNS = (
    ("tel_s", "TEL (s)", "{:.1f}"),
    ("mean_latency_s", "mean latency (s)", "{:.3f}"),
    ("p99_latency_s", "p99 latency (s)", "{:.3f}"),
    ("mean_ttft_s", "mean TTFT (s)", "{:.3f}"),
    ("mean_tpot_s", "mean TPOT (s)", "{:.4f}"),
    ("throughput_tokens_s", "tokens/s", "{:.1f}"),
)


def seconds_cell(figures: dict[str, Any], key: str, fmt: str) -> str:
    """One figure of :data:`SECONDS_COLUMNS` (``figures`` as :meth:`ScheduleSeconds.stats`
    gives them) as text, ``-`` for None. Source: ours."""
    value = figures[key]
    return "-" if value is None else fmt.format(value)


def model_line(model: TimeModel) -> str:
    """``time model NAME: key = value, ...``: what the seconds of a table are read in.
    Source: ours."""
    params = ", ".join(f"{k} = {v:g}" for k, v in model.parameters)
    return f"time model {model.name}" + (f": {params}" if params else "")
