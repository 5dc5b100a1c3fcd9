"""Policies for unknown decode lengths: A_max, A_min and Sorted-F+Amin (SPEC sections 6 and 11).

Each request has a known interval ``l_i <= o_i <= u_i`` (``decode_lo``, ``decode_hi``; build them
with :mod:`lpsched.generators.intervals`); ``o_i`` is revealed only when the request finishes.
The three policies are non-clairvoyant: each is one :class:`AMinPolicy` built on a
:class:`~lpsched.blind.BlindView` that shows the intervals (``reveal="interval"``) and run by the
blind executor :func:`~lpsched.blind.run_blind`, which tells it of completions and applies the
evictions it chooses (kills, SPEC section 11). They differ in the initial estimates and the list:

* ``amax`` -- plan with ``e_i = u_i``, list by ``u_i`` (then index). Reads the upper bounds only;
  never evicts (an estimate never falls below ``o_i``), but reserves memory that is not used.
* ``amin`` -- start from ``e_i = l_i``, list by the current ``e_i`` (then index), raise an
  estimate when a request outlives it, evict (least progress first) when the true memory of the
  next round would exceed ``M``.
* ``sorted-f-amin`` -- as ``amin``, but the list is Sorted-F's Phase 1 on the current estimates
  (sizes ``s_i + e_i``), recomputed for the waiting requests whenever a request is evicted (the
  only moment a waiting request's estimate changes).

The rules of :class:`AMinPolicy`, at every decision time ``t`` it is asked at (after round ``t``,
before round ``t+1``; the executor has already removed the attempts that completed at ``t``):

1. (``online``) the requests that arrived join the planner;
2. each running request that has emitted ``g_j = t - p_j`` tokens (and so has ``o_j >= g_j + 1``)
   raises its estimate to ``e_j = max(e_j, g_j + 1)``;
3. if the memory of round ``t+1``, ``sum_j (s_j + g_j + 1)`` (known without any ``o_j``), exceeds
   ``M``, running requests are evicted (killed), least progress ``g_j`` first (ties: larger index
   first), until it fits; an evicted request loses its KV cache and progress, keeps its estimate
   (``e_j >= g_j + 1`` after step 2, so SPEC's ``max(e_j, g_j)`` changes nothing) and rejoins the
   planner;
4. the planner's list is walked in order and its head ``h`` is started (``p_h = t``) while the
   list executor's check of SPEC section 4 passes with every running request ``j`` assumed to run
   until ``p_j + e_j`` and ``h`` until ``t + e_h``; the walk stops at the first request that is not
   started (or, unless ``online``, has not arrived).

Step 4 checks round ``t+1`` with every running request (``p_j + e_j >= t+1`` after step 2), so
no round ever holds more than ``M`` tokens. With exact intervals (``e_i = o_i``) steps 2 and 3
never act and the policy is the list executor of SPEC section 4 run on the planner's list.

Decision times (ours). The blind executor asks at every completion, every arrival and the last
time before the running set's memory would exceed ``M`` (where step 3 acts). Between those the
policy's own admission can change only when its blocked head could fit: it asks to be woken
(:attr:`~lpsched.blind.Decision.wake`) at the head's arrival (offline) or its exact jump from
:meth:`~lpsched.executor.FutureMemory.next_start`. Between visits estimates only grow, which only
raises the estimated memory, so the jump stays a valid lower bound; and an estimate ``e_j`` read at
``t`` is ``max(e_j at its start, t - p_j + 1)`` whichever times were visited before, so the
schedule is that of a policy asked at every round. Each visit costs O(K log K) to rebuild the
estimated future memory of the K running requests.

Source: Chen, Ye, Zhou, arXiv 2508.14544 (A_min and A_max, sections 3-4), in our reading fixed
by SPEC section 6; Sorted-F+Amin combines it with Sorted-F (arXiv 2508.06133, section 4) as SPEC
section 6 asks; the blind model is SPEC section 11; the event skipping is ours.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..blind import BlindSpec, BlindState, BlindView, Decision, Reveal, run_blind
from ..executor import FutureMemory
from ..instance import Instance, quote
from ..schedule import Schedule
from .planners import KeyPlanner, SortedFPlanner

__all__ = [
    "AMinPolicy",
    "IntervalSpec",
    "amax",
    "amin",
    "sorted_f_amin",
    "AMAX",
    "AMIN",
    "SORTED_F_AMIN",
    "AMIN_OPTIONS",
]

#: Keyword options of the three policies (for the registry).
AMIN_OPTIONS = ("online",)


class AMinPolicy:
    """A_min's rules as a blind policy: a planner's list on estimated decode lengths, estimates
    raised as requests outlive them, evictions least progress first (module docstring).

    Parameters
    ----------
    view : BlindView
        The instance without ``o_i``: ``s_i``, ``a_i`` and ``M`` are read.
    planner : KeyPlanner or SortedFPlanner
        Holds the waiting set and yields the priority list (see
        :mod:`lpsched.policies.planners`); it should read its keys from ``estimate``.
    estimate : list of int, length n
        Initial estimates ``e_i`` in tokens (``l_i`` for A_min, ``u_i`` for A_max), each with
        ``1 <= e_i`` and ``s_i + e_i <= M``. Updated in place (steps 2-3 of the module
        docstring), so a planner holding the same list sees the new values.
    online : bool, default False
        False: every request is in the planner from the start and the strict walk stops at a
        head that has not arrived (SPEC section 4). True: a request joins the planner at its
        arrival round (SPEC section 5).

    Raises
    ------
    ValueError
        ``estimate`` has the wrong length or an ``e_i < 1`` or ``s_i + e_i > M``.

    Notes
    -----
    Called by :func:`~lpsched.blind.run_blind` with a :class:`~lpsched.blind.BlindState` at
    every decision time visited; returns the evictions (kills), the starts and the time of its
    blocked head (``wake``). Source: SPEC sections 6 and 11 (ours: the policy form and the
    event skipping).
    """

    def __init__(
        self, view: BlindView, planner: Any, estimate: list[int], *, online: bool = False
    ) -> None:
        self.s = view.prefill.tolist()
        self.a = view.arrival.tolist()
        self.M = view.memory
        self.planner = planner
        self.e = estimate
        self.online = online
        _check_estimates(view, estimate, self.s)
        if not online:
            for i in range(view.n):
                planner.add(i)

    def __call__(self, state: BlindState) -> Decision:
        """Steps 1-4 of the module docstring at decision time ``state.t``."""
        t, running, e = state.t, state.running, self.e
        if self.online:
            for i in state.arrived:
                self.planner.add(i)
        for j, p in running.items():
            if e[j] < t - p + 1:
                e[j] = t - p + 1
        kill = self._evict(state) if state.memory_next > self.M else []
        start, wake = self._admit(running, set(kill), t)
        return Decision(kill=kill, start=start, wake=wake)

    def _evict(self, state: BlindState) -> list[int]:
        """Step 3: evict least progress first (ties: larger index first) while round ``t+1``
        overflows; the evicted rejoin the planner."""
        t, used = state.t, state.memory_next
        victims = sorted(state.running.items(), key=lambda jp: (-jp[1], -jp[0]))
        kill: list[int] = []
        for j, p in victims:
            if used <= self.M:
                break
            used -= self.s[j] + t + 1 - p
            kill.append(j)
            self.planner.add(j)
        return kill

    def _admit(self, running: Any, killed: set[int], t: int) -> tuple[list[int], int | None]:
        """Step 4: start the planner's head while it has arrived and passes the check with the
        estimates. Returns the started requests and the round the blocked head waits for (the
        arrival of one not arrived or its exact jump; None when nothing waits)."""
        s, e, planner = self.s, self.e, self.planner
        fm = FutureMemory(self.M)
        for j, p in running.items():
            if j not in killed:
                fm.add(s[j], p, e[j])
        start: list[int] = []
        while True:
            h = planner.head()
            if h is None:
                return start, None
            if self.a[h] > t:
                return start, self.a[h]
            nxt = fm.next_start(s[h], e[h], t)
            if nxt != t:
                return start, nxt
            planner.pop()
            start.append(h)
            fm.add(s[h], t, e[h])


def _check_estimates(view: BlindView, e: list[int], s: list[int]) -> None:
    """``ValueError`` unless ``e`` holds ``n`` estimates ``e_i >= 1`` with ``s_i + e_i <= M``."""
    n, M = view.n, view.memory
    if len(e) != n:
        raise ValueError(f"estimate has {len(e)} values for {n} requests")
    for i in range(n):
        if e[i] < 1 or s[i] + e[i] > M:
            raise ValueError(
                f"request {quote(view.ids[i])}: estimate {e[i]} must be >= 1 with prefill "
                f"{s[i]} + estimate <= M = {M}"
            )


def _sees_intervals(**options: Any) -> Reveal:
    return "interval"


@dataclass(frozen=True)
class IntervalSpec(BlindSpec):
    """A :class:`~lpsched.blind.BlindSpec` of a policy built on the prediction intervals.

    Attributes
    ----------
    build : callable
        ``build(view, **options) -> AMinPolicy``.
    reveal : callable
        Always ``"interval"``.
    who : str
        The policy's name in the error of an instance without intervals.

    Notes
    -----
    :meth:`run` adds to the executor's ``info`` the keys of SPEC section 6: ``evictions`` (the
    kills) and, for a Sorted-F planner, ``replans`` (Phase-1 restarts). Source: ours.
    """

    reveal: Callable[..., Reveal] = _sees_intervals
    who: str = ""

    def run(
        self, instance: Instance, *, name: str = "", record: bool = False, **options: Any
    ) -> Schedule:
        """Build the policy on the view of ``instance`` with its intervals ``[l_i, u_i]``
        (tokens) and run it.

        The parameters are those of :meth:`BlindSpec.run <lpsched.blind.BlindSpec.run>`; the
        options are ``online`` and Sorted-F+Amin's Phase-1 options.

        Returns
        -------
        Schedule
            With ``runs`` (every run, evicted ones included) and ``info`` as
            :func:`~lpsched.blind.run_blind`'s plus ``evictions`` (and ``replans``).

        Raises
        ------
        ValueError
            The instance has no intervals; a bad option value.
        """
        if not instance.has_intervals:
            raise ValueError(
                f"{self.who} needs prediction intervals (decode_lo, decode_hi) on instance "
                f"{instance.name!r}; add them with 'lpsched generate ... --intervals' or "
                "lpsched.generators.intervals (exact, multiplicative, binned, no_information)"
            )
        policy = self.build(BlindView.of(instance, "interval"), **options)
        assert isinstance(policy, AMinPolicy)  # the builds of this module
        sched = run_blind(instance, policy, name=name, record=record)
        sched.info["evictions"] = sched.info["kills"]
        if isinstance(policy.planner, SortedFPlanner):
            sched.info["replans"] = policy.planner.replans
        return sched


def _build_amax(view: BlindView, *, online: bool = False) -> AMinPolicy:
    assert view.decode_hi is not None  # reveal="interval"
    e = view.decode_hi.tolist()
    return AMinPolicy(view, KeyPlanner(e), e, online=online)


def _build_amin(view: BlindView, *, online: bool = False) -> AMinPolicy:
    assert view.decode_lo is not None  # reveal="interval"
    e = view.decode_lo.tolist()
    return AMinPolicy(view, KeyPlanner(e), e, online=online)


def _build_sorted_f_amin(
    view: BlindView, solver: str = "auto", *, online: bool = False, **quantile_greedy: Any
) -> AMinPolicy:
    """A_min's policy on Sorted-F's list; ``quantile_greedy`` (``sample_size``, ``quantile``,
    ``seed``) goes to the planner, whose defaults apply."""
    assert view.decode_lo is not None  # reveal="interval"
    e = view.decode_lo.tolist()
    planner = SortedFPlanner(view.prefill.tolist(), e, view.memory, solver, **quantile_greedy)
    return AMinPolicy(view, planner, e, online=online)


#: The registry's specs of the three policies (SPEC section 11).
AMAX = IntervalSpec(_build_amax, who="amax")
AMIN = IntervalSpec(_build_amin, who="amin")
SORTED_F_AMIN = IntervalSpec(_build_sorted_f_amin, who="sorted-f-amin")


def amax(instance: Instance, *, online: bool = False) -> Schedule:
    """A_max: plan every request with its upper bound ``u_i``.

    Parameters
    ----------
    instance : Instance
        With intervals ``[l_i, u_i]`` (tokens); only ``u_i`` is used.
    online : bool, default False
        Requests join the list at their arrival (SPEC section 5) instead of blocking the
        strict walk until they arrive (SPEC section 4).

    Returns
    -------
    Schedule
        With ``runs`` (one per request: A_max never evicts) and ``info`` as
        :meth:`IntervalSpec.run`.

    Raises
    ------
    ValueError
        The instance has no intervals.

    Notes
    -----
    Source: A_max of arXiv 2508.14544, section 3 (list by ``u_i``, ties by index: MC-SF on
    the upper bounds), blind (SPEC section 11): it learns ``o_i`` only at completion.
    """
    return AMAX.run(instance, name="amax", online=online)


def amin(instance: Instance, *, online: bool = False) -> Schedule:
    """A_min: plan with lower bounds ``l_i``, raise estimates as requests outlive them, evict.

    Parameters
    ----------
    instance, online
        As :func:`amax`, but only ``l_i`` of the intervals is used.

    Returns
    -------
    Schedule
        With ``runs`` (every run, evicted ones included); ``info["evictions"]`` and
        ``info["wasted_tokens"]``. TEL counts from arrival to final completion.

    Raises
    ------
    ValueError
        As :func:`amax`.

    Notes
    -----
    The list is by the current estimate ``e_i`` (then index); an evicted request rejoins with
    its raised estimate. Source: A_min of arXiv 2508.14544, section 4, as fixed by SPEC
    section 6; blind (SPEC section 11).
    """
    return AMIN.run(instance, name="amin", online=online)


def sorted_f_amin(
    instance: Instance,
    solver: str = "auto",
    *,
    online: bool = False,
    sample_size: int = 256,
    quantile: float = 0.9,
    seed: int = 0,
) -> Schedule:
    """Sorted-F+Amin: Sorted-F's list on the current estimates, A_min's eviction rule.

    Parameters
    ----------
    instance : Instance
        With intervals ``[l_i, u_i]`` (tokens); estimates start at ``l_i``.
    solver : {"auto", "dp", "swap", "quantile"}
        Phase-1 solver (``auto`` resolves by ``n`` as offline Sorted-F).
    online : bool, default False
        See :func:`amax`.
    sample_size, quantile, seed
        Quantile-greedy parameters (:class:`~lpsched.policies.quantile.QuantileGreedy`).

    Returns
    -------
    Schedule
        As :func:`amin`; ``info["replans"]`` counts Phase-1 restarts.

    Raises
    ------
    ValueError
        The instance has no intervals; an unknown solver.

    Notes
    -----
    Phase 1 restarts from the waiting set after every eviction (and, online, every arrival),
    computed lazily batch by batch (:class:`~lpsched.policies.planners.SortedFPlanner`).
    Source: SPEC section 6 (our combination of arXiv 2508.06133 and arXiv 2508.14544); blind
    (SPEC section 11).
    """
    return SORTED_F_AMIN.run(
        instance,
        name="sorted-f-amin",
        solver=solver,
        online=online,
        sample_size=sample_size,
        quantile=quantile,
        seed=seed,
    )
