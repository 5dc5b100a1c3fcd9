"""Sweep engine: speed-up and per-task overhead with 1 and 2 local workers and a Dask cluster.

Not a test. A sweep of ``--tasks`` short tasks, each computing one row, is run

* serially in this process (``workers=1``),
* on 2 local processes (``workers=2``),
* on a ``distributed.LocalCluster`` of 2 single-threaded workers (``scheduler="local"``),

twice each: with tasks that sleep ``--sleep`` seconds (the speed-up) and with tasks that do
nothing (the engine's own cost per task: wall time / tasks, every row written and flushed).
Start-up (process pool or cluster) is reported apart. Command:

    python benchmarks/bench_engine.py            # 200 tasks of 10 ms
"""

from __future__ import annotations

import argparse
import tempfile
import time
from functools import partial

from tabulate import tabulate

from lpsched.sweeps.engine import Sweep, Task, run_sweep


def one_row(params, missing, *, sleep: float = 0.0):
    if sleep:
        time.sleep(sleep)
    for key in missing:
        yield {**key, "y": params["x"] * 2}


def _sweep(tasks: int, sleep: float) -> Sweep:
    return Sweep(
        "bench",
        ["x", "y"],
        ["x"],
        [Task({"x": i}) for i in range(tasks)],
        partial(one_row, sleep=sleep),
    )


def _time(tasks: int, sleep: float, repeat: int = 3, **engine) -> float:
    """Median wall time (seconds) of the whole run, start-up included."""
    times = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as out:
            t0 = time.perf_counter()
            run_sweep(_sweep(tasks, sleep), out, progress=False, report=lambda m: None, **engine)
            times.append(time.perf_counter() - t0)
    return sorted(times)[len(times) // 2]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=200)
    ap.add_argument("--sleep", type=float, default=0.01, help="seconds per short task")
    args = ap.parse_args()
    n = args.tasks
    setups = [
        ("1 worker (this process)", {}),
        ("2 local processes", {"workers": 2}),
        ("Dask LocalCluster, 2 workers", {"workers": 2, "scheduler": "local"}),
    ]
    rows, serial = [], None
    for label, engine in setups:
        fixed = _time(2, 0.0, **engine)  # start-up and two empty tasks
        busy = _time(n, args.sleep, **engine)
        idle = _time(n, 0.0, **engine)
        serial = serial or (busy, fixed)
        rows.append(
            [
                label,
                f"{fixed:.2f}",
                f"{busy:.2f}",
                f"{serial[0] / busy:.2f}",
                f"{(serial[0] - serial[1]) / (busy - fixed):.2f}",
                f"{1000 * (idle - fixed) / (n - 2):.2f}",
            ]
        )
    print(f"{n} tasks of {1000 * args.sleep:g} ms each; medians of 3 runs")
    print(
        tabulate(
            rows,
            headers=[
                "engine",
                "start-up (s)",
                "sweep (s)",
                "speed-up",
                "speed-up after start-up",
                "overhead per task (ms)",
            ],
            tablefmt="github",
        )
    )


if __name__ == "__main__":
    main()
