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

Incremental re-planning (ours). :class:`SortedFPlanner` keeps its state between events instead
of rebuilding it from the waiting set at every re-plan: the waiting set sorted by
``(decode, index)`` lives in numpy arrays into which arrivals are merged (and admitted requests
dropped) once per batch; the quantile greedy's random sample positions, which depend only on the
seed and the number ``m`` of waiting requests, are drawn once per ``m``; and one batch is a
compiled kernel (:mod:`lpsched.kernels`) that reads the sample and the front of the sorted
arrays only. The schedules are those of re-planning from scratch (tested against a verbatim copy
of the from-scratch planner, with and without numba).

Source: ours (the executors' interface); Sorted-F Phase 1 of arXiv 2508.06133, section 4.
"""

from __future__ import annotations

import heapq

import numpy as np

from ..instance import Instance
from ..kernels import jit
from .quantile import QuantileGreedy, lerp
from .sorted_f import resolve_phase1, select_dp, select_swap

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
        request is not waiting). Read when a request is added; sizes are ``s_i + decode_i``.
    memory : int
        KV-cache budget ``M`` (tokens).
    solver : {"auto", "dp", "swap", "quantile"}
        Phase-1 solver; ``auto`` resolves by ``n = len(prefill)`` exactly as offline Sorted-F
        does.
    sample_size, quantile, seed
        Parameters of the quantile greedy (as :class:`~lpsched.policies.quantile.QuantileGreedy`).

    Raises
    ------
    ValueError
        Unknown solver, ``sample_size < 1`` or ``quantile`` outside ``(0, 1]``.

    Notes
    -----
    Every ``add`` marks the list stale; the next ``head`` re-plans: Phase 1 restarts from the
    whole waiting set. Batches are computed one at a time when the previous one has been
    popped (exact, see the module docstring). The quantile solver draws from a generator
    reset to the state of ``numpy.random.default_rng(seed)`` at every re-plan, so a plan is a
    function of the waiting set alone (skipping a re-plan whose list is never read changes
    nothing), and with no re-plan after the first the batches equal
    :class:`~lpsched.policies.quantile.QuantileGreedy`'s. ``dp`` and ``swap`` see the waiting
    requests in index order, as offline Phase 1 does, so the lists agree with
    :func:`~lpsched.policies.sorted_f.phase1_batches` too.

    Cost (ours): ``add`` and ``pop`` O(1). Per ``quantile`` batch, one compiled kernel: merge
    the requests added since the last batch into the W waiting requests sorted by
    ``(decode, index)`` and drop the popped ones (block copies of the runs between them, O(W)
    copied), then O(sample_size + window) for the thresholds (the decode sample is read in
    order, the size sample partitioned) and the greedy walk over the front of the sorted set;
    the sample positions of a re-plan's first batch depend only on ``W`` and are cached. ``dp``
    and ``swap`` cost as offline on the W waiting requests, plus O(n) to list them. Source:
    SPEC sections 4-6; laziness and incremental state ours.
    """

    def __init__(
        self,
        prefill: list[int],
        decode: list[int],
        memory: int,
        solver: str = "auto",
        *,
        sample_size: int = 256,
        quantile: float = 0.9,
        seed: int = 0,
    ) -> None:
        n = len(prefill)
        self.s = prefill
        self.o = decode
        self.memory = int(memory)
        self.solver = resolve_phase1(solver, n, self.memory)
        self.greedy = QuantileGreedy(sample_size, quantile, seed)
        self.key = np.zeros(n, dtype=np.int64)  # decode_i read at add
        self.size = np.zeros(n, dtype=np.int64)  # s_i + decode_i read at add
        self.waiting = np.zeros(n, dtype=bool)
        self.count = 0
        self.incremental = self.solver == "quantile"
        # quantile: the waiting set sorted by (key, index) in [0, m) of two buffer pairs
        self.sorted_key, self.sorted_idx = np.empty(n, np.int64), np.empty(n, np.int64)
        self.spare_key, self.spare_idx = np.empty(n, np.int64), np.empty(n, np.int64)
        self.m = 0
        self.joined = np.empty(n, dtype=np.int64)  # added since the last merge
        self.n_joined = 0
        self.n_left = 0  # popped since the last merge: positions out[:n_left]
        self.out = np.empty(n, dtype=np.int64)
        self.rng = np.random.default_rng(seed)
        self.rng_start = self.rng.bit_generator.state
        self.first_draws: dict[int, np.ndarray] = {}  # m -> positions of a first batch
        self.plan_m = 0  # m of the current plan's first batch
        self.rng_in_plan = False  # rng is positioned after the current plan's draws
        self.batch: list[int] = []
        self.pos = 0
        self.stale = True
        self.first = True
        self.replans = 0

    @classmethod
    def for_instance(
        cls,
        instance: Instance,
        decode: list[int],
        solver: str,
        *,
        sample_size: int,
        quantile: float,
        seed: int,
    ) -> SortedFPlanner:
        """The planner of ``instance``'s requests and budget ``M``, planning with ``decode``
        (tokens, length n; a list shared with the caller, as for the constructor)."""
        return cls(
            instance.prefill.tolist(),
            decode,
            instance.memory,
            solver,
            sample_size=sample_size,
            quantile=quantile,
            seed=seed,
        )

    def add(self, i: int) -> None:
        """Request ``i`` joins the waiting set; the list will be re-planned."""
        d = self.o[i]
        self.key[i] = d
        self.size[i] = self.s[i] + d
        self.waiting[i] = True
        self.count += 1
        if self.incremental:
            self.joined[self.n_joined] = i
            self.n_joined += 1
        self.stale = True

    def __len__(self) -> int:
        return self.count

    def head(self) -> int | None:
        """The first request of the current Sorted-F list of the waiting set, or ``None``."""
        if not self.count:
            return None
        if self.stale:
            self.stale = False
            self.batch, self.pos = [], 0
            self.first = True
            self.replans += 1
        if self.pos >= len(self.batch):
            self.batch, self.pos = self._next_batch(), 0
            self.first = False
        return self.batch[self.pos]

    def pop(self) -> int:
        """Remove and return the head."""
        i = self.head()
        if i is None:
            raise IndexError("pop from an empty planner")
        self.pos += 1
        self.waiting[i] = False
        self.count -= 1
        if self.incremental:
            self.n_left += 1
        return i

    # ------------------------------------------------------------------ one Phase-1 batch
    def _next_batch(self) -> list[int]:
        if self.incremental:
            return self._quantile_batch()
        idx = np.flatnonzero(self.waiting)
        select = select_dp if self.solver == "dp" else select_swap
        chosen = idx[select(self.key[idx], self.size[idx], self.memory)]
        return chosen[np.lexsort((chosen, self.key[chosen]))].tolist()

    def _sample(self, m: int) -> np.ndarray:
        """Ascending sample positions of the next batch: ``default_rng(seed)``'s draws since the
        re-plan (the order of a sample does not change its quantiles)."""
        k = min(self.greedy.sample_size, m)
        if self.first:
            self.plan_m = m
            positions = self.first_draws.get(m)
            self.rng_in_plan = positions is None
            if positions is None:
                self.rng.bit_generator.state = self.rng_start
                positions = np.sort(self.rng.integers(0, m, size=k))
                if len(self.first_draws) >= _DRAW_CACHE:
                    self.first_draws.clear()
                self.first_draws[m] = positions
            return positions
        if not self.rng_in_plan:  # replay the first batch's draw
            self.rng.bit_generator.state = self.rng_start
            self.rng.integers(0, self.plan_m, size=min(self.greedy.sample_size, self.plan_m))
            self.rng_in_plan = True
        return np.sort(self.rng.integers(0, m, size=k))

    def _quantile_batch(self) -> list[int]:
        """One step of :meth:`QuantileGreedy.batches` on the sorted waiting set (same draws)."""
        kernel = _quantile_batch if self.memory < _EXACT_MEMORY else _quantile_batch_exact
        k = kernel(
            self.sorted_key,
            self.sorted_idx,
            self.m,
            self.n_left,
            self.joined[: self.n_joined],
            self.spare_key,
            self.spare_idx,
            self.key,
            self.size,
            self._sample(self.count),
            self.greedy.quantile,
            self.memory,
            self.out,
        )
        self.sorted_key, self.spare_key = self.spare_key, self.sorted_key
        self.sorted_idx, self.spare_idx = self.spare_idx, self.sorted_idx
        self.m = self.count
        self.n_joined = self.n_left = 0
        return self.sorted_idx[self.out[:k]].tolist()


_DRAW_CACHE = 16384  # first-batch samples kept (ascending int64 positions, <= sample_size each)
_EXACT_MEMORY = 2**21  # below, sum(o) * k^2 <= M^3 < 2^63: the compiled best-k is exact


@jit
def _merge_sorted(key, idx, m, gone, joined, by_key, out_key, out_idx):
    """Drop positions ``gone`` from ``(key, idx)[:m]`` and merge the ``joined`` requests in.

    ``(key, idx)`` is sorted by ``(key, index)``, ``gone`` holds ascending positions and
    ``by_key`` each request's key. Writes the merged sequence to ``out_key, out_idx`` and
    returns its length. Runs between the stops are block copies, each stop found by binary
    search: O(m) copied plus O((g + p) log m) for g gone and p joined requests (ours).
    """
    add = np.sort(joined)
    add = add[np.argsort(by_key[add], kind="mergesort")]
    p = add.size
    g = gone.size
    i = 0  # read position in (key, idx)
    w = 0  # write position in (out_key, out_idx)
    a = 0  # next joined request
    d = 0  # next gone position
    while i < m or a < p:
        stop = m
        rank = m + 1
        if a < p:  # first position whose (key, index) exceeds the joined request's
            ka = by_key[add[a]]
            lo = i
            hi = m
            while lo < hi:
                mid = (lo + hi) // 2
                if key[mid] < ka or (key[mid] == ka and idx[mid] < add[a]):
                    lo = mid + 1
                else:
                    hi = mid
            rank = lo
            stop = rank
        if d < g and gone[d] < stop:
            stop = gone[d]
        run = stop - i
        out_key[w : w + run] = key[i:stop]
        out_idx[w : w + run] = idx[i:stop]
        w += run
        i = stop
        if rank == i:
            out_key[w] = by_key[add[a]]
            out_idx[w] = add[a]
            w += 1
            a += 1
        elif d < g and gone[d] == i:
            i += 1
            d += 1
    return w


@jit
def _order_statistics(k, q):
    """Positions ``lo, hi`` and weight ``gamma`` of ``numpy.quantile`` (``linear``) of k values."""
    virtual = (k - 1) * q
    if virtual >= k - 1:
        return k - 1, k - 1, 0.0
    below = np.floor(virtual)
    return int(below), int(below) + 1, virtual - below


def _quantile_batch_exact(
    key, idx, m, gone, joined, out_key, out_idx, by_key, size, sample, q, memory, out
):
    """Quantile-greedy batch: thresholds from ``sample``, greedy walk, best prefix by ``F``.

    ``key, idx`` are the ``m`` requests that waited at the previous batch, sorted by
    ``(decode, index)``; the ``joined`` requests are merged in and the positions ``out[:gone]``
    (the popped head of the previous batch) dropped (:func:`_merge_sorted`, into
    ``out_key, out_idx``, which the batch then reads). ``by_key``
    and ``size`` hold each request's ``decode_i`` and ``s_i + decode_i``; ``sample`` holds
    ascending positions in the merged sequence. Writes the batch's ascending positions to
    ``out`` and returns their number. Equal to one batch of
    :class:`~lpsched.policies.quantile.QuantileGreedy` on the same sample (the doubling window
    of its per-batch step at commit b7a4cff, kept in ``tests/reference_online.py``, stops where
    this walk stops: at the first request above the decode threshold, whose successors all
    are, or at the first kept request that does not fit); the decode sample is in order
    because ``key`` is, the size quantile reads two order statistics (a partition).
    """
    m = _merge_sorted(key, idx, m, out[:gone].copy(), joined, by_key, out_key, out_idx)
    key = out_key
    idx = out_idx
    k = sample.size
    lo, hi, gamma = _order_statistics(k, q)
    theta_o = lerp(key[sample[lo]], key[sample[hi]], gamma)
    pz = np.empty(k, dtype=np.int64)
    for j in range(k):
        pz[j] = size[idx[sample[j]]]
    pz = np.partition(pz, lo)
    theta_z = lerp(pz[lo], pz[lo] if hi == lo else pz[hi:].min(), gamma)
    used = 0
    take = 0
    for p in range(m):
        if key[p] > theta_o:
            break
        z = size[idx[p]]
        if z > theta_z:
            continue
        if used + z > memory:
            break
        used += z
        out[take] = p
        take += 1
    if take == 0:
        out[0] = 0
        return 1
    best = 1
    best_num = int(key[out[0]])
    num = 0
    for c in range(1, take + 1):
        num += int(key[out[c - 1]])
        if num * best * best <= best_num * c * c:
            best = c
            best_num = num
    return best


_quantile_batch = jit(_quantile_batch_exact)
