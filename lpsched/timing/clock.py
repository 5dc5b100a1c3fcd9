"""The clock of an online executor with arrivals in seconds (SPEC section 10).

An executor that admits by arrival times ``alpha_i`` (seconds) needs the wall clock
``tau(t) = d(1) + ... + d(t)`` while it builds the schedule: request ``i`` may start at decision
time ``p`` (its first round ``p + 1``) only if ``alpha_i <= tau(p)``, which is SPEC section 10's
"admits at round ``t`` only the requests with ``alpha_i <= tau(t - 1)``" with ``t = p + 1``.
Round ``t``'s duration ``d(t) = f(P_t, D_t, K_t)`` depends only on the runs started before
``t``, so the clock can be advanced up to the next decision time as soon as the decisions of
the earlier ones are made.

:class:`ArrivalClock` is that clock. It is computed **bit for bit as**
:func:`~lpsched.timing.seconds.to_seconds` reads the finished schedule (the busy rounds'
durations summed in order, in chunks of :data:`~lpsched.timing.seconds.CHUNK_ROUNDS`, plus
``f(0, 0, 0)`` for every idle round before), so the schedule an executor returns satisfies
``a_i = min {p >= 0 : tau(p) >= alpha_i}`` exactly under ``to_seconds``'s own ``tau``
(:meth:`~lpsched.timing.seconds.ScheduleSeconds.admission_rounds`), and the independent
check ``p_i >= a_i`` holds in seconds.

Idle rounds (nothing running, the next arrival in the future) last ``f(0, 0, 0)`` each, as
SPEC section 10 says; the clock skips a stretch of them in closed form (no step per round), so
a request that arrives during an idle round waits for the end of that round, at most
``f(0, 0, 0)`` seconds. Busy rounds are evaluated in vectorised pieces, each round once.

Source: SPEC section 10 (the admission rule and idle rounds); the class and its bit-exact
arithmetic are ours.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..instance import Instance
from .model import TimeModel, TimeModelError
from .registry import parse_time_model
from .seconds import CHUNK_ROUNDS

__all__ = ["ArrivalClock", "NOT_ARRIVED", "MAX_ROUND", "clock_model"]

#: The admission round of a request the clock has not reached yet (larger than every round).
NOT_ARRIVED = 2**62
#: Largest round of the model (``lpsched.instance.MAX_VALUE``, 2^40).
MAX_ROUND = 2**40
#: First and largest piece of busy rounds evaluated at once (the pieces double in between).
_FIRST_PIECE = 64
_MAX_PIECE = 2**16

#: ``loads(r0, r1) -> (D, K)``: requests processed and KV tokens held in rounds ``r0 .. r1 - 1``
#: (int64 arrays of shape (r1 - r0,), every ``D > 0``).
Loads = Callable[[int, int], tuple[np.ndarray, np.ndarray]]


def clock_model(instance: Instance, time_model: TimeModel | str | None) -> TimeModel | None:
    """The time model an online executor admits by: ``time_model`` parsed when the instance has
    arrivals in seconds (``arrival_s``), else None (admission by the arrival rounds).

    Parameters
    ----------
    instance : Instance
        The instance to run.
    time_model : TimeModel or str or None
        The executor's ``time_model`` argument (``NAME[:key=value,...]``).

    Returns
    -------
    TimeModel or None

    Raises
    ------
    KeyError, TimeModelError
        An unknown or malformed model (:func:`~lpsched.timing.registry.parse_time_model`).

    Notes
    -----
    Source: SPEC section 10 (ours: a model without ``arrival_s`` changes no schedule).
    """
    if time_model is None:
        return None
    model = parse_time_model(time_model)
    return model if instance.arrival_s is not None else None


def _rounds_in(tau: np.ndarray, first: int) -> Callable[[np.ndarray], np.ndarray]:
    """The first round ``first + k`` with ``tau[k] >= alpha``, for arrivals ``alpha`` within
    the piece ``tau`` of busy rounds ``first, first + 1, ...``."""

    def rounds(alpha: np.ndarray) -> np.ndarray:
        return first + np.searchsorted(tau, alpha, side="left")

    return rounds


class ArrivalClock:
    """``tau`` as an online executor advances, and the admission round of every request.

    Parameters
    ----------
    model : TimeModel
        The time model; ``d(t) = model.durations(P, D, K)``.
    arrival_s : ndarray of float, shape (n,)
        Arrival times ``alpha_i`` in seconds (finite, ``>= 0``; ``tau(0) = 0``).

    Attributes
    ----------
    order : list of int, length n
        The requests by ``(alpha_i, i)``: the order in which they arrive.
    rounds : list of int, length n
        ``a_i = min {p : tau(p) >= alpha_i}`` once the clock has reached it (rounds), else
        :data:`NOT_ARRIVED`.
    assigned : int
        ``rounds`` is known for ``order[:assigned]`` (every ``alpha_i <= tau(t)``).
    t : int
        The round up to which ``tau`` is known.
    tau : float
        ``tau(t)`` seconds.

    Notes
    -----
    The executor tells the clock the prefill tokens of each round (:meth:`prefill`, the
    ``s_i`` of the runs started at the decision time before it) and, when advancing, the
    decoding requests and KV tokens of the coming busy rounds (``loads``) and the last round in
    which something runs given the running set (``last_busy``); rounds after it are idle. It
    must never advance past a decision time at which it may still start a run. Source: SPEC
    section 10; ours.
    """

    def __init__(self, model: TimeModel, arrival_s: np.ndarray) -> None:
        alpha = np.asarray(arrival_s, dtype=np.float64)
        n = alpha.shape[0]
        self.model = model
        self.idle = model.idle_s
        order = np.lexsort((np.arange(n), alpha))
        self.order: list[int] = order.tolist()
        self._alpha = alpha[order]  # sorted
        self._alpha_list: list[float] = self._alpha.tolist()
        self._n = n
        self.rounds: list[int] = [NOT_ARRIVED] * n
        self.assigned = 0
        self.t = 0
        self.tau = 0.0
        self._c = 0.0  # busy durations summed from the start of the current chunk
        self._total = 0.0  # busy durations of the finished chunks (to_seconds' ``total``)
        self._busy = 0  # busy rounds so far
        self._idle_rounds = 0  # idle rounds so far
        self._lb = 0  # last busy round (0: none yet)
        self._base = 0.0  # tau at the last busy round
        self._prefill: dict[int, int] = {}
        self._assign(0.0, lambda a: np.zeros(a.size, dtype=np.int64))

    # ------------------------------------------------------------------ bookkeeping
    def prefill(self, round_: int, tokens: int) -> None:
        """Add ``tokens`` prefill tokens to round ``round_`` (> :attr:`t`): the ``s_i`` of a run
        started at decision time ``round_ - 1``."""
        if tokens:
            self._prefill[round_] = self._prefill.get(round_, 0) + tokens

    def _assign(self, upto: float, rounds_of: Callable[[np.ndarray], np.ndarray]) -> None:
        """Give every unassigned request with ``alpha_i <= upto`` its round ``rounds_of``."""
        if self.assigned >= self._n or self._alpha_list[self.assigned] > upto:
            return
        m = int(np.searchsorted(self._alpha, upto, side="right"))
        got = rounds_of(self._alpha[self.assigned : m]).tolist()
        for i, r in zip(self.order[self.assigned : m], got, strict=True):
            self.rounds[i] = r
        self.assigned = m

    def _idle_tau(self, rounds: np.ndarray) -> np.ndarray:
        """``tau`` at rounds after the last busy round (all idle): ``tau(lb) + (r - lb) f(0,0,0)``,
        as :meth:`~lpsched.timing.seconds.ScheduleSeconds.tau_at` computes it."""
        return self._base + (rounds - self._lb) * self.idle

    def _idle_round(self, alpha: np.ndarray) -> np.ndarray:
        """The first idle round ``r > t`` with ``tau(r) >= alpha`` (int64, one per alpha)."""
        with np.errstate(over="ignore", invalid="ignore"):
            k = np.ceil((alpha - self._base) / self.idle)
        lo = self.t + 1
        r = np.clip(np.nan_to_num(k, nan=0.0, posinf=2.0**62) + self._lb, lo, 2.0**62)
        self._within(r, alpha)
        # float rounding: the exact first round by bisection in (below, above], usually one
        # step (the estimate is off by one or two, but by many when the idle rounds are
        # shorter than the float spacing of tau)
        above = r.astype(np.int64)
        below = np.full(above.shape, lo - 1, dtype=np.int64)  # the answer is > below
        step = 2
        while (short := self._idle_tau(above) < alpha).any():
            below[short], above[short] = above[short], above[short] + step
            step *= 2
            self._within(above, alpha)
        near = np.maximum(above - 2, below)
        below = np.where(self._idle_tau(near) < alpha, near, below)
        while (gap := above - below > 1).any():
            mid = (below + above) // 2
            reached = self._idle_tau(mid) >= alpha
            above = np.where(gap & reached, mid, above)
            below = np.where(gap & ~reached, mid, below)
        return above

    def _within(self, rounds: np.ndarray, alpha: np.ndarray) -> None:
        """Raise when an idle round is beyond round 2^40 (the rounds of a schedule)."""
        if rounds.size and rounds.max() > MAX_ROUND:
            raise TimeModelError(
                f"time model {self.model.name!r}: an arrival at {float(alpha.max())!r} s lies "
                f"beyond round 2^40 (idle rounds of {self.idle!r} s); the rounds of a schedule "
                "must be <= 2^40"
            )

    def _durations(self, P: np.ndarray, D: np.ndarray, K: np.ndarray) -> np.ndarray:
        """``model.durations(P, D, K)`` (int64 loads of one shape), with its checks done only
        when a value is bad: the model's function is called through ``model.call``, as
        ``durations`` calls it, and a result amiss is handed to ``durations`` for its error
        message."""
        d = np.array(self.model.call(P, D, K))  # a failure raises, naming the model
        if d.shape != P.shape:
            d = np.broadcast_to(d, P.shape).copy() if d.ndim == 0 else d
        if d.shape != P.shape or not (np.isfinite(d).all() and d.min() > 0):
            return self.model.durations(P, D, K)  # raises (or the same values, checked)
        return d

    # ------------------------------------------------------------------ advancing
    def advance(
        self,
        t_end: int | None,
        loads: Loads,
        last_busy: int,
        stop: float | None = None,
    ) -> int:
        """Advance ``tau`` to round ``t_end``, or to the first round whose end reaches ``stop``.

        Parameters
        ----------
        t_end : int or None
            Advance to this round at most (``>=`` :attr:`t`); None: until ``stop``.
        loads : callable
            ``loads(r0, r1) -> (D, K)`` for busy rounds ``r0 .. r1 - 1`` (requests, tokens),
            only called with ``t < r0`` and ``r1 - 1 <= last_busy``.
        last_busy : int
            The last round in which a run is processed given the running set (``<=`` :attr:`t`
            when nothing runs); later rounds are idle, ``f(0, 0, 0)`` each.
        stop : float, optional
            Stop at the first round ``p`` with ``tau(p) >= stop`` (seconds).

        Returns
        -------
        int
            The round reached, :attr:`t`: ``t_end``, or ``p <= t_end`` when ``stop`` is reached.

        Raises
        ------
        TimeModelError
            A duration that is not a positive finite number of seconds, or an arrival beyond
            round 2^40.

        Notes
        -----
        Every request with ``alpha_i <= tau(t)`` gets its round in :attr:`rounds`. Source:
        SPEC section 10; ours.
        """
        if stop is None:
            if t_end is not None and t_end <= self.t:
                return self.t
        elif stop <= self.tau:
            return self.t
        r0 = self.t + 1
        hi = last_busy if t_end is None else min(t_end, last_busy)
        piece = _FIRST_PIECE
        while r0 <= hi:
            room = CHUNK_ROUNDS - self._busy % CHUNK_ROUNDS
            r1 = min(hi, r0 + min(piece, room) - 1)
            D, K = loads(r0, r1 + 1)
            P = np.zeros(r1 - r0 + 1, dtype=np.int64)
            for r in [r for r in self._prefill if r <= r1]:
                P[r - r0] += self._prefill.pop(r)
            d = self._durations(P, D, K)
            d[0] += self._c  # the sum so far, then in order: as one cumsum from the chunk start
            with np.errstate(over="ignore", invalid="ignore"):  # an overflow: one error below
                cs = np.cumsum(d)
                tau = cs + self._total  # to_seconds: part += total; part += idle_before * idle
                tau += self._idle_rounds * self.idle
            self.model.require_finite(tau[-1], f"tau at round {r1}")
            stopped = stop is not None and tau[-1] >= stop
            if stop is not None and stopped:
                k = int(np.searchsorted(tau, stop, side="left"))
                cs, tau, r1 = cs[: k + 1], tau[: k + 1], r0 + k
            self._assign(float(tau[-1]), _rounds_in(tau, r0))
            self._busy += r1 - r0 + 1
            self._c = float(cs[-1])
            if self._busy % CHUNK_ROUNDS == 0:  # to_seconds' next chunk starts from 0
                self._total = float(cs[-1] + self._total)
                self._c = 0.0
            self._lb, self._base = r1, float(tau[-1])
            self.t, self.tau = r1, float(tau[-1])
            if stopped:
                return r1
            r0 = r1 + 1
            piece = min(2 * piece, _MAX_PIECE)
        if t_end is not None and t_end <= self.t:
            return self.t
        if stop is not None:
            p = int(self._idle_round(np.array([stop]))[0])
            end = p if t_end is None else min(p, t_end)
        else:
            assert t_end is not None  # advance to a round, or until a time
            end = t_end
        top = self._base + (end - self._lb) * self.idle  # as _idle_tau, in Python floats
        self.model.require_finite(top, f"tau at round {end}")
        self._assign(top, self._idle_round)
        self._idle_rounds += end - self.t
        for r in [r for r in self._prefill if r <= end]:  # pragma: no cover - none when idle
            del self._prefill[r]
        self.t, self.tau = end, top
        return end
