"""The staggered pipeline and geometric batching: ``sps``, ``gba``, ``gba-d`` (SPEC section 4.2).

Source: Feng, Yang, Zhang, arXiv 2601.22996 (January 2026). Its theorems assume **one common
prompt length** ``s`` for every request, all arriving at round 0. Only the abstract and
third-party summaries of the paper were available to us, so every formula below is **our
reading** of those summaries (``docs/results/algorithms.md`` says what was recovered):

* **Staggered pipeline (SPS).** Requests that all fit a window of ``L`` rounds (``o_i <= L``)
  run in ``K`` *slots*. Slot ``j`` (``j = 0 .. K-1``) starts a request at rounds
  ``off_j + c L``, ``c = 0, 1, ...``, with ``off_j = floor(j L / K)``: the slots' growing memory
  triangles interleave instead of peaking together. A slot's request holds at most ``s + phase``
  tokens, ``phase = ((r - 1 - off_j) mod L) + 1``, so the memory never exceeds
  ``peak(K) = K s + max_r sum_j phase_j(r)`` (:func:`pipeline_peak`), and ``K`` is the largest
  width with ``peak(K) <= M`` (:func:`pipeline_width`; about ``(M - L/2) / (s + L/2)``,
  against ``floor(M / (s + L))`` for starting together). The requests enter the slots by
  ``o_i`` ascending (ties by index): the ``q``-th goes to slot ``q mod K`` in cycle
  ``q // K``. The paper proves SPS a 2-approximation on requests of one length (as
  summarised); ``sps`` is SPS over all requests with ``L = max_i o_i``.
* **GBA, geometric batching.** Requests fall in classes by decode length,
  ``beta alpha^(k-1) < o_i <= beta alpha^k`` (class 0: ``o_i <= beta``); the classes run
  shortest first, one after another (class ``k`` begins when the last request of class
  ``k - 1`` completes), each as an SPS with window ``L_k = min(beta alpha^k, M - s)`` (the
  class bound; no request needs more, since ``s + o_i <= M``). GBA never kills: ``o_i`` fits
  its class window. The paper's ratio is 10.67 (6.75 with large memory); the ``alpha`` and
  ``beta`` behind those constants were not recovered, so the defaults are ``alpha = 2`` (the
  paper's experiments use it for GSA) and ``beta = 1``: classes ``o_i <= 2^k``, every window
  within a factor 2 of its requests' decode lengths (with GSA's ``beta = 64`` on requests of
  2 tokens, the window is 32 times too long and GBA measured 12.9 times the optimum).
* **GBA-D** starts a request early when memory allows, never delaying another. Our reading:
  take GBA's starts; visit the requests by GBA start (ties by index) and move each to the
  earliest round at or after its arrival and the previous visited request's new start at which
  it fits beside every other request at its current start (those visited at their new starts,
  the others at GBA's): list scheduling of GBA's order in which the requests not yet visited
  hold their GBA starts as reservations. Its GBA start stays feasible throughout (every
  earlier move was checked against it), so no request starts later than in GBA and
  ``TEL(gba-d) <= TEL(gba)``: GBA's guarantee holds.

Outside the theorems' assumptions (our reading): with **heterogeneous prompts** the pipeline
plans with the stand-in ``s = max_i s_i``, which keeps every schedule feasible (a request never
holds more than the plan allows) but carries no guarantee; a class whose window would be cut
below its longest request by ``M - s`` gets that request's length as window, and when then
``s + L > M`` the class runs in one slot, one request at a time (each fits alone,
``s_i + o_i <= M``); ``gba-d`` moves each request by its true ``s_i``. With **arrivals** the
pipeline begins at the last arrival (the paper is offline); ``gba-d`` may move a request down
to its own arrival.
"""

from __future__ import annotations

import math
import time

import numpy as np

from ..instance import Instance
from ..kernels import jit
from ..schedule import Schedule

__all__ = [
    "GBA_ALPHA",
    "GBA_BETA",
    "pipeline_peak",
    "pipeline_width",
    "staggered_starts",
    "geometric_classes",
    "class_bound",
    "ProfileTooLongError",
    "sps",
    "gba",
    "gba_d",
    "check_gba_options",
]

#: Default growth factor of the decode-length classes (our reading: the value the paper's
#: experiments use for GSA, arXiv 2601.22996).
GBA_ALPHA = 2.0
#: Default bound of the first class, tokens (our reading: classes ``o_i <= 2^k`` keep every
#: window within ``alpha`` of its requests' decode lengths; a first class of 64 tokens, the
#: value GSA's experiments slice with, gave TEL 12.9 times the proven optimum on identical
#: requests with ``o_i = 2``, above the paper's 10.67, ``reproduce ratios``).
GBA_BETA = 1


def _offsets(width: int, window: int) -> np.ndarray:
    """Slot offsets ``floor(j L / K)``, ``j = 0 .. K-1`` (rounds), ascending."""
    return (np.arange(width, dtype=np.int64) * window) // width


def pipeline_peak(width: int, window: int, prefill: int) -> int:
    """Largest memory of a full staggered pipeline (tokens).

    Parameters
    ----------
    width : int
        Slots ``K >= 1``.
    window : int
        Window ``L >= 1`` (rounds): every request of the pipeline has ``o_i <= L``.
    prefill : int
        Prompt length ``s`` (tokens) every slot plans with.

    Returns
    -------
    int
        ``K s + max over r of sum_j (((r - 1 - off_j) mod L) + 1)``: with ``x = r - 1``, the sum
        is ``K x - sum_j off_j + L #{j : off_j > x} + K``, which rises with ``x`` between
        offsets, so its maximum is at ``x = L - 1`` or just before an offset. O(K).

    Notes
    -----
    Source: ours (the staggered pipeline of arXiv 2601.22996 as summarised, module docstring).
    """
    off = _offsets(width, window)
    xs = np.concatenate((off[off >= 1] - 1, [window - 1]))
    above = width - np.searchsorted(off, xs, side="right")
    total = width * xs - int(off.sum()) + window * above + width
    return int(width * prefill + total.max())


def pipeline_width(window: int, prefill: int, memory: int, most: int | None = None) -> int:
    """The widest staggered pipeline that fits the KV cache (slots ``K``).

    Parameters
    ----------
    window : int
        ``L`` (rounds), ``prefill + L <= memory``.
    prefill : int
        ``s`` (tokens).
    memory : int
        ``M`` (tokens).
    most : int, optional
        Largest width wanted (the requests to run: more slots would stay empty).

    Returns
    -------
    int
        ``most`` when :func:`pipeline_peak` of ``most`` slots is ``<= M``; otherwise a width
        ``K >= 1`` with ``peak(K) <= M < peak(K + 1)``, found by bisection between ``K = 1``
        (fits: ``s + L <= M``) and ``K = floor(M / (s + 1)) + 1`` (does not: every slot holds
        at least ``s + 1`` tokens in every round of a full pipeline). ``peak`` is not known to
        be monotone in ``K``, so this is the widest fitting width below the first width that
        does not fit on the bisection's path; O(K log M).

    Raises
    ------
    ValueError
        ``prefill + window > memory``, ``window < 1`` or ``most < 1``.

    Notes
    -----
    Source: arXiv 2601.22996 (summarised: about ``(M - L/2) / (s + L/2)`` slots); the search
    is ours.
    """
    if window < 1 or prefill + window > memory:
        raise ValueError(
            f"a window of {window} rounds with prompt {prefill} does not fit M = {memory}"
        )
    if most is not None and most < 1:
        raise ValueError(f"most must be at least 1, got {most}")
    lo, hi = 1, memory // (prefill + 1) + 1
    if most is not None and most < hi:
        if pipeline_peak(most, window, prefill) <= memory:
            return most
        hi = most
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if pipeline_peak(mid, window, prefill) <= memory:
            lo = mid
        else:
            hi = mid
    return lo


def staggered_starts(decode: np.ndarray, window: int, width: int, begin: int) -> np.ndarray:
    """Starts of requests run by a staggered pipeline, given in the order they enter it.

    Parameters
    ----------
    decode : ndarray of int, shape (q,)
        ``o_i <= window`` of the requests, in entry order.
    window, width : int
        ``L`` (rounds) and ``K`` (slots).
    begin : int
        Round at which slot 0 starts its first request.

    Returns
    -------
    ndarray of int64, shape (q,)
        The ``q``-th request starts at ``begin + (q // K) L + off_(q mod K)``.

    Notes
    -----
    Source: ours (module docstring).
    """
    q = np.arange(len(decode), dtype=np.int64)
    return begin + (q // width) * window + _offsets(width, window)[q % width]


def geometric_classes(decode: np.ndarray, alpha: float, beta: int) -> np.ndarray:
    """GBA's class of every request: the least ``k >= 0`` with ``o_i <= beta alpha^k``.

    Parameters
    ----------
    decode : ndarray of int, shape (n,)
        ``o_i`` (tokens).
    alpha : float
        Growth factor, ``> 1``.
    beta : int
        Bound of class 0 (tokens), ``>= 1``.

    Returns
    -------
    ndarray of int64, shape (n,)

    Notes
    -----
    Source: arXiv 2601.22996 (geometric classes, as summarised); exact integer comparison ours.
    """
    o = np.asarray(decode, dtype=np.int64)
    if len(o) == 0:
        return np.zeros(0, dtype=np.int64)
    # closed form (an alpha just above 1 would need millions of bounds one by one), then an
    # exact fix-up of the float estimate against class_bound itself
    est = np.ceil((np.log(np.maximum(o, 1)) - math.log(beta)) / math.log(alpha))
    ks = np.maximum(est, 0).astype(np.int64)
    cls = np.empty(len(o), dtype=np.int64)
    cache: dict[int, int] = {}

    def bound(k: int) -> int:
        if k not in cache:
            cache[k] = class_bound(alpha, beta, k)
        return cache[k]

    for i, (oi, k) in enumerate(zip(o.tolist(), ks.tolist(), strict=True)):
        while bound(k) < oi:
            k += 1
        while k > 0 and bound(k - 1) >= oi:
            k -= 1
        cls[i] = k
    return cls


def class_bound(alpha: float, beta: int, k: int) -> int:
    """Upper decode bound of GBA's class ``k``: ``floor(beta alpha^k)`` tokens, capped at
    ``2^41`` (above any decode length an instance allows), so that no ``alpha`` overflows.

    Source: arXiv 2601.22996 (geometric classes, as summarised); the cap is ours.
    """
    x = math.log(beta) + k * math.log(alpha)
    if x >= 41 * math.log(2):
        return 2**41
    return min(2**41, math.floor(beta * alpha**k))


def check_gba_options(alpha: float = GBA_ALPHA, beta: int = GBA_BETA) -> tuple[float, int]:
    """``(alpha, beta)`` of ``gba`` and ``gba-d`` as float and int, checked.

    Raises
    ------
    ValueError
        ``alpha`` not a finite number ``> 1``; ``beta`` not an integer in ``[1, 2^40]``.

    Notes
    -----
    Source: ours (the class bounds ``beta alpha^k`` need ``alpha > 1`` and ``beta >= 1``). The
    policy registry calls it before a comparison starts.
    """
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not alpha > 1:
        raise ValueError(f"alpha must be a number > 1, got {alpha!r}")
    if not math.isfinite(alpha):
        raise ValueError(f"alpha must be finite, got {alpha!r}")
    if isinstance(beta, bool) or not isinstance(beta, (int, np.integer)) or not 1 <= beta <= 2**40:
        raise ValueError(f"beta must be an integer in [1, 2^40], got {beta!r}")
    return float(alpha), int(beta)


def _gba_starts(
    instance: Instance, alpha: float, beta: int | None
) -> tuple[np.ndarray, list[dict[str, int]]]:
    """GBA's starts (rounds, shape (n,)) and one record per class; ``beta=None``: one class
    of window ``max o_i`` (SPS)."""
    n = instance.n
    start = np.zeros(n, dtype=np.int64)
    if n == 0:
        return start, []
    s_bar = int(instance.prefill.max())
    o = instance.decode.astype(np.int64)
    M = instance.memory
    if beta is None:
        cls = np.zeros(n, dtype=np.int64)
        windows = {0: int(o.max())}
    else:
        cls = geometric_classes(o, alpha, beta)
        windows = {}
        for k in np.unique(cls).tolist():
            windows[k] = min(class_bound(alpha, beta, k), M - s_bar)
    t = int(instance.arrival.max())
    records = []
    for k in sorted(windows):
        members = np.flatnonzero(cls == k)
        members = members[np.lexsort((members, o[members]))]
        # with heterogeneous prompts the cap M - s_bar can cut below a member's o_i, and
        # s_bar + L can exceed M: then the window covers the longest member and one slot runs
        # the class one request at a time (a request alone fits)
        window = max(windows[k], int(o[members].max()))
        fits = s_bar + window <= M
        width = pipeline_width(window, s_bar, M, int(members.size)) if fits else 1
        start[members] = staggered_starts(o[members], window, width, t)
        records.append(
            {"class": k, "requests": int(members.size), "window": window, "width": width}
        )
        t = int((start[members] + o[members]).max())
    return start, records


def _pipeline_schedule(
    instance: Instance, name: str, alpha: float, beta: int | None, t0: float
) -> Schedule:
    start, records = _gba_starts(instance, alpha, beta)
    sched = Schedule(instance, start, policy=name)
    sched.info.update(
        classes=records,
        planned_prefill=int(instance.prefill.max()) if instance.n else 0,
        runtime_s=time.perf_counter() - t0,
    )
    return sched


def sps(instance: Instance) -> Schedule:
    """``sps``: one staggered pipeline over every request, window ``L = max_i o_i``.

    Parameters
    ----------
    instance : Instance
        Requests ``(s_i, o_i, a_i)`` and the KV-cache budget ``M`` (tokens).

    Returns
    -------
    Schedule
        Feasible; ``info``: ``classes`` (one record: requests, window ``L``, width ``K``),
        ``planned_prefill`` (the ``s`` planned with, ``max_i s_i``), ``runtime_s``.

    Notes
    -----
    A 2-approximation on requests of one length and one prompt length (arXiv 2601.22996, as
    summarised). Our reading: module docstring. Source: SPEC section 4.2.
    """
    return _pipeline_schedule(instance, "sps", 2.0, None, time.perf_counter())


def gba(instance: Instance, *, alpha: float = GBA_ALPHA, beta: int = GBA_BETA) -> Schedule:
    """``gba``: geometric batching, each decode-length class an SPS, shortest class first.

    Parameters
    ----------
    instance : Instance
        Requests ``(s_i, o_i, a_i)`` and the KV-cache budget ``M`` (tokens).
    alpha : float, default 2
        Class growth factor, ``> 1``.
    beta : int, default 1
        Bound of the first class (tokens).

    Returns
    -------
    Schedule
        Feasible; ``info``: ``classes`` (per non-empty class: ``class``, ``requests``,
        ``window``, ``width``), ``planned_prefill``, ``runtime_s``.

    Raises
    ------
    ValueError
        ``alpha <= 1`` or not finite, ``beta`` not a positive integer.

    Notes
    -----
    Ratio 10.67, 6.75 with large memory (arXiv 2601.22996, one common prompt length, all at
    round 0; the parameters behind the constants were not recovered). Our reading: module
    docstring. Source: SPEC section 4.2.
    """
    alpha, beta = check_gba_options(alpha, beta)
    return _pipeline_schedule(instance, "gba", alpha, beta, time.perf_counter())


@jit
def _pull_forward(profile, s, o, a, order, start, memory):  # pragma: no cover - compiled
    """Move each request of ``order`` to its earliest fitting round at or after the previous
    one's new start (GBA-D, module docstring). ``profile[r]`` is the memory of round ``r`` with
    every request at ``start``; both are updated in place."""
    floor = 0
    for i in order:
        si, oi, pi = s[i], o[i], start[i]
        for j in range(1, oi + 1):
            profile[pi + j] -= si + j
        t = a[i] if a[i] > floor else floor
        while t < pi:
            nxt = t
            for j in range(1, oi + 1):
                r = t + j
                need = profile[r] + si + r - memory  # the smallest start that fits round r
                if need > nxt:
                    nxt = need if need < r else r
            if nxt == t:
                break
            t = nxt
        if t > pi:
            t = pi
        start[i] = t
        floor = t
        for j in range(1, oi + 1):
            profile[t + j] += si + j


class ProfileTooLongError(ValueError):
    """GBA-D refuses an instance whose GBA schedule spans more rounds than its memory profile
    holds (:data:`GBA_D_MAX_ROUNDS`); a comparison reports the policy as skipped. Source: ours."""


#: Largest span of rounds GBA-D's memory profile may cover (two int64 arrays of this length
#: at the peak: 2 GiB).
GBA_D_MAX_ROUNDS = 2**27


def gba_d(instance: Instance, *, alpha: float = GBA_ALPHA, beta: int = GBA_BETA) -> Schedule:
    """``gba-d``: GBA whose requests start early when memory allows, never delaying another.

    Parameters
    ----------
    instance : Instance
        Requests ``(s_i, o_i, a_i)`` and the KV-cache budget ``M`` (tokens).
    alpha, beta
        As :func:`gba`.

    Returns
    -------
    Schedule
        Feasible, every start ``<=`` GBA's, so ``TEL <= TEL(gba)``; ``info``: as :func:`gba`
        plus ``gba_tel`` (GBA's TEL) and ``moved`` (requests started earlier).

    Raises
    ------
    ValueError
        As :func:`gba`; or GBA's schedule spans more than :data:`GBA_D_MAX_ROUNDS` rounds
        from the window's floor (the memory profile would not fit).

    Notes
    -----
    One pass in GBA's start order over a dense memory profile of all requests; the search for a
    request's round jumps past every violated round (the exact jump of
    :mod:`lpsched.executor`) and starts at the previous request's new start, so the starts stay
    in GBA's order and the pass costs O(sum o_i) per candidate round tried, not a scan from
    round 0 per request (which took 97 s at n = 10^5). No request moves before
    ``max_i a_i - sum_i o_i`` (a floor that keeps the profile's span within GBA's makespan
    plus ``sum o_i``; far-apart arrivals would otherwise need a profile of every round
    between them). Source: arXiv 2601.22996 (GBA-D, summarised); the rule is our reading
    (module docstring), SPEC section 4.2.
    """
    t0 = time.perf_counter()
    alpha, beta = check_gba_options(alpha, beta)
    base, records = _gba_starts(instance, alpha, beta)
    s = instance.prefill.astype(np.int64)
    o = instance.decode.astype(np.int64)
    start = base.copy()
    if instance.n:
        a = instance.arrival.astype(np.int64)
        lo = max(int(a.min()), int(a.max()) - int(o.sum()))
        span = int((base + o).max()) - lo + 2
        if span > GBA_D_MAX_ROUNDS:
            raise ProfileTooLongError(
                f"GBA's schedule spans {span:,} rounds, more than the {GBA_D_MAX_ROUNDS:,} "
                "GBA-D's memory profile holds; run gba instead"
            )
        profile = _profile(s, base - lo, o, span)
        order = np.lexsort((np.arange(instance.n), base)).astype(np.int64)
        moved = base - lo
        _pull_forward(profile, s, o, np.maximum(a - lo, 0), order, moved, instance.memory)
        start = moved + lo
    sched = Schedule(instance, start, policy="gba-d")
    sched.info.update(
        classes=records,
        planned_prefill=int(instance.prefill.max()) if instance.n else 0,
        gba_tel=int((base + o - instance.arrival).sum()),
        moved=int((start < base).sum()),
        runtime_s=time.perf_counter() - t0,
    )
    return sched


def _profile(s: np.ndarray, start: np.ndarray, o: np.ndarray, rounds: int) -> np.ndarray:
    """Memory ``m(r)`` of every round ``r < rounds`` (tokens, SPEC section 2), by second
    differences: a request adds ``s + r - p`` on ``p < r <= p + o``."""
    # m(r) = sum over the active requests of (s - p), plus r times their count; built in
    # place, two arrays of ``rounds`` at the peak (the profile may hold 2^27 rounds)
    const = np.zeros(rounds + 1, dtype=np.int64)
    np.add.at(const, start + 1, s - start)
    np.add.at(const, start + o + 1, -(s - start))
    np.cumsum(const, out=const)
    count = np.zeros(rounds + 1, dtype=np.int64)
    np.add.at(count, start + 1, 1)
    np.add.at(count, start + o + 1, -1)
    np.cumsum(count, out=count)
    for lo in range(0, rounds, _CHUNK):
        hi = min(lo + _CHUNK, rounds)
        count[lo:hi] *= np.arange(lo, hi, dtype=np.int64)
    const += count
    return const[:rounds]


#: Rounds per slice when the profile multiplies each round's count by its index.
_CHUNK = 1 << 20
