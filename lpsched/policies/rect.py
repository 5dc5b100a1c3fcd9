"""``rect``: blind kill-and-restart with doubling length caps, queued by area budget (SPEC 11.3).

Source: Feng, Liu, Yang, Zhang, arXiv 2607.09248 (July 2026), algorithm *Rect*, as summarised
(``algorithms-2026.md`` section 2; the paper's text was not available). Setting: prompts
``s_i`` known, decode lengths ``o_i`` unknown until a request finishes, an attempt may be killed
and restarted from its first token. The paper proves Rect **36-competitive** on instances whose
requests are all *large* (``s_i > M / 4``) or all *prompt-heavy* (``o_i <= s_i``), all at round 0.

The rule:

* Attempt ``r = 0, 1, 2, ...`` of request ``i`` has the length cap ``c_i(r) = min(2^r, M - s_i)``
  output tokens (our reading: ``r`` starts at 0, so the first cap is 1 token; the cap stops at
  ``M - s_i``, which no ``o_i`` exceeds, so the last attempt is never killed and every request
  finishes).
* The request is a rectangle of width ``2 s_i`` (its memory while ``o_i <= s_i``); attempt ``r``
  has the *area budget* ``2 s_i c_i(r)``. The waiting attempts are taken by budget, smallest
  first (ties by index).
* At every decision time, walking the waiting attempts in that order, each one that **fits** is
  started. Our reading of "fits the free memory": an attempt with cap ``c`` holds at most
  ``s_i + c`` tokens (``s_i + j`` after its ``j``-th token, ``j <= c``), so it *reserves*
  ``s_i + c``, and it starts when its reservation fits beside the reservations of the running
  attempts (``sum <= M``). Memory is safe by construction: the executor never has to kill for a
  shortage. (The paper's rectangle reserves ``2 s_i``, which covers ``s_i + c`` while
  ``c <= s_i``, that is on the prompt-heavy side; beyond it the reservation grows with the cap.)
  The walk skips an attempt that does not fit and goes on (the smallest budget that fits).
* An attempt that reaches its cap unfinished is killed at that decision time (its ``c`` tokens
  are lost) and waits again with the next cap, ``c_i(r + 1)``.

With arrivals, a request joins the queue at its arrival (the paper is offline).

:class:`RectBranch` holds this queue for any set of requests and caps limited per request;
``route`` (:mod:`lpsched.policies.route`) runs two of them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from ..blind import BlindSpec, BlindState, BlindView, Decision

__all__ = ["RectBranch", "Rect", "RECT"]


class RectBranch:
    """Rect's queue over some requests, each with its own largest cap.

    Parameters
    ----------
    view : BlindView
        The instance without ``o_i``.
    limit : ndarray of int, shape (n,)
        Largest cap of each request (tokens). A request whose attempt with cap ``limit[i]``
        is killed unfinished *leaves* the branch (:meth:`step` returns it); with
        ``limit = M - s`` no request ever leaves.

    Notes
    -----
    Caps ``min(2^r, limit_i)`` from ``r = 0``; budget ``2 s_i cap``; reservations ``s_i + cap``
    (module docstring). The walk is vectorised: only the waiting attempts whose reservation
    fits the free memory (and whose cap fits the time left, when bounded) are sorted and tried.
    Source: arXiv 2607.09248 (Rect, as summarised); reservations ours.
    """

    def __init__(self, view: BlindView, limit: np.ndarray) -> None:
        self.memory = view.memory
        self.prefill = view.prefill.astype(np.int64)
        self.limit = np.asarray(limit, dtype=np.int64)
        n = view.n
        self.level = np.zeros(n, dtype=np.int64)
        self.cap = np.minimum(1, self.limit)
        self.waiting = np.zeros(n, dtype=bool)
        self.running: dict[int, tuple[int, int]] = {}  # request -> (start, cap)
        self.reserved = 0

    def add(self, requests: Iterable[int]) -> None:
        """Queue requests (arrived, or sent here by ``route``) with their first cap."""
        for i in requests:
            self.waiting[i] = True

    @property
    def busy(self) -> bool:
        """Whether an attempt of the branch is running."""
        return bool(self.running)

    @property
    def has_work(self) -> bool:
        """Whether a request of the branch waits or runs."""
        return bool(self.running) or bool(self.waiting.any())

    def can_start(self, t: int, end: int | None) -> bool:
        """Whether a waiting attempt's cap fits before ``end`` (None: no end) from ``t``."""
        if not self.waiting.any():
            return False
        return end is None or int(self.cap[self.waiting].min()) <= end - t

    def finish(self, completed: Sequence[tuple[int, int]]) -> None:
        """Forget the running attempts that completed (``(request, o_i)`` pairs)."""
        for i, _ in completed:
            if i in self.running:
                _, c = self.running.pop(i)
                self.reserved -= int(self.prefill[i]) + c

    def step(self, t: int, end: int | None) -> tuple[list[int], list[int], list[int]]:
        """Kill the attempts at their caps, then start what fits.

        Parameters
        ----------
        t : int
            Decision time (completions already passed to :meth:`finish`).
        end : int or None
            Start only attempts that end by ``end`` (``t + cap <= end``); None: no bound.

        Returns
        -------
        kill, start, left : list of int
            Attempts killed at their caps, attempts started (budget order), and killed
            requests that leave the branch (cap ``limit_i`` reached; not requeued).
        """
        kill, left = [], []
        for i, (p, c) in list(self.running.items()):
            if t - p >= c:
                del self.running[i]
                self.reserved -= int(self.prefill[i]) + c
                kill.append(i)
                if c >= self.limit[i]:
                    left.append(i)
                else:
                    self.level[i] += 1
                    self.cap[i] = min(2 ** int(self.level[i]), int(self.limit[i]))
                    self.waiting[i] = True
        return kill, self._start(t, end), left

    def _start(self, t: int, end: int | None) -> list[int]:
        free = self.memory - self.reserved
        need = self.prefill + self.cap
        ok = self.waiting & (need <= free)
        if end is not None:
            ok &= self.cap <= end - t
        idx = np.flatnonzero(ok)
        if idx.size == 0:
            return []
        budget = 2 * self.prefill[idx] * self.cap[idx]
        start = []
        for i in idx[np.lexsort((idx, budget))].tolist():
            if need[i] <= free:
                free -= int(need[i])
                start.append(i)
                self.waiting[i] = False
                self.running[i] = (t, int(self.cap[i]))
        self.reserved = self.memory - free
        return start

    def wake(self) -> int | None:
        """The next time a running attempt reaches its cap; None if none runs."""
        return min((p + c for p, c in self.running.values()), default=None)


class Rect:
    """The ``rect`` policy: one :class:`RectBranch` over every request, caps up to ``M - s_i``.

    Parameters
    ----------
    view : BlindView
        The instance without ``o_i``.

    Notes
    -----
    Source: arXiv 2607.09248 (Rect, 36-competitive for large or prompt-heavy instances, as
    summarised); our readings in the module docstring.
    """

    def __init__(self, view: BlindView) -> None:
        self.branch = RectBranch(view, view.memory - view.prefill.astype(np.int64))

    def __call__(self, state: BlindState) -> Decision:
        """Kill the attempts at their caps, start the smallest budgets that fit."""
        self.branch.add(state.arrived)
        self.branch.finish(state.completed)
        kill, start, _ = self.branch.step(state.t, None)
        return Decision(kill=kill, start=start, wake=self.branch.wake())


#: ``rect`` for the registry (sees nothing but ``s_i``, ``a_i`` and ``M``).
RECT = BlindSpec(Rect)
