"""Identity reference: receding-horizon Sorted-F before incremental re-planning (issue 13).

A verbatim copy, at commit b7a4cff, of ``execute_online`` (``lpsched/policies/online.py``),
``SortedFPlanner`` (``lpsched/policies/planners.py``, which re-plans from the whole waiting set) and
of ``QuantileGreedy.step`` (``lpsched/policies/sorted_f.py``, frozen in ``reference/quantile.py``
so that this reference keeps the batches of that commit). The tests compare the new
planner's schedules with :func:`reference_online_sorted_f_starts`. Not part of the package.
"""

from __future__ import annotations

import heapq
import time
from bisect import bisect_left, insort

import numpy as np
from reference.quantile import QuantileGreedy

from lpsched.executor import FutureMemory
from lpsched.instance import Instance
from lpsched.policies.online import check_replan_every, effective_arrivals
from lpsched.policies.sorted_f import resolve_phase1, select_dp, select_swap
from lpsched.schedule import Schedule


def reference_online_sorted_f_starts(
    instance: Instance,
    solver: str = "auto",
    *,
    replan_every: int | None = None,
    sample_size: int = 256,
    quantile: float = 0.9,
    seed: int = 0,
) -> tuple[list[int], int]:
    """Starts ``p_i`` (rounds) and re-plan count of ``online_sorted_f`` at commit b7a4cff."""
    planner = SortedFPlanner(
        instance.prefill.tolist(),
        instance.decode.tolist(),
        instance.memory,
        solver,
        sample_size=sample_size,
        quantile=quantile,
        seed=seed,
    )
    sched = execute_online(instance, planner, replan_every=replan_every)
    return sched.start.tolist(), planner.replans


def execute_online(
    instance: Instance,
    planner,
    *,
    replan_every: int | None = None,
    policy: str = "",
) -> Schedule:
    """Run a re-plannable list on arrivals with known decode lengths (strict order).

    Parameters
    ----------
    instance : Instance
        Requests ``(s_i, o_i, a_i)`` and budget ``M`` (tokens, rounds).
    planner : KeyPlanner or SortedFPlanner
        Receives each request at its (effective) arrival; yields the list.
    replan_every : int or None
        See :func:`effective_arrivals`.
    policy : str
        Name recorded in the schedule.

    Returns
    -------
    Schedule
        Feasible; ``info`` holds ``runtime_s`` and ``decisions`` (loop iterations).

    Notes
    -----
    Source: SPEC section 5; see the module docstring for the lazy re-planning argument.
    """
    t0 = time.perf_counter()
    replan_every = check_replan_every(replan_every)
    n = instance.n
    s = instance.prefill.tolist()
    o = instance.decode.tolist()
    eff = effective_arrivals(instance.arrival, replan_every)
    arrivals = np.lexsort((np.arange(n), eff)).tolist()
    eff_l = eff.tolist()
    fm = FutureMemory(instance.memory)
    started = [False] * n
    start = [0] * n
    small: list[tuple[int, int]] = []  # (s_i, i) of visible waiting requests, lazy deletion
    ap = 0
    admitted = 0
    decisions = 0
    t = eff_l[arrivals[0]]
    INF = float("inf")
    while admitted < n:
        decisions += 1
        while ap < n and eff_l[arrivals[ap]] <= t:
            i = arrivals[ap]
            planner.add(i)
            heapq.heappush(small, (s[i], i))
            ap += 1
        while small and started[small[0][1]]:
            heapq.heappop(small)
        na = eff_l[arrivals[ap]] if ap < n else INF
        if not small:
            t = na
            continue
        fm.prune(t)
        tf = fm.earliest_start(small[0][0], 1, t)
        if tf > t:
            t = tf if tf < na else na
            continue
        h = planner.head()
        ts = fm.next_start(s[h], o[h], t)
        if ts == t:
            planner.pop()
            started[h] = True
            start[h] = t
            fm.add(s[h], t, o[h])
            admitted += 1
        else:
            t = ts if ts < na else na
    return Schedule(
        instance,
        np.asarray(start, dtype=np.int64),
        policy=policy,
        info={
            "runtime_s": time.perf_counter() - t0,
            "decisions": decisions,
            "replan_every": replan_every,
        },
    )


class SortedFPlanner:
    """The Sorted-F Phase-1 list of the waiting set, computed lazily, re-planned on ``add``.

    Parameters
    ----------
    prefill : list of int, length n
        ``s_i`` in tokens.
    decode : list of int, length n
        Planning decode lengths in tokens: the true ``o_i`` (online Sorted-F) or the current
        estimates ``e_i`` (Sorted-F+Amin; the list object is shared and may change while a
        request is not waiting). Sizes are ``s_i + decode_i``.
    memory : int
        KV-cache budget ``M`` (tokens).
    solver : {"auto", "dp", "swap", "quantile"}
        Phase-1 solver; ``auto`` resolves by ``n_ref`` exactly as offline Sorted-F does.
    n_ref : int
        Instance size used to resolve ``auto`` (default ``len(prefill)``).
    sample_size, quantile, seed
        Parameters of the quantile greedy (as :class:`~lpsched.policies.quantile.QuantileGreedy`).

    Notes
    -----
    Every ``add`` marks the list stale; the next ``head`` re-plans: Phase 1 restarts from the
    whole waiting set. Batches are computed one at a time when the previous one has been
    popped (exact, see the module docstring). The quantile solver draws from a generator
    seeded with ``seed`` at every re-plan, so a plan is a function of the waiting set alone
    (skipping a re-plan whose list is never read changes nothing), and with no re-plan after
    the first the batches equal :class:`~lpsched.policies.quantile.QuantileGreedy`'s. ``dp``
    and ``swap`` see the waiting requests in index order, as offline Phase 1 does, so the
    lists agree with :func:`~lpsched.policies.sorted_f.phase1_batches` too.

    Cost per batch: ``dp`` and ``swap`` as offline on the W waiting requests (plus O(W log W)
    to list them); ``quantile`` O(sample_size + window) with the waiting set kept sorted by
    ``(decode, index)`` (insertion O(W) memmove). Source: SPEC sections 4-6; laziness ours.
    """

    def __init__(
        self,
        prefill: list[int],
        decode: list[int],
        memory: int,
        solver: str = "auto",
        *,
        n_ref: int | None = None,
        sample_size: int = 256,
        quantile: float = 0.9,
        seed: int = 0,
    ) -> None:
        self.s = prefill
        self.o = decode
        self.memory = int(memory)
        self.solver = resolve_phase1(solver, len(prefill) if n_ref is None else n_ref)
        self.greedy = QuantileGreedy(sample_size, quantile, seed)
        self.seed = seed
        self.waiting: set[int] = set()
        self.rem: list[tuple[int, int]] = []  # waiting, sorted by (decode, index)
        self.batch: list[int] = []
        self.pos = 0
        self.stale = True
        self.rng = np.random.default_rng(seed)
        self.replans = 0

    def add(self, i: int) -> None:
        """Request ``i`` joins the waiting set; the list will be re-planned."""
        self.waiting.add(i)
        insort(self.rem, (self.o[i], i))
        self.stale = True

    def __len__(self) -> int:
        return len(self.waiting)

    def head(self) -> int | None:
        """The first request of the current Sorted-F list of the waiting set, or ``None``."""
        if not self.waiting:
            return None
        if self.stale:
            self.stale = False
            self.batch, self.pos = [], 0
            self.rng = np.random.default_rng(self.seed)
            self.replans += 1
        if self.pos >= len(self.batch):
            self.batch, self.pos = self._next_batch(), 0
        return self.batch[self.pos]

    def pop(self) -> int:
        """Remove and return the head."""
        i = self.head()
        if i is None:
            raise IndexError("pop from an empty planner")
        self.pos += 1
        self.waiting.discard(i)
        key = (self.o[i], i)
        del self.rem[bisect_left(self.rem, key)]
        return i

    # ------------------------------------------------------------------ one Phase-1 batch
    def _next_batch(self) -> list[int]:
        if self.solver == "quantile":
            return self._quantile_batch()
        idx = np.fromiter(sorted(self.waiting), dtype=np.int64, count=len(self.waiting))
        o = np.fromiter((self.o[i] for i in idx.tolist()), dtype=np.int64, count=idx.size)
        z = o + np.fromiter((self.s[i] for i in idx.tolist()), dtype=np.int64, count=idx.size)
        select = select_dp if self.solver == "dp" else select_swap
        chosen = idx[select(o, z, self.memory)].tolist()
        return sorted(chosen, key=lambda i: (self.o[i], i))

    def _quantile_batch(self) -> list[int]:
        """One step of :meth:`QuantileGreedy.batches`, on the sorted waiting list (same draws)."""
        rem, s = self.rem, self.s

        def lengths(positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            k = positions.tolist()
            o = np.fromiter((rem[j][0] for j in k), dtype=np.int64, count=len(k))
            return o, o + np.fromiter((s[rem[j][1]] for j in k), dtype=np.int64, count=len(k))

        positions = self.greedy.step(self.rng, len(rem), lengths, self.memory)
        return [rem[k][1] for k in positions.tolist()]
