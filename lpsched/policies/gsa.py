"""Geometric slicing: the blind policies ``gsa`` and ``gsa-spec`` (SPEC section 11.1).

Source: Feng, Yang, Zhang, *Competitive Non-Clairvoyant KV-Cache Scheduling for LLM
Inference*, arXiv 2601.22996 (January 2026). GSA is proven 61.92-competitive (32 with large
memory) for requests of **one common prompt length** ``s``, all arriving at round 0, whose
decode lengths are unknown until they finish, with kill and restart allowed [paper, abstract].
Only the abstract and third-party summaries were available to us, so every rule below that
goes beyond "phases ``p = 0, 1, ...`` with slices ``tau_p = beta alpha^p``, each unfinished
request one slice per phase in a staggered pipeline, the unfinished ones killed and retried"
is **our reading**:

* **Phases.** Phase ``p`` has the slice ``tau_p = floor(beta alpha^p)`` rounds (defaults
  ``alpha = 2``, ``beta = 64``, below). Its members are every request that has arrived and not
  finished when it begins, in the **queue order arrival, then index**. It runs them in one
  staggered pipeline (prompts of one length; with heterogeneous prompts one per prompt class,
  below) planned with the prompt ``s_p = max s_i`` over the pipeline's requests and the window
  ``L_p = min(tau_p, M - s_p)``; its width is ``K_p = pipeline_width(L_p, s_p, M,
  most=requests)``; lane (slot) ``j`` has offset ``off_j = floor(j L_p / K_p)`` and cycles
  ``[b, b + L_p]``, ``b = T + off_j + c L_p``, where ``T`` is the pipeline's first round
  (:mod:`lpsched.policies.pipeline`, SPEC section 4.2).
* **Attempts.** At a cycle start ``b`` a free lane starts the head of the queue with the cap
  ``b + L_p``: a *full* attempt (one slice). An attempt that completes leaves; a full attempt
  still running at its cap is killed and its request waits for the next phase.
* **Slot reuse.** A lane whose request finishes early at ``t`` inside its cycle ``[b, b + L_p]``
  starts the next request of the queue at once, capped at the **same** cycle end ``b + L_p``: a
  *truncated* attempt. It holds ``s_i + (r - t) <= s_p + (r - b)`` tokens in round ``r``, never
  more than the literal pipeline plans for that lane, so the plan's bound
  ``pipeline_peak(K_p, L_p, s_p) <= M`` holds in every round: memory safety by construction,
  no look-ahead needed. A truncated attempt still running at its cap did not get its slice: it
  is killed and goes back to the queue at its place (arrival, then index). Lanes at a cycle
  start take requests before lanes in mid-cycle, so every cycle start of a lane with a non-empty
  queue gives one request its full slice (the queue drains). A literal fixed-window reading
  leaves a lane idle until its next cycle: on the two-point instance (``s = 96``, ``M = 256``)
  a window of 64 rounds leaves room for one lane, and the 194 one-token requests would take 64
  rounds each.
* **Phase end.** The next pipeline (the next prompt class, or phase ``p + 1``) begins at the
  first decision time at which the current one has no attempt running and nothing left to
  start, so two pipelines never share the cache. With nobody unfinished the policy idles, and
  the next phase, at the next arrival, is phase 0 again.
* **Arrivals** (outside the theorem): a request that arrives during a phase joins the next one.
* **Heterogeneous prompts** (outside the theorem), option ``prompts``; every reading keeps the
  schedule feasible (each request holds at most what its lane plans, ``s_i <= s_p``) and none
  carries a guarantee:

  - ``"classes"`` (default): a phase runs one pipeline per prompt class
    ``2^(k-1) <= s_i < 2^k`` (``s_i = 0``: class 0), smallest class first, each planned with
    its own largest prompt (at most twice any of its prompts). With one prompt length this is
    GSA itself. On the default instance (prompts 1 to 4,051 tokens, median 32) it cuts
    ``gsa``'s TEL about 4 times against ``"max"``.
  - ``"max"``: one pipeline per phase, planned with the largest prompt of the phase (as
    ``gba`` plans).
  - ``"common"``: refuse an instance whose prompts differ (the theorem's setting only).

  When ``tau_p > M - s_p`` the cut window ``M - s_p`` still covers every request of the
  pipeline with ``s_i = s_p`` (``s_i + o_i <= M``): those finish, so the largest prompt left
  falls from phase to phase (absent arrivals) and the phases terminate.

**GSA-Spec** (option ``speculate``; the paper names it, the rule is our reading): the base GSA
schedule above, plus *speculative* attempts in the memory it leaves idle:

* At a decision time, after the base's kills and starts, if the running set (base and
  speculative) would exceed ``M`` in round ``t + 1`` there is a *shortage*: speculative attempts
  are killed, the latest started first (then the highest index), until it fits; base attempts
  are never killed for memory (the base alone fits by construction). A killed speculative
  request simply waits again (no slice is spent).
* Otherwise, speculative attempts start on the waiting requests (arrived, unfinished, not
  running) in the **reverse** queue order (latest arrival, then highest index first: the ones
  the base reaches last), each while ``s_i + 1`` fits in round ``t + 1`` beside everything
  running, stopping at the first that does not. A speculative attempt has no cap: it runs until
  it completes (the request leaves every queue) or a shortage kills it.
* The base skips a request that is running speculatively (it stays in the queue at its place
  and is taken once its speculative attempt has ended); a phase may end while some of its
  requests run speculatively (they are members of the next phase).
* After a shortage kill the policy asks to be woken at ``t + 1``, so that a free lane can take a
  request freed by the kill.

Defaults. ``alpha = 2`` and ``beta = 64`` are the values of the paper's experiments (the
smaller of their two ``beta``). Measured (TEL, rounds; ``fcfs`` and ``vllm`` give 185,892 on the
two-point instance):

=====================  ================  ================  ================
instance               beta = 1          beta = 64         beta = 256
=====================  ================  ================  ================
two-point, ``gsa``     22,262            104,847           208,515
two-point, ``spec``    22,262            29,391            42,063
default, ``gsa``       72,421,042        59,279,838        37,199,992
default, ``spec``      44,806,280        34,260,409        19,192,930
=====================  ================  ================  ================

A small ``beta`` serves short requests early (the two-point instance) but restarts long ones
more often and pays a drain at the end of every phase (the default instance); with
``beta = 256`` the window reaches ``M - s = 160`` at once on the two-point instance and ``gsa``
loses to ``fcfs`` (one lane against two). ``beta = 64`` beats ``fcfs`` and ``vllm`` on both.
Options ``alpha`` and ``beta`` are checked as ``gba``'s
(:func:`~lpsched.policies.pipeline.check_gba_options`).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from ..blind import BlindSpec, BlindState, BlindView, Decision
from .pipeline import check_gba_options, class_bound, pipeline_width

__all__ = [
    "GSA_ALPHA",
    "GSA_BETA",
    "GSA_MIN_ALPHA",
    "GSA_PROMPTS",
    "GSA",
    "GSA_SPEC",
    "GeometricSlicing",
    "check_gsa_options",
]

#: Default growth factor of the slices (the paper's experiments, arXiv 2601.22996).
GSA_ALPHA = 2.0
#: Default first slice, rounds (the paper's experiments used 64 and 256; module docstring).
GSA_BETA = 64
#: The readings of heterogeneous prompts: one pipeline per prompt class (default), one
#: pipeline planned with the largest prompt, or a refusal.
GSA_PROMPTS = ("classes", "max", "common")


#: Smallest slice growth factor accepted (ours; see :func:`check_gsa_options`).
GSA_MIN_ALPHA = 1.01


def check_gsa_options(
    alpha: float = GSA_ALPHA, beta: int = GSA_BETA, prompts: str = "classes"
) -> tuple[float, int, str]:
    """``(alpha, beta, prompts)`` of ``gsa`` and ``gsa-spec``, checked.

    Parameters
    ----------
    alpha : float, default 2
        Slice growth factor, ``>= 1.01`` (:data:`GSA_MIN_ALPHA`): closer to 1 the slices stay
        flat for hundreds of phases (measured on the default instance: 3 s at 1.01, more than
        10^6 decision times at 1.001).
    beta : int, default 64
        First slice (rounds), an integer in ``[1, 2^40]``.
    prompts : {"classes", "max", "common"}, default "classes"
        Heterogeneous prompts: one pipeline per prompt class, one planned with the phase's
        largest prompt, or refused (module docstring).

    Returns
    -------
    tuple of (float, int, str)

    Raises
    ------
    ValueError
        ``alpha`` or ``beta`` as :func:`~lpsched.policies.pipeline.check_gba_options`,
        ``alpha < 1.01``; ``prompts`` not one of :data:`GSA_PROMPTS`.

    Notes
    -----
    Source: ours. The policy registry calls it before a comparison starts.
    """
    alpha, beta = check_gba_options(alpha, beta)
    if alpha < GSA_MIN_ALPHA:
        raise ValueError(
            f"alpha must be >= {GSA_MIN_ALPHA} (closer to 1 the slices barely grow and a run "
            f"takes millions of phases), got {alpha!r}"
        )
    if prompts not in GSA_PROMPTS:
        raise ValueError(f"prompts must be one of {GSA_PROMPTS}, got {prompts!r}")
    return alpha, beta, prompts


@dataclass
class _Lane:
    """One slot of the phase's pipeline: its first cycle start (round) and its occupant."""

    first: int
    request: int = -1  # -1: free
    cap: int = 0  # the round at which the occupant's attempt is killed unless done
    full: bool = False  # started at a cycle start (a full slice)


class GeometricSlicing:
    """The GSA policy (and GSA-Spec with ``speculate=True``) on one blind view.

    Parameters
    ----------
    view : BlindView
        Prompts ``s_i``, arrivals ``a_i``, budget ``M`` (tokens); no ``o_i``.
    alpha, beta, prompts
        As :func:`check_gsa_options`.
    speculate : bool, default False
        Run GSA-Spec's speculative attempts in the memory the base schedule leaves idle.

    Raises
    ------
    ValueError
        Bad options, or ``prompts="common"`` on a view whose prompts differ.

    Notes
    -----
    Called at every decision time, it returns the :class:`~lpsched.blind.Decision` of the
    rules of the module docstring. Source: arXiv 2601.22996 (GSA, GSA-Spec, as summarised);
    the rules are our reading (SPEC section 11.1).
    """

    def __init__(
        self,
        view: BlindView,
        *,
        alpha: float = GSA_ALPHA,
        beta: int = GSA_BETA,
        prompts: str = "classes",
        speculate: bool = False,
    ) -> None:
        self.alpha, self.beta, self.prompts = check_gsa_options(alpha, beta, prompts)
        self.s = view.prefill.tolist()
        if prompts == "common" and len(set(self.s)) > 1:
            raise ValueError(
                f"gsa with prompts='common' needs one prompt length, instance {view.name!r} "
                f"has {len(set(self.s))} (prompts='max' plans with the largest)"
            )
        self.M = view.memory
        self.speculate = speculate
        order = sorted(range(view.n), key=lambda i: (int(view.arrival[i]), i))
        self.rank = [0] * view.n
        for r, i in enumerate(order):
            self.rank[i] = r
        self.order = order
        self.alive: list[int] = []  # ranks of arrived, unfinished requests, ascending
        self.queue: list[int] = []  # ranks of the phase's requests still to be given a slice
        self.lanes: list[_Lane] = []
        self.base: dict[int, _Lane] = {}  # request -> lane of its base attempt
        self.spec: dict[int, int] = {}  # request -> start of its speculative attempt
        self.groups: list[list[int]] = []  # the phase's pipelines still to run (ranks)
        self.phase = -1
        self.window = 0

    # ------------------------------------------------------------------ the decision

    def __call__(self, state: BlindState) -> Decision:
        """The kills and starts at ``state.t`` (module docstring)."""
        t = state.t
        for i, _ in state.completed:
            self._forget(i)
        for i in state.arrived:
            bisect.insort(self.alive, self.rank[i])
        kill = self._end_attempts(t)
        if not self.base and not self._heads(1):
            self._next_phase(t)
        start = self._fill_lanes(t)
        used = state.memory_next
        used -= sum(self.s[i] + t + 1 - state.running[i] for i in kill)
        used += sum(self.s[i] + 1 for i in start)
        wake = self._wake(t)
        if self.speculate:
            spec_kill, spec_start, used = self._speculate(t, used)
            kill += spec_kill
            start += spec_start
            if spec_kill and any(lane.request < 0 for lane in self.lanes) and self._heads(1):
                wake = t + 1
        return Decision(kill=kill, start=start, wake=wake)

    def _forget(self, i: int) -> None:
        """Request ``i`` completed: it leaves its lane, the speculative set and every queue."""
        lane = self.base.pop(i, None)
        if lane is not None:
            lane.request = -1
        self.spec.pop(i, None)
        r = self.rank[i]
        for ranks in (self.alive, self.queue):
            k = bisect.bisect_left(ranks, r)
            if k < len(ranks) and ranks[k] == r:
                ranks.pop(k)

    def _end_attempts(self, t: int) -> list[int]:
        """Kill the base attempts whose cap is ``t``: a full one waits for the next phase, a
        truncated one goes back to the queue."""
        kill: list[int] = []
        for lane in self.lanes:
            if lane.request >= 0 and lane.cap == t:
                i = lane.request
                kill.append(i)
                del self.base[i]
                lane.request = -1
                if not lane.full:
                    bisect.insort(self.queue, self.rank[i])
        return kill

    def _heads(self, most: int) -> list[int]:
        """The first ``most`` requests of the queue not running speculatively, in order."""
        heads: list[int] = []
        for r in self.queue:
            if len(heads) == most:
                break
            if self.order[r] not in self.spec:
                heads.append(self.order[r])
        return heads

    def _next_phase(self, t: int) -> None:
        """Begin the next group of the phase, or the next phase, at ``t`` if some unfinished
        request waits (module docstring)."""
        self.lanes, self.queue = [], []
        alive = set(self.alive)
        while True:
            if not self.groups:
                members = [self.order[r] for r in self.alive]
                if not members:
                    self.phase = -1  # idle: the next phase is phase 0 again
                    return
                if all(i in self.spec for i in members):
                    return  # only speculative attempts left: wait for them
                self.phase += 1
                self.groups = self._groups(members)
            # a member may have completed speculatively since the phase began
            ranks = [r for r in self.groups.pop(0) if r in alive]
            if any(self.order[r] not in self.spec for r in ranks):
                break
        s_p = max(self.s[self.order[r]] for r in ranks)
        L = min(class_bound(self.alpha, self.beta, self.phase), self.M - s_p)
        K = pipeline_width(L, s_p, self.M, len(ranks))
        self.window = L
        self.lanes = [_Lane(first=t + (j * L) // K) for j in range(K)]
        self.queue = ranks

    def _groups(self, members: list[int]) -> list[list[int]]:
        """The phase's members split into pipelines run one after another (ranks, ascending in
        each): one group, or with ``prompts="classes"`` one per prompt class
        ``2^(k-1) <= s_i < 2^k`` (``s_i = 0``: class 0), smallest class first."""
        if self.prompts != "classes":
            return [sorted(self.rank[i] for i in members)]
        classes: dict[int, list[int]] = {}
        for i in members:
            classes.setdefault(self.s[i].bit_length(), []).append(self.rank[i])
        return [sorted(classes[k]) for k in sorted(classes)]

    def _fill_lanes(self, t: int) -> list[int]:
        """Free open lanes take the head of the queue: lanes at a cycle start first."""
        L = self.window
        free = [lane for lane in self.lanes if lane.request < 0 and lane.first <= t]
        free.sort(key=lambda lane: (t - lane.first) % L != 0)  # stable: lane order kept
        heads = self._heads(len(free)) if free else []
        for lane, i in zip(free, heads, strict=False):
            b = lane.first + (t - lane.first) // L * L
            lane.request, lane.cap, lane.full = i, b + L, b == t
            self.base[i] = lane
            r = self.rank[i]
            self.queue.pop(bisect.bisect_left(self.queue, r))
        return heads

    def _wake(self, t: int) -> int | None:
        """The next cap of a base attempt, or the opening of a lane while requests wait."""
        times = [lane.cap for lane in self.lanes if lane.request >= 0]
        if self._heads(1):
            times += [lane.first for lane in self.lanes if lane.request < 0 and lane.first > t]
        return min(times) if times else None

    # ------------------------------------------------------------------ GSA-Spec

    def _speculate(self, t: int, used: int) -> tuple[list[int], list[int], int]:
        """GSA-Spec at ``t``: on a shortage kill speculative attempts (latest first), else
        start speculative attempts in reverse queue order while they fit. ``used`` is the
        memory of round ``t + 1`` after the base's decisions (tokens)."""
        kill: list[int] = []
        if used > self.M:
            for i in sorted(self.spec, key=lambda j: (self.spec[j], j), reverse=True):
                kill.append(i)
                used -= self.s[i] + t + 1 - self.spec.pop(i)
                if used <= self.M:
                    break
            return kill, [], used
        start: list[int] = []
        for r in reversed(self.alive):
            i = self.order[r]
            if i in self.spec or i in self.base:
                continue
            if used + self.s[i] + 1 > self.M:
                break
            used += self.s[i] + 1
            self.spec[i] = t
            start.append(i)
        return kill, start, used


def _build_gsa(
    view: BlindView, *, alpha: float = GSA_ALPHA, beta: int = GSA_BETA, prompts: str = "classes"
) -> GeometricSlicing:
    return GeometricSlicing(view, alpha=alpha, beta=beta, prompts=prompts)


def _build_gsa_spec(
    view: BlindView, *, alpha: float = GSA_ALPHA, beta: int = GSA_BETA, prompts: str = "classes"
) -> GeometricSlicing:
    return GeometricSlicing(view, alpha=alpha, beta=beta, prompts=prompts, speculate=True)


#: ``gsa``: geometric slicing on the staggered pipeline (module docstring).
GSA = BlindSpec(_build_gsa)
#: ``gsa-spec``: GSA plus speculative attempts in the memory it leaves idle.
GSA_SPEC = BlindSpec(_build_gsa_spec)
