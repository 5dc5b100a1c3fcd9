"""Re-plannable priority lists for the executors that re-plan (eviction, online arrivals).

The list executor of SPEC section 4 takes one fixed list. A_min (SPEC section 6) and the
receding-horizon policies (SPEC section 5) change the list while they run: requests join the
waiting set (on arrival or eviction) and the order of the waiting set is recomputed. A *planner*
holds the waiting set and yields its current priority list one request at a time:

* ``add(i)``  -- request ``i`` joins the waiting set (arrival, eviction, or the start);
* ``head()``  -- the first request of the current list (``None`` when nothing waits);
* ``pop()``   -- remove the head (it has been admitted) and return it.

Because an executor only ever reads the head, a planner computes its list lazily. For Sorted-F
that is exact: Phase 1 is a greedy sequence (batch ``X_k`` is chosen from ``R`` minus the earlier
batches), so computing ``X_1``, and ``X_2`` only when ``X_1`` has been admitted, gives the same
list as computing all batches at once -- and a re-plan costs one batch, not ``n / |X|``.

Source: ours (the executors' interface); Sorted-F Phase 1 of arXiv 2508.06133, section 4.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, insort

import numpy as np

from .sorted_f import QuantileGreedy, resolve_phase1, select_dp, select_swap

__all__ = ["KeyPlanner", "SortedFPlanner"]


class KeyPlanner:
    """A priority list by a key: waiting requests sorted by ``(key[i], i)``.

    Parameters
    ----------
    key : list of int or float, length n
        Priority key per request (smaller first), read when a request is added: a key may
        change while the request is *not* waiting (A_min raises the estimate of a running
        request) and is read again when it rejoins.

    Notes
    -----
    A binary heap: ``add`` and ``pop`` cost O(log W) for W waiting requests. Used for FCFS
    (key ``a_i``), MC-SF (key ``o_i``), A_max (key ``u_i``) and A_min (key ``e_i``).
    Source: SPEC sections 4 and 6 (ties by index).
    """

    __slots__ = ("key", "heap")

    def __init__(self, key: list) -> None:
        self.key = key
        self.heap: list[tuple] = []

    def add(self, i: int) -> None:
        """Request ``i`` joins the waiting set."""
        heapq.heappush(self.heap, (self.key[i], i))

    def head(self) -> int | None:
        """The waiting request with the smallest ``(key, index)``, or ``None``."""
        return self.heap[0][1] if self.heap else None

    def pop(self) -> int:
        """Remove and return the head."""
        return heapq.heappop(self.heap)[1]

    def __len__(self) -> int:
        return len(self.heap)


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
        Parameters of the quantile greedy (as :class:`~lpsched.policies.sorted_f.QuantileGreedy`).

    Notes
    -----
    Every ``add`` marks the list stale; the next ``head`` re-plans: Phase 1 restarts from the
    whole waiting set. Batches are computed one at a time when the previous one has been
    popped (exact, see the module docstring). The quantile solver draws from a generator
    seeded with ``seed`` at every re-plan, so a plan is a function of the waiting set alone
    (skipping a re-plan whose list is never read changes nothing), and with no re-plan after
    the first the batches equal :class:`~lpsched.policies.sorted_f.QuantileGreedy`'s. ``dp``
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
