"""``run_interruptible`` honours a recorded Ctrl-C (lpsched.interrupts) whose exception was
dropped: it asks the solver to stop and reports the interruption."""

from __future__ import annotations

import threading

from lpsched import interrupts
from lpsched.solvers.result import run_interruptible


def test_a_recorded_interrupt_stops_the_solver():
    stopped = threading.Event()

    def work() -> str:
        assert stopped.wait(30), "stop() was never called"
        return "best so far"

    interrupts.request("SIGINT")
    try:
        value, interrupted = run_interruptible(work, stopped.set)
    finally:
        interrupts.clear()
    assert (value, interrupted) == ("best so far", True)


def test_without_a_record_the_solver_runs_to_its_end():
    value, interrupted = run_interruptible(lambda: 7, lambda: None)
    assert (value, interrupted) == (7, False)
