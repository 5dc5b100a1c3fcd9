"""A Ctrl-C that must not be lost: the signal handler's record, checked at safe points.

The handler of :func:`signals_as_interrupt` (the command line runs its solves and sweeps
inside it) raises ``KeyboardInterrupt`` where the signal lands. Where that is inside a
callback from compiled code (numba's object cache, measured: 2 runs in 40 when the signal came
as the first task loaded its kernels), the exception is printed and dropped, and the run went
on as if nothing had happened. So the handler also records the signal here (:func:`request`),
and the places that can wait long check the record: the sweep engine between tasks and the
solver wait (:func:`lpsched.solvers.result.run_interruptible`) (:func:`check`,
:func:`requested`). Without that handler nothing is ever recorded.

Source: ours.
"""

from __future__ import annotations

import contextlib
import importlib
import signal
from collections.abc import Iterator
from typing import Any

__all__ = ["request", "requested", "clear", "check", "signals_as_interrupt", "kernel_call"]

_requested: list[str] = []


def request(name: str) -> None:
    """Record that the signal ``name`` (``"SIGINT"``, ``"SIGTERM"``) asked the run to stop."""
    _requested.append(name)


def requested() -> str | None:
    """The first signal recorded and not cleared, or None."""
    return _requested[0] if _requested else None


def clear() -> None:
    """Forget the recorded signals (the handler of :func:`signals_as_interrupt` is removed)."""
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


@contextlib.contextmanager
def kernel_call() -> Iterator[None]:
    """Around a call of a compiled (numba) kernel: a ``KeyboardInterrupt`` that the signal
    handler raised while the call was under way comes out as ``SystemError: CPUDispatcher(...)
    returned a result with an exception set`` (measured: ``bound --method lp-colgen`` at
    n = 2000, SIGTERM at 4-8 s). Inside the block such an error is raised again as the
    ``KeyboardInterrupt`` it carries, so that the caller keeps what it found as for any
    Ctrl-C; any other ``SystemError`` propagates unchanged. Source: ours.

    Raises
    ------
    KeyboardInterrupt
        The signal that landed inside the kernel's call.
    """
    try:
        yield
    except SystemError as exc:
        cause = exc.__cause__ or exc.__context__
        if isinstance(cause, KeyboardInterrupt) or requested():
            raise KeyboardInterrupt(requested() or str(cause)) from None
        raise


def _load_extensions() -> None:
    """Import the compiled modules a run may load lazily (numpy's random generators, highspy,
    CP-SAT) before the handlers are installed: a ``KeyboardInterrupt`` raised while an
    extension module initialises is lost (measured: a SIGINT in the lazy ``import
    numpy.random`` of the first task left ``lpsched reproduce`` running, 2 runs in 25)."""
    import numpy.random  # noqa: F401

    for name in ("highspy", "ortools.sat.python.cp_model"):
        try:
            importlib.import_module(name)
        except ImportError:  # an optional solver missing: its command says so when used
            pass


@contextlib.contextmanager
def signals_as_interrupt() -> Iterator[None]:
    """Inside the block SIGINT and SIGTERM raise ``KeyboardInterrupt``, so a ``kill`` (a batch
    system's time-out, a container stop) stops the solver and keeps the results exactly as
    Ctrl-C does, also when a shell started the command in the background with SIGINT
    ignored. The previous handlers are restored afterwards.

    The handler also records the signal (:mod:`lpsched.interrupts`), so that one whose
    exception a callback from compiled code drops still stops the run at the next task or
    solver wait. A signal that arrives while the compiled extensions load
    (:func:`_load_extensions`, a second or two for CP-SAT) is held until they have loaded and
    raised then: raised inside an extension's initialisation it became ``ImportError:
    initialization failed`` (exit 1). Source: ours.
    """
    held: list[int] = []

    def hold(signum: int, frame: Any) -> None:
        held.append(signum)

    def handler(signum: int, frame: Any) -> None:
        name = signal.Signals(signum).name
        request(name)  # kept where the exception below is dropped (C callbacks)
        raise KeyboardInterrupt(name)

    try:
        previous = {s: signal.signal(s, hold) for s in (signal.SIGINT, signal.SIGTERM)}
    except ValueError:  # not the main thread: signals never arrive here
        _load_extensions()
        yield
        return
    try:
        _load_extensions()
        for s in previous:
            signal.signal(s, handler)
        if held:
            raise KeyboardInterrupt(signal.Signals(held[0]).name)
        yield
    finally:
        for s, old in previous.items():
            signal.signal(s, old)
        clear()
