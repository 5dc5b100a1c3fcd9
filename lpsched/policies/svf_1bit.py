"""1-bit SVF: smallest surrogate volume first, seeing one bit of each decode length (SPEC
section 11; Kong, Qi, Ye, Zhou, arXiv 2606.22327).

``svf`` (SPEC section 4.1) orders its queue by the memory-time volume ``v_i = s_i o_i + o_i
(o_i + 1) / 2`` and admits by the peak ``s_i + o_i``; both need ``o_i``. 1-bit SVF is told only a
class, whether ``o_i > theta`` (long) or not (short), and puts a **surrogate** decode length in
place of ``o_i``: ``O_0`` for a short request, ``O_1`` for a long one. ``svf-1bit`` is that policy
on the blind executor (:mod:`lpsched.blind`): its view holds ``s_i``, ``a_i``, ``M`` and the
class bit (``reveal=("class", theta)``), never ``o_i``.

The rule. Each request ``i`` has a current reservation ``R_i`` (tokens of decode), at first its
class's surrogate. The waiting queue holds the arrived requests by the surrogate volume
``s_i R_i + R_i (R_i + 1) / 2``, then index. At every decision time ``t``, after the
completions:

1. *outliving*: a running request that has emitted ``t - p_j = R_j`` tokens without completing
   would exceed its reservation in round ``t+1``; it moves to the next reservation of its ladder
   (below), ``R'_j``. If the running reservations with ``R'_j`` in place of ``R_j`` fit,
   ``sum (s_k + R_k) <= M``, it **keeps running** with ``R'_j``; otherwise it is **killed** and
   queued again with ``R'_j`` (its surrogate volume recomputed). Outliving requests are taken
   oldest first (smallest ``p_j``, then index), so the one with the most progress is extended
   first;
2. *admission*, as ``svf``: the head ``h`` is started (``p_h = t``) while ``sum over running
   (s_k + R_k) + s_h + R_h <= M`` (peak reservation with the surrogate); strict head-of-line.

The policy asks to be woken at the earliest ``p_j + R_j`` of the running requests.

The ladder of request ``i``, with ``cap_i = M - s_i`` (every instance has ``o_i <= cap_i``):
``min(O_c, cap_i)``, then the class's upper bound ``min(B_c, cap_i)`` with ``B_0 = theta`` (certain:
a short request has ``o_i <= theta``) and ``B_1 = T`` (the operator's bound on every ``o_i``),
then ``cap_i``; a level not above the one before is dropped. A short request thus outlives its
reservation at most once and a long one at most twice (once when ``T`` bounds its ``o_i``, as the
default ``T`` does).

Memory is safe by construction: after every decision ``sum over running (s_k + R_k) <= M``, and
every running ``k`` holds at most ``s_k + R_k`` tokens until ``p_k + R_k``, where the policy is
woken; the executor refuses any overflow besides. The queue drains: a request alone reserves at
most ``s_i + cap_i = M``.

Our readings, where the summaries leave a choice:

* **T, the largest decode length.** The theory's ``T = max_i o_i`` is not visible to a blind
  policy. ``T`` is the option ``max_decode``, the bound an operator knows (a serving engine's
  maximum output tokens); by default ``M - min_i s_i``, the largest ``o_i`` the instance format
  allows (``s_i + o_i <= M``), so that ``T`` bounds every ``o_i`` and a long request is killed at
  most once.
* **The theory's constants**, rounded to whole tokens: ``theta = floor(sqrt(T))`` (option
  ``threshold``), ``O_0 = round(T^(1/4))`` (``surrogate_short``), ``O_1 = round(T^(3/4))``
  (``surrogate_long``), each at least 1. The experiments' thresholds were not recovered.
* **A request that outlives its surrogate** (the summaries do not say): extend when the memory
  allows, else kill (option ``outlive="extend"``, the default). Extending keeps the tokens
  already produced and costs no memory that another running request was promised; killing is
  the only safe alternative when the longer reservation does not fit, since the reservations are
  what keeps the memory within ``M``. ``outlive="kill"`` always kills and requeues (a
  comparison). A running request's extension comes before the queue's head.
* Ties by index; with arrivals (outside the theorem) the queue holds the arrived requests.

Guarantee: none proven for this reading. SVF with the true ``o_i`` is ``(1 + 2 / (1 - alpha))``-
competitive when every peak ``s_i + o_i <= alpha M`` (SPEC section 4.1); 1-bit SVF's worst-case
constant was not recovered.

Relation to ``lpsched.research.reproductions.burst.one_bit_volume_order``: the same surrogate
order with the theory's constants, but there ``T = max_i o_i`` is read from the instance (not
blind) and the queue is run by ``vllm``'s admission (current memory, recompute preemption) as in
the paper's experiment; here ``T`` is the operator's bound, the admission is SVF's peak
reservation and the policy runs blind.

Source: arXiv 2606.22327 (1-bit SVF, as summarised: classes, surrogates, theory constants);
the reservations, the ladder and the outliving rule are ours.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from typing import Any

from ..blind import BlindState, BlindView, Decision, Reveal

__all__ = [
    "OUTLIVE_RULES",
    "OneBitSetting",
    "OneBitSVF",
    "check_one_bit_options",
    "one_bit_reveal",
    "one_bit_setting",
]

#: What ``svf-1bit`` does with a request that outlives its reservation, the default first.
OUTLIVE_RULES = ("extend", "kill")


def _whole(name: str, value: Any, least: int) -> None:
    """Refuse ``value`` unless it is an integer ``>= least`` (tokens)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ValueError(f"{name} must be an integer >= {least} tokens, got {value!r}")


def check_one_bit_options(
    max_decode: int | None = None,
    threshold: int | None = None,
    surrogate_short: int | None = None,
    surrogate_long: int | None = None,
    outlive: str = "extend",
    **_: Any,
) -> None:
    """Refuse option values ``svf-1bit`` cannot run with: a length that is not an integer in
    range, or an outliving rule not in :data:`OUTLIVE_RULES`.

    Parameters
    ----------
    max_decode : int or None
        ``T`` (tokens), ``>= 1``.
    threshold : int or None
        ``theta`` (tokens), ``>= 0``.
    surrogate_short, surrogate_long : int or None
        ``O_0``, ``O_1`` (tokens), ``>= 1``.
    outlive : str
        One of :data:`OUTLIVE_RULES`.
    **_
        The ``view`` of :meth:`~lpsched.blind.BlindSpec.revealed`, not checked.

    Raises
    ------
    ValueError
        The first value out of range, named.

    Notes
    -----
    Source: ours (the registry's ``check``).
    """
    for name, value, least in (
        ("max_decode", max_decode, 1),
        ("threshold", threshold, 0),
        ("surrogate_short", surrogate_short, 1),
        ("surrogate_long", surrogate_long, 1),
    ):
        if value is not None:
            _whole(name, value, least)
    if outlive not in OUTLIVE_RULES:
        raise ValueError(f"outlive must be one of {', '.join(OUTLIVE_RULES)}, got {outlive!r}")


@dataclass(frozen=True)
class OneBitSetting:
    """The constants of one run of ``svf-1bit`` (module docstring): the bound ``T``, the class
    threshold ``theta`` and the surrogate decode lengths of the two classes.

    Attributes
    ----------
    max_decode : int
        ``T``, the bound on every decode length (tokens).
    threshold : int
        ``theta``: a request is long when ``o_i > theta`` (tokens).
    short, long : int
        Surrogate decode lengths ``O_0``, ``O_1`` (tokens).

    Notes
    -----
    Source: arXiv 2606.22327 (the theory's constants, as summarised); the defaults from ``T``
    and the rounding are ours.
    """

    max_decode: int
    threshold: int
    short: int
    long: int


def one_bit_setting(
    view: BlindView,
    max_decode: int | None = None,
    threshold: int | None = None,
    surrogate_short: int | None = None,
    surrogate_long: int | None = None,
) -> OneBitSetting:
    """The constants of ``svf-1bit`` on ``view``: the options given, the theory's defaults for the
    others.

    Parameters
    ----------
    view : BlindView
        Its ``M`` and ``s_i`` give the default ``T = M - min_i s_i`` (``M`` when ``n = 0``).
    max_decode, threshold, surrogate_short, surrogate_long : int or None
        ``T``, ``theta``, ``O_0``, ``O_1`` (tokens); None: ``T`` as above, ``theta =
        floor(sqrt(T))``, ``O_0 = round(T^(1/4))``, ``O_1 = round(T^(3/4))``, each at least 1.

    Returns
    -------
    OneBitSetting

    Raises
    ------
    ValueError
        An option out of range (:func:`check_one_bit_options`).

    Notes
    -----
    Source: arXiv 2606.22327 (the constants, with ``T = max_i o_i``); ``T``'s default is ours.
    """
    check_one_bit_options(max_decode, threshold, surrogate_short, surrogate_long)
    if max_decode is None:
        max_decode = max(1, view.memory - (int(view.prefill.min()) if view.n else 0))
    return OneBitSetting(
        max_decode=max_decode,
        threshold=math.isqrt(max_decode) if threshold is None else threshold,
        short=max(1, round(max_decode**0.25)) if surrogate_short is None else surrogate_short,
        long=max(1, round(max_decode**0.75)) if surrogate_long is None else surrogate_long,
    )


def one_bit_reveal(*, view: BlindView, **options: Any) -> Reveal:
    """``svf-1bit``'s view: ``("class", theta)`` with ``theta`` of :func:`one_bit_setting`.

    Parameters
    ----------
    view : BlindView
        The view without a prediction (``theta``'s default depends on ``M`` and ``s_i``).
    **options
        The policy's options; ``outlive`` is ignored here.

    Returns
    -------
    Reveal

    Notes
    -----
    Source: ours (SPEC section 11).
    """
    options.pop("outlive", None)
    return ("class", one_bit_setting(view, **options).threshold)


class OneBitSVF:
    """The blind policy ``svf-1bit`` (module docstring): call it with each
    :class:`~lpsched.blind.BlindState`; it answers a :class:`~lpsched.blind.Decision`.

    Parameters
    ----------
    view : BlindView
        Built with ``reveal=("class", theta)`` (:func:`one_bit_reveal`): ``view.long`` is set.
    outlive : {"extend", "kill"}, default "extend"
        The outliving rule (module docstring).
    **options
        ``max_decode``, ``threshold``, ``surrogate_short``, ``surrogate_long``
        (:func:`one_bit_setting`).

    Raises
    ------
    ValueError
        A view without the class bit, or an option out of range.

    Notes
    -----
    A visit costs O(log n) per start, completion, extension or kill. Source: arXiv 2606.22327
    (order and admission, as summarised); the ladder and the outliving rule are ours.
    """

    def __init__(self, view: BlindView, *, outlive: str = "extend", **options: Any) -> None:
        check_one_bit_options(outlive=outlive)
        if view.long is None:
            raise ValueError("svf-1bit needs the class bit: a view with reveal=('class', T)")
        self.setting = one_bit_setting(view, **options)
        self.extend = outlive == "extend"
        self.M = view.memory
        self.s = view.prefill.tolist()
        st = self.setting
        self.ladder: list[list[int]] = []
        for s, long in zip(self.s, view.long.tolist(), strict=True):
            cap = self.M - s
            first = min(st.long if long else st.short, cap)
            bound = min(st.max_decode if long else st.threshold, cap)
            self.ladder.append(sorted({x for x in (first, bound, cap) if x >= first}))
        self.level = [0] * view.n
        self.queue: list[tuple[int, int]] = []  # heap of (surrogate volume, request)
        self.running: dict[int, tuple[int, int]] = {}  # request -> (start p, reservation R)
        self.deadlines: list[tuple[int, int, int]] = []  # heap of (p + R, request, p)
        self.reserved = 0  # sum over running of s + R (tokens)

    def _reservation(self, i: int) -> int:
        return self.ladder[i][self.level[i]]

    def _enqueue(self, i: int) -> None:
        R = self._reservation(i)
        heapq.heappush(self.queue, (self.s[i] * R + R * (R + 1) // 2, i))

    def _run(self, i: int, p: int, R: int) -> None:
        self.running[i] = (p, R)
        heapq.heappush(self.deadlines, (p + R, i, p))

    def _live(self, deadline: tuple[int, int, int]) -> bool:
        """Whether ``(p + R, j, p)`` is the reservation of ``j``'s running attempt."""
        d, j, p = deadline
        return self.running.get(j) == (p, d - p)

    def _outliving(self, t: int) -> list[int]:
        """The running requests whose reservation ends at ``t``, oldest first."""
        due = []
        while self.deadlines and self.deadlines[0][0] <= t:
            deadline = heapq.heappop(self.deadlines)
            if self._live(deadline):
                due.append((deadline[2], deadline[1]))
        return [j for _, j in sorted(due)]

    def __call__(self, state: BlindState) -> Decision:
        """The decision at ``state.t``: extensions and kills, then starts (module docstring)."""
        t = state.t
        for j, _ in state.completed:
            self.reserved -= self.s[j] + self.running.pop(j)[1]
        for i in state.arrived:
            self._enqueue(i)
        kill = []
        for j in self._outliving(t):
            p, R = self.running[j]
            self.level[j] += 1  # o_j > R <= cap: a next level exists
            longer = self._reservation(j)
            if self.extend and self.reserved + longer - R <= self.M:
                self.reserved += longer - R
                self._run(j, p, longer)
            else:
                self.reserved -= self.s[j] + R
                del self.running[j]
                self._enqueue(j)
                kill.append(j)
        start = []
        while self.queue:
            h = self.queue[0][1]
            R = self._reservation(h)
            if self.reserved + self.s[h] + R > self.M:
                break
            heapq.heappop(self.queue)
            self.reserved += self.s[h] + R
            self._run(h, t, R)
            start.append(h)
        while self.deadlines and not self._live(self.deadlines[0]):
            heapq.heappop(self.deadlines)  # attempts that completed or were killed
        wake = self.deadlines[0][0] if self.deadlines else None
        return Decision(kill=kill, start=start, wake=wake)
