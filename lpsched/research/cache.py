"""Exact optima of small instances, memoised by their data (for sweeps and searches).

Source: ours.
"""

from __future__ import annotations

import time

from ..certify import solve_exact
from ..instance import Instance

__all__ = ["OptimumCache"]


def _key(instance: Instance) -> tuple:
    return (
        instance.memory,
        tuple(instance.prefill.tolist()),
        tuple(instance.decode.tolist()),
        tuple(instance.arrival.tolist()),
    )


class OptimumCache:
    """Exact optima of small instances, memoised by their data.

    Parameters
    ----------
    solver : {"highs", "cpsat"}
        Back end of :func:`~lpsched.certify.solve_exact`.
    time_limit : float
        Seconds per solve.
    threads : int, optional
        Solver threads (default: the solver's own choice).

    Notes
    -----
    :meth:`get` returns ``(best TEL, proven lower bound, proven optimal)`` in rounds.  Source: ours.
    """

    def __init__(
        self, solver: str = "highs", time_limit: float = 20.0, threads: int | None = None
    ) -> None:
        self.solver = solver
        self.time_limit = float(time_limit)
        self.threads = threads
        self.store: dict[tuple, tuple[int, float, bool]] = {}
        self.solves = 0
        self.seconds = 0.0

    def get(self, instance: Instance) -> tuple[int, float, bool]:
        """``(objective, bound, optimal)`` of ``instance`` (rounds); see the class notes."""
        key = _key(instance)
        hit = self.store.get(key)
        if hit is not None:
            return hit
        t0 = time.perf_counter()
        res = solve_exact(
            instance, solver=self.solver, time_limit=self.time_limit, threads=self.threads
        ).check_interrupted()
        self.seconds += time.perf_counter() - t0
        self.solves += 1
        if res.objective is None:
            raise RuntimeError(
                f"{instance.name}: the exact solver found no schedule (status {res.status})"
            )
        out = (int(res.objective), float(res.bound), str(res.status) == "optimal")
        self.store[key] = out
        return out
