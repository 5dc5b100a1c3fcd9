"""``route``: regime-aware routing between Rect and Response in doubling stages (SPEC 11.5).

Source: Feng, Liu, Yang, Zhang, arXiv 2607.09248 (July 2026), algorithm *Route*, as summarised
(``algorithms-2026.md`` section 2; the paper's text was not available). Setting: prompts ``s_i``
known, decode lengths ``o_i`` unknown, kill and restart, all at round 0. The paper proves Route
**O(1)-competitive** on every instance (the constant was not recovered); Rect
(:mod:`lpsched.policies.rect`) and Response (:mod:`lpsched.policies.response`) are each
competitive only on their own regimes.

The branches, with ``Lambda = f M`` (``f = 1/4`` in the paper; option ``large_fraction``):

* **large** (``s_i > Lambda``): Rect, caps ``min(2^r, M - s_i)``;
* **prompt-heavy side** (``s_i <= Lambda``): every small request starts here, in a Rect whose
  caps stop at ``s_i`` (``min(2^r, s_i)``; our reading). An attempt with cap ``s_i`` that is
  killed unfinished has shown ``o_i > s_i``: the request is *response-heavy* and moves to
* **response-heavy side**: a Response whose first cap for it is the smallest ``2^r > s_i``
  (level ``r = bit_length(s_i)``; our reading: the caps it has already passed are skipped). A
  request with ``s_i = 0`` starts here (every ``o_i >= 1`` exceeds its prompt).

**Sharing (our reading; the paper's rule was not recovered).** The summary says the three
branches share time in doubling stages. Here they share it by *time slices* with the whole
cache: stage ``k = 0, 1, 2, ...`` is three windows, prompt-heavy, response-heavy, large, each
of ``u 2^k`` rounds (``u``: option ``stage_unit``, default 1). In a branch's window only that
branch runs: it starts only attempts whose cap ends within the window (Rect: ``t + cap <=
end``; Response: ``t + L <= end``, the pipeline's clock restarted at the window's start), so
every branch has all of ``M`` and memory is safe by each branch's own rule. A window ends when
its time is up, or earlier when its branch has nothing running and nothing it could still
start in it; a window whose branch has no work, or whose caps are all longer than the window,
takes no time. A request that becomes response-heavy during the prompt-heavy window joins the
response-heavy window of the same stage. **Alone:** while the other two branches have no work,
the current window has no end (a branch alone runs as its policy does by itself); it ends once
another branch has work and its running attempts are over. Hence, when every prompt exceeds
``Lambda``, ``route`` and ``rect`` give the same schedule. This keeps the O(1) spirit: each
branch is slowed by at most the other two branches' windows of the same length and by the
doubling (a geometric sum), not by their requests' lengths.

With arrivals, a request joins its branch at its arrival (the paper is offline); the surrogate
prompt of the response-heavy side is option ``surrogate_quantile`` (as ``response``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..blind import BlindSpec, BlindState, BlindView, Decision
from .rect import RectBranch
from .response import ResponseBranch, check_response_options

__all__ = ["Route", "ROUTE", "check_route_options", "ROUTE_LARGE_FRACTION", "ROUTE_STAGE_UNIT"]

#: Default ``f`` of ``Lambda = f M``, the prompt above which a request is large (the paper's 1/4).
ROUTE_LARGE_FRACTION = 0.25
#: Default ``u``: stage ``k``'s windows last ``u 2^k`` rounds (ours: the stages of length 2^k of
#: the summary).
ROUTE_STAGE_UNIT = 1

_PROMPT, _RESPONSE, _LARGE = 0, 1, 2


def check_route_options(
    large_fraction: float = ROUTE_LARGE_FRACTION,
    stage_unit: int = ROUTE_STAGE_UNIT,
    surrogate_quantile: float = 1.0,
) -> tuple[float, int, float]:
    """``(large_fraction, stage_unit, surrogate_quantile)`` of ``route``, checked.

    Raises
    ------
    ValueError
        ``large_fraction`` not a number in ``(0, 1]``; ``stage_unit`` not an integer in
        ``[1, 2^40]``; ``surrogate_quantile`` as :func:`check_response_options`.

    Notes
    -----
    Source: ours (module docstring).
    """
    f, u = large_fraction, stage_unit
    if isinstance(f, bool) or not isinstance(f, (int, float)) or not 0 < f <= 1:
        raise ValueError(f"large_fraction must be a number in (0, 1], got {f!r}")
    if isinstance(u, bool) or not isinstance(u, (int, np.integer)) or not 1 <= u <= 2**40:
        raise ValueError(f"stage_unit must be an integer in [1, 2^40], got {u!r}")
    return float(f), int(u), check_response_options(surrogate_quantile)


class Route:
    """The ``route`` policy: three branches in time-sliced doubling stages (module docstring).

    Parameters
    ----------
    view : BlindView
        The instance without ``o_i``.
    large_fraction : float, default 0.25
        ``f``: a request with ``s_i > f M`` is large.
    stage_unit : int, default 1
        ``u`` (rounds): stage ``k``'s windows last ``u 2^k`` rounds.
    surrogate_quantile : float, default 1
        Surrogate prompt of the response-heavy side (:mod:`lpsched.policies.response`).

    Raises
    ------
    ValueError
        A bad option (:func:`check_route_options`).

    Notes
    -----
    Source: arXiv 2607.09248 (Route, O(1)-competitive, as summarised); the sharing rule is our
    reading (module docstring).
    """

    def __init__(
        self,
        view: BlindView,
        large_fraction: float = ROUTE_LARGE_FRACTION,
        stage_unit: int = ROUTE_STAGE_UNIT,
        surrogate_quantile: float = 1.0,
    ) -> None:
        f, self.unit, q = check_route_options(large_fraction, stage_unit, surrogate_quantile)
        s = view.prefill.astype(np.int64)
        self.prefill = s.tolist()
        self.large = (s > f * view.memory).tolist()
        self.branches: tuple[Any, ...] = (
            RectBranch(view, s),
            ResponseBranch(view, q),
            RectBranch(view, view.memory - s),
        )
        self.stage = 0
        self.current = _PROMPT
        self.end: int | None = None  # end of the current window (rounds; None: not begun)

    def _route(self, arrived: tuple[int, ...]) -> None:
        prompt, response = self.branches[_PROMPT], self.branches[_RESPONSE]
        for i in arrived:
            if self.large[i]:
                self.branches[_LARGE].add([i])
            elif self.prefill[i] == 0:
                response.add([i], 0)
            else:
                prompt.add([i])

    def _bound(self) -> int | None:
        """End of the current window: None while the other branches have no work."""
        others = (b for k, b in enumerate(self.branches) if k != self.current)
        return self.end if any(b.has_work for b in others) else None

    def _advance(self, t: int) -> None:
        """Move to the next window its branch can use (module docstring), from ``t``."""
        branch = self.branches[self.current]
        if branch.busy:
            return
        end = self._bound()
        if end is None or (t < end and branch.can_start(t, end)):
            return
        if not any(b.has_work for b in self.branches):
            return
        while True:
            self.current = (self.current + 1) % 3
            if self.current == _PROMPT:
                self.stage += 1
            self.end = t + self.unit * 2**self.stage
            branch = self.branches[self.current]
            if branch.has_work and branch.can_start(t, self._bound()):
                if self.current == _RESPONSE:
                    branch.open(t)
                return

    def __call__(self, state: BlindState) -> Decision:
        """Route the arrivals, close the window when it is over, let its branch act."""
        t = state.t
        if self.end is None:
            self.end = t + self.unit
        for branch in self.branches:
            branch.finish(state.completed)
        self._route(state.arrived)
        kill: list[int] = []
        start: list[int] = []
        for _ in range(2):  # the branch of the window, then that of the next window if it moved
            branch = self.branches[self.current]
            end = self._bound()
            if self.current == _RESPONSE:
                killed, started = branch.step(t, end)
            else:
                killed, started, left = branch.step(t, end)
                for i in left:  # prompt-heavy cap s_i reached: response-heavy
                    self.branches[_RESPONSE].add([i], self.prefill[i].bit_length())
            kill += killed
            start += started
            before = (self.stage, self.current)
            self._advance(t)
            if (self.stage, self.current) == before:
                break
        wake = self.branches[self.current].wake()
        return Decision(kill=kill, start=start, wake=wake)


#: ``route`` for the registry (options ``large_fraction``, ``stage_unit``,
#: ``surrogate_quantile``).
ROUTE = BlindSpec(Route)
