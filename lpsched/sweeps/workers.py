"""How many processes a sweep runs at once, and how many solver threads each gets.

``workers`` (``lpsched reproduce --workers``, :func:`~lpsched.sweeps.engine.run_sweep`) is
refused outside ``1..MAX_WORKERS`` when the processes start on this machine (local processes,
or a Dask ``LocalCluster``): four per core, at least 8 (the rule of
:data:`lpsched.solvers.options.MAX_THREADS`), so that a typo such as ``--workers 100000`` never
starts one process per task, while a test may still ask for two processes on one core. With a
remote Dask scheduler the cluster's own workers run the tasks and any count ``>= 1`` passes.

Source: ours.
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["MAX_WORKERS", "check_workers", "solver_threads"]

#: Most worker processes a sweep starts: four per core, at least 8.
MAX_WORKERS = max(8, 4 * (os.cpu_count() or 1))


def check_workers(workers: Any, scheduler: str | None = None) -> int:
    """``workers`` if it is an integer in ``1..MAX_WORKERS`` (any integer ``>= 1`` with a
    remote Dask scheduler, whose workers are not started here).

    Raises
    ------
    ValueError
        Anything else (a bool, a float, 0, 100000), naming the range and why it is capped.
        Source: ours.
    """
    top = MAX_WORKERS if scheduler in (None, "local") else None
    if (
        not isinstance(workers, int)
        or isinstance(workers, bool)
        or workers < 1
        or (top is not None and workers > top)
    ):
        limit = f"in 1..{top} (four per core of this machine's {os.cpu_count() or 1}, at least 8)"
        raise ValueError(f"workers must be an integer {limit if top else '>= 1'}, got {workers!r}")
    return workers


def solver_threads(workers: int = 1, scheduler: str | None = None, **_: Any) -> int | None:
    """Threads for each solver run of a sweep, so that threads times workers never exceed the
    local cores: None (the solver's default) when the sweep runs in this process alone, 1 on a
    Dask cluster (each worker is one single-threaded process), else ``cores // workers``.

    Source: ours. Extra keyword arguments (the other engine options) are ignored.
    """
    if scheduler is not None:
        return 1
    if workers <= 1:
        return None
    return max(1, (os.cpu_count() or 1) // workers)
