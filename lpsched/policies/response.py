"""``response``: blind geometric phases, each a staggered pipeline, surrogate prompt (SPEC 11.4).

Source: Feng, Liu, Yang, Zhang, arXiv 2607.09248 (July 2026), algorithm *Response*, as
summarised (``algorithms-2026.md`` section 2; the paper's text was not available), on the
staggered pipeline of Feng, Yang, Zhang, arXiv 2601.22996 (SPEC section 4.2,
:mod:`lpsched.policies.pipeline`). Setting: prompts ``s_i`` known, decode lengths ``o_i``
unknown, kill and restart. The paper proves Response about **78.67-competitive** (236/3) on
*response-heavy* instances (every ``s_i <= M / 4`` and ``o_i > s_i``), all at round 0.

The rule (our reading where marked):

* Every request has a *level* ``r`` (0 at first): its next attempt has the cap
  ``tau_r = 2^r`` output tokens. A *phase* takes the waiting requests of the lowest level ``r``
  and gives each one attempt in a staggered pipeline of window ``L = tau_r``; an attempt that
  has not finished after ``L`` tokens is killed at its window's end and its level becomes
  ``r + 1``. A request therefore finishes in the first phase whose cap covers ``o_i``.
* **Surrogate prompt (our reading; option ``surrogate_quantile``, default 1).** The pipeline
  plans every slot with one prompt length ``s``: the ``q``-quantile (the smallest prompt with
  at least a fraction ``q`` of the phase's candidates at or below it) of the prompts of the
  requests of level ``r``. The phase runs the candidates with ``s_i <= s``; the others keep
  level ``r`` and form the next phase (with their own surrogate). The default ``q = 1`` (the
  largest prompt of the level) runs one pipeline per level, as in the paper, where all prompts
  are equal; every slot's occupant then holds at most ``s + phase`` tokens, so the pipeline's
  peak bound keeps memory safe by construction. A smaller ``q`` wastes less memory on small
  prompts at the price of more, narrower phases.
* **Window beyond the cache (ours).** When ``s + 2^r > M``, the window is ``L = M - s``: every
  candidate with ``s_i = s`` then finishes, and one killed at ``L`` has ``s_i < s``, so the
  surrogates of later phases decrease and every request finishes.
* **Pipeline (SPEC section 4.2).** Width ``K = pipeline_width(L, s, M, |phase|)``; slot ``j``
  starts an attempt at ``b + off_j + c L`` (``off_j = floor(j L / K)``, ``b`` the phase's
  begin), taking the phase's requests by arrival then index; a slot whose attempt finishes
  early stays idle until its next start (the offsets are what keeps the peak within ``M``),
  except that whenever no attempt runs the clock restarts at once, ``b = t`` (ours: with
  nothing in memory the stagger has nothing to protect; with one slot the requests then run
  back to back). A phase ends when all its requests have had their attempt and none runs;
  the next phase begins at once.

With arrivals, a request joins the next phase that begins after its arrival.

:class:`ResponseBranch` holds this machinery for any set of requests with given levels;
``route`` (:mod:`lpsched.policies.route`) runs one for its response-heavy requests.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

from ..blind import BlindSpec, BlindState, BlindView, Decision
from .pipeline import pipeline_width, staggered_starts

__all__ = ["ResponseBranch", "Response", "RESPONSE", "check_response_options"]


def check_response_options(surrogate_quantile: float = 1.0) -> float:
    """The surrogate quantile ``q`` of ``response`` (and ``route``) as a float, checked.

    Raises
    ------
    ValueError
        ``q`` not a number in ``(0, 1]``.

    Notes
    -----
    Source: ours (module docstring).
    """
    q = surrogate_quantile
    if isinstance(q, bool) or not isinstance(q, (int, float)) or not 0 < q <= 1:
        raise ValueError(f"surrogate_quantile must be a number in (0, 1], got {q!r}")
    return float(q)


class ResponseBranch:
    """Response's phases over some requests (module docstring).

    Parameters
    ----------
    view : BlindView
        The instance without ``o_i``: the prompts ``s_i`` and the budget ``M`` are read.
    surrogate_quantile : float, default 1
        ``q`` of the surrogate prompt (module docstring).

    Notes
    -----
    Source: arXiv 2607.09248 (Response, as summarised) on the pipeline of arXiv 2601.22996;
    surrogate, window cap and slot timing ours.
    """

    def __init__(self, view: BlindView, surrogate_quantile: float = 1.0) -> None:
        self.memory = view.memory
        self.prefill = view.prefill.tolist()
        self.q = check_response_options(surrogate_quantile)
        self.level = [0] * view.n
        self.pool: list[int] = []  # waiting for a phase, in the order they came
        self.queue: list[int] = []  # the phase's requests not yet started
        self.running: dict[int, int] = {}  # request -> start
        self.window = 0  # the phase's L (0: no phase)
        self.offsets: list[int] = []
        self.slots: list[int | None] = []  # next start of each slot (None: done this window)

    def add(self, requests: Iterable[int], level: int = 0) -> None:
        """Requests that wait for a phase, with their level (next cap ``2^level``)."""
        for i in requests:
            self.level[i] = level
            self.pool.append(i)

    @property
    def busy(self) -> bool:
        """Whether an attempt of the branch is running."""
        return bool(self.running)

    @property
    def has_work(self) -> bool:
        """Whether a request of the branch waits or runs."""
        return bool(self.running or self.queue or self.pool)

    def finish(self, completed: Sequence[tuple[int, int]]) -> None:
        """Forget the running attempts that completed (``(request, o_i)`` pairs)."""
        for i, _ in completed:
            self.running.pop(i, None)

    def _next_phase(self) -> tuple[list[int], int, int]:
        """The next phase's requests (by arrival order), surrogate ``s`` and window ``L``."""
        r = min(self.level[i] for i in self.pool)
        members = [i for i in self.pool if self.level[i] == r]
        prompts = sorted(self.prefill[i] for i in members)
        s = prompts[max(0, math.ceil(self.q * len(prompts)) - 1)]
        group = [i for i in members if self.prefill[i] <= s]
        return group, s, min(2**r, self.memory - s)

    def open(self, t: int) -> None:
        """Restart the pipeline's clock at ``t`` (no attempt running): a new window of
        ``route``, or a new phase."""
        if not self.queue and self.pool:
            group, s, window = self._next_phase()
            chosen = set(group)
            self.pool = [i for i in self.pool if i not in chosen]
            self.queue = group
            width = pipeline_width(window, s, self.memory, len(group))
            self.window = window
            self.offsets = staggered_starts(np.zeros(width), window, width, 0).tolist()
        self.slots = [t + off for off in self.offsets] if self.queue else []

    def can_start(self, t: int, end: int | None) -> bool:
        """Whether an attempt can start at or after ``t`` and end by ``end`` (None: no end),
        the pipeline's clock restarted at ``t`` if nothing runs."""
        if end is None:
            return bool(self.queue or self.pool)
        if self.queue:
            window = self.window
        elif self.pool:
            window = self._next_phase()[2]
        else:
            return False
        return t + window <= end

    def step(self, t: int, end: int | None) -> tuple[list[int], list[int]]:
        """Kill the attempts at their window's end, begin the next phase when one is over, and
        start the slots due at ``t``.

        Parameters
        ----------
        t : int
            Decision time (completions already passed to :meth:`finish`).
        end : int or None
            Start only attempts that end by ``end``; None: no bound.

        Returns
        -------
        kill, start : list of int
        """
        kill = [i for i, p in self.running.items() if t - p >= self.window]
        for i in kill:
            del self.running[i]
            self.level[i] += 1
            self.pool.append(i)
        if not self.running:
            self.open(t)  # the phase is over (the next begins now), or its clock restarts
        start = []
        for j, g in enumerate(self.slots):
            if g != t:
                continue
            if self.queue and (end is None or t + self.window <= end):
                i = self.queue.pop(0)
                self.running[i] = t
                start.append(i)
                self.slots[j] = t + self.window
            else:
                self.slots[j] = None
        return kill, start

    def wake(self) -> int | None:
        """The next slot start or window end; None if neither is due."""
        times = [g for g in self.slots if g is not None]
        times += [p + self.window for p in self.running.values()]
        return min(times, default=None)


class Response:
    """The ``response`` policy: one :class:`ResponseBranch` over every request, from level 0.

    Parameters
    ----------
    view, surrogate_quantile
        As for :class:`ResponseBranch`.

    Notes
    -----
    Source: arXiv 2607.09248 (Response, about 78.67-competitive on response-heavy instances, as
    summarised); our readings in the module docstring.
    """

    def __init__(self, view: BlindView, surrogate_quantile: float = 1.0) -> None:
        self.branch = ResponseBranch(view, surrogate_quantile)

    def __call__(self, state: BlindState) -> Decision:
        """Kill at the windows' ends, begin phases, start the slots due now."""
        self.branch.finish(state.completed)
        self.branch.add(state.arrived)
        kill, start = self.branch.step(state.t, None)
        return Decision(kill=kill, start=start, wake=self.branch.wake())


#: ``response`` for the registry (option ``surrogate_quantile``).
RESPONSE = BlindSpec(Response)
