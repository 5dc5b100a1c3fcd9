"""A Ctrl-C that must not be lost: the signal handler's record, checked at safe points.

The command line's handler (:func:`lpsched.cli.common.signals_as_interrupt`) raises
``KeyboardInterrupt`` where the signal lands. Where that is inside a callback from compiled
code (numba's object cache, measured: 2 runs in 40 when the signal came as the first task
loaded its kernels), the exception is printed and dropped, and the run went on as if nothing
had happened. So the handler also records the signal here (:func:`request`), and the places
that can wait long check the record: the sweep engine between tasks and the solver wait
(:func:`lpsched.solvers.result.run_interruptible`) (:func:`check`, :func:`requested`).
Without the command line's handler nothing is ever recorded.

Source: ours.
"""

from __future__ import annotations

__all__ = ["request", "requested", "clear", "check"]

_requested: list[str] = []


def request(name: str) -> None:
    """Record that the signal ``name`` (``"SIGINT"``, ``"SIGTERM"``) asked the run to stop."""
    _requested.append(name)


def requested() -> str | None:
    """The first signal recorded and not cleared, or None."""
    return _requested[0] if _requested else None


def clear() -> None:
    """Forget the recorded signals (the command line's handler is removed)."""
    _requested.clear()


def check() -> None:
    """Raise ``KeyboardInterrupt`` (named by the signal) when a signal has been recorded.

    Raises
    ------
    KeyboardInterrupt
        A signal was recorded by :func:`request` and not cleared.
    """
    if _requested:
        raise KeyboardInterrupt(_requested[0])
