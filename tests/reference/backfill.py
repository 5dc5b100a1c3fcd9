"""Identity reference: the backfilling executor as it was before the near-linear rewrite (issue 13).

A verbatim copy of ``FutureMemory``, ``_MinTree`` and ``_run_backfill`` from ``lpsched/executor.py``
at commit b7a4cff (heap of lower bounds, prefill segment tree, per-round Pareto staircase of
failures). The tests compare the new executor's starts with :func:`reference_backfill_starts`
(and with the round-by-round reference of ``test_executor.py``). Not part of the package.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right

from lpsched.instance import Instance


def reference_backfill_starts(instance: Instance, order) -> list[int]:
    """Starts ``p_i`` (rounds) of ``execute(instance, order, backfill=True)`` at commit b7a4cff."""
    n = instance.n
    s = instance.prefill.tolist()
    o = instance.decode.tolist()
    a = instance.arrival.tolist()
    start = [0] * n
    _run_backfill(FutureMemory(instance.memory), [int(h) for h in order], s, o, a, start)
    return start


class FutureMemory:
    """The memory ``m(r)`` that the running requests will hold in future rounds ``r``.

    Stored as the distinct completion rounds ``c`` of the running set with suffix sums
    ``A(c) = sum_{C_i >= c} (s_i - p_i)`` and ``N(c) = #{C_i >= c}``, so that
    ``m(r) = A + r N`` at the first stored completion ``>= r``.

    Parameters
    ----------
    memory : int
        KV-cache budget ``M`` in tokens.

    Notes
    -----
    Source: ours (see the module docstring for the argument). Rounds ``<=`` the last
    :meth:`prune` time are forgotten, which is exact for every later query.
    """

    __slots__ = ("memory", "cs", "A", "N", "head")

    def __init__(self, memory: int) -> None:
        self.memory = int(memory)
        self.cs: list[int] = []  # distinct completion rounds, ascending
        self.A: list[int] = [0]  # suffix sums of s_i - p_i; A[len(cs)] = 0
        self.N: list[int] = [0]  # suffix counts
        self.head = 0  # cs[:head] are in the past

    def prune(self, t: int) -> None:
        """Forget completions at rounds ``<= t`` (they do not affect rounds ``> t``)."""
        cs = self.cs
        head = bisect_right(cs, t, self.head)
        if head > 64 and head * 2 > len(cs):
            del cs[:head]
            del self.A[:head]
            del self.N[:head]
            head = 0
        self.head = head

    def memory_at(self, r: int) -> int:
        """``m(r)`` in tokens for a future round ``r`` (after the last prune time)."""
        j = bisect_left(self.cs, r, self.head)
        return self.A[j] + r * self.N[j]

    def next_start(self, s: int, o: int, t: int) -> int:
        """``t`` if a request ``(s, o)`` can start at ``t``, else a later round before which it
        certainly cannot (the exact jump of the module docstring).

        Parameters
        ----------
        s, o : int
            Prefill ``s_h`` and decode ``o_h`` length in tokens.
        t : int
            Candidate start round (``>=`` the last prune time).
        """
        cs, A, N = self.cs, self.A, self.N
        lim = self.memory - s
        end = t + o
        nxt = t
        i = bisect_right(cs, t, self.head)
        n_cs = len(cs)
        while i < n_cs:
            c = cs[i]
            if c >= end:
                break
            need = A[i] + c * N[i] + c - lim  # the smallest start that satisfies round c
            if need > t:
                if need > c:
                    need = c
                if need > nxt:
                    nxt = need
            i += 1
        need = A[i] + end * N[i] + end - lim
        if need > t:
            if need > end:
                need = end
            if need > nxt:
                nxt = need
        return nxt

    def earliest_start(self, s: int, o: int, t: int) -> int:
        """The earliest round ``>= t`` at which request ``(s, o)`` can start (always exists,
        since ``s + o <= M`` fits once the running set has finished)."""
        while True:
            nxt = self.next_start(s, o, t)
            if nxt == t:
                return t
            t = nxt

    def add(self, s: int, p: int, o: int) -> None:
        """Record a request ``(s, o)`` started at round ``p`` (completing at ``p + o``)."""
        c = p + o
        w = s - p
        cs, A, N = self.cs, self.A, self.N
        pos = bisect_left(cs, c, self.head)
        if pos == len(cs) or cs[pos] != c:
            cs.insert(pos, c)
            A.insert(pos, A[pos])
            N.insert(pos, N[pos])
        for k in range(self.head, pos + 1):
            A[k] += w
            N[k] += 1


class _MinTree:
    """Minimum segment tree over list positions: "first position >= p with key <= cap"."""

    __slots__ = ("size", "t")

    def __init__(self, n: int, inf: int) -> None:
        self.size = 1 << max(0, (n - 1).bit_length())
        self.t = [inf] * (2 * self.size)

    def set(self, i: int, value: int) -> None:
        t = self.t
        i += self.size
        t[i] = value
        i >>= 1
        while i:
            a, b = t[2 * i], t[2 * i + 1]
            m = a if a < b else b
            if t[i] == m:  # the minimum above does not change either
                return
            t[i] = m
            i >>= 1

    def find(self, p: int, cap: int) -> int:
        """Smallest position ``>= p`` whose key is ``<= cap``, or -1."""
        t, size = self.t, self.size
        if p >= size:
            return -1
        i = p + size
        if t[i] > cap:
            while i > 1:
                if not i & 1 and t[i + 1] <= cap:
                    i += 1
                    break
                i >>= 1
            else:
                return -1
            while i < size:
                i = 2 * i if t[2 * i] <= cap else 2 * i + 1
        return i - size


def _run_backfill(
    fm: FutureMemory, order: list[int], s: list[int], o: list[int], a: list[int], start: list[int]
) -> None:
    """Backfilling walk: every round, admit each waiting request of ``L`` that fits, in order.

    Every waiting request has a lower bound on its earliest start (first its arrival, then the
    exact jump of :meth:`FutureMemory.next_start`), kept in a heap. Requests whose bound has been
    reached are *due*; a segment tree over list positions holds the prefill length of each due
    request, so that a round's walk visits only due requests with ``s_h + 1 + m(t+1) <= M``
    (the first round's memory, a necessary condition; the others certainly fail this round and
    stay due until the next completion, before which ``m(t+1)`` cannot fall). A round is
    visited when a bound is reached or, while some request is due, at the next completion.
    The round's failures are kept as a Pareto staircase of ``(s, o)``; a request that some
    failure dominates (``s' <= s_h``, ``o' <= o_h``: less memory over a shorter window, and
    admissions only raise ``m``) cannot start either and stays due without a search (ours).
    """
    n = len(order)
    memory = fm.memory
    inf = memory + 1
    tree = _MinTree(n, inf)
    heap = [(a[h], pos) for pos, h in enumerate(order)]
    heapq.heapify(heap)
    due = 0
    t = 0
    while heap or due:
        fm.prune(t)
        while heap and heap[0][0] <= t:
            pos = heapq.heappop(heap)[1]
            tree.set(pos, s[order[pos]])
            due += 1
        cap = memory - fm.memory_at(t + 1) - 1
        fail_s: list[int] = []  # this round's failures, Pareto-minimal: s ascending,
        fail_o: list[int] = []  # o descending
        pos = tree.find(0, cap)
        while pos >= 0:
            h = order[pos]
            sh, oh = s[h], o[h]
            j = bisect_right(fail_s, sh)
            if j and fail_o[j - 1] <= oh:
                # a failed (s', o') <= (s_h, o_h) needs less memory over a shorter window,
                # and admissions only raise m: h cannot start now either; it stays due
                pos = tree.find(pos + 1, cap)
                continue
            tree.set(pos, inf)
            due -= 1
            nxt = fm.next_start(sh, oh, t)
            if nxt == t:
                start[h] = t
                fm.add(sh, t, oh)
                cap = memory - fm.memory_at(t + 1) - 1
            else:
                heapq.heappush(heap, (nxt, pos))
                k = j
                while k < len(fail_s) and fail_o[k] >= oh:
                    k += 1
                fail_s[j:k] = [sh]
                fail_o[j:k] = [oh]
            pos = tree.find(pos + 1, cap)
        nxt_t = heap[0][0] if heap else None
        if due:
            c = fm.cs[bisect_right(fm.cs, t, fm.head)]  # a due request waits for memory
            nxt_t = c if nxt_t is None or c < nxt_t else nxt_t
        if nxt_t is None:
            return
        t = nxt_t
