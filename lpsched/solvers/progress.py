"""Progress of a long solve: one observer of better schedules and bounds, and its display.

:class:`Observer` is what every search reports to (the certify methods, their solvers): a
better schedule (:meth:`~Observer.on_incumbent`), a better valid lower bound
(:meth:`~Observer.on_bound`), and the solvers' log lines (:meth:`~Observer.log`). The base
class ignores them, or passes them to the callables it was made with. :class:`Progress` is the
observer that shows them:

Every back end feeds one :class:`Progress` (HiGHS through its callbacks ``cbLogging``,
``cbMipImprovingSolution`` and ``cbMipInterrupt``; CP-SAT through ``log_callback``, a solution
callback and ``best_bound_callback``); the caller chooses how it is shown:

* ``mode="live"`` -- one line on a terminal, rewritten in place every ``every`` seconds
  (elapsed time, stage, incumbent, bound, gap) and erased at the end;
* ``mode="lines"`` -- the same line as plain text every ``every`` seconds, and once more at the
  end if any was written (for a log file or a pipe);
* ``log=True`` -- also the solver's own log, line by line (``lpsched exact -v``).

Nothing is printed without a :class:`Progress`: library calls are silent (the HiGHS banner
included, :func:`lpsched.solvers.backends.highs.new_highs`). :func:`cli_progress` is the
command line's choice: ``-v`` streams the log with an update every 2 s, a terminal gets the live
line, a redirected standard error a plain line every 30 s. Source: ours.
"""

from __future__ import annotations

import math
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:  # a Schedule is only passed through, never built here
    from ..schedule import Schedule

__all__ = ["Observer", "Progress", "cli_progress", "format_status"]

_EPS = 1e-6


def format_status(
    elapsed: float, stage: str, incumbent: float | None, bound: float | None, label: str = ""
) -> str:
    """The one-line update, e.g. ``exact  12.3 s  solve  incumbent 167  bound 160  gap 4.19%``.

    Parameters
    ----------
    elapsed : float
        Seconds since the start.
    stage : str
        What runs now (``heuristic``, ``build``, ``solve``), may be empty.
    incumbent : float or None
        Best TEL found so far (rounds).
    bound : float or None
        Best proven lower bound on the TEL (rounds), shown rounded up (the TEL is an integer).
    label : str
        Prefix (the command's name).

    Returns
    -------
    str
        Gap ``(incumbent - bound) / incumbent`` as a percentage, ``-`` when unknown.

    Notes
    -----
    Source: ours.
    """
    shown = None if bound is None else math.ceil(bound - _EPS)
    if incumbent is not None and shown is not None and incumbent > 0:
        gap = f"{100 * max(0.0, (incumbent - shown) / incumbent):.2f}%"
    else:
        gap = "-"
    parts = [label, f"{elapsed:6.1f} s", stage]
    parts.append(f"incumbent {'-' if incumbent is None else f'{incumbent:,.0f}'}")
    parts.append(f"bound {'-' if shown is None else f'{shown:,}'}")
    parts.append(f"gap {gap}")
    return "  ".join(p for p in parts if p)


class Observer:
    """What a running search reports: better schedules, better bounds, log lines.

    Parameters
    ----------
    on_incumbent : callable, optional
        Called with each better feasible :class:`~lpsched.schedule.Schedule` found.
    on_bound : callable, optional
        Called with each better valid lower bound on the optimal TEL (rounds).
    log : callable, optional
        Called with pieces of the solvers' log (text).

    Notes
    -----
    Searches call these from their own threads; an observer must be thread-safe. The
    callables of a plain ``Observer`` are called as they are (tests, scripts); subclasses
    (:class:`Progress`, the tracker of :func:`lpsched.certify.certify`) override the methods.
    Source: ours (one observer instead of ``on_bound=`` / ``on_improve=`` callbacks beside a
    display).
    """

    log_enabled = False

    def __init__(
        self,
        on_incumbent: Callable[[Schedule], None] | None = None,
        on_bound: Callable[[float], None] | None = None,
        log: Callable[[str], None] | None = None,
    ) -> None:
        self._incumbent_cb = on_incumbent
        self._bound_cb = on_bound
        self._log_cb = log
        self.log_enabled = log is not None

    def on_incumbent(self, schedule: Schedule) -> None:
        """A better feasible schedule was found."""
        if self._incumbent_cb is not None:
            self._incumbent_cb(schedule)

    def on_bound(self, bound: float) -> None:
        """A better valid lower bound on the optimal TEL (rounds) was proven."""
        if self._bound_cb is not None:
            self._bound_cb(bound)

    def log(self, text: str) -> None:
        """A piece of a solver's log."""
        if self._log_cb is not None:
            self._log_cb(text)

    def log_line(self, line: str) -> None:
        """A whole log line (CP-SAT's ``log_callback`` gives lines without their end)."""
        self.log(line + "\n")

    def update(self, incumbent: float | None = None, bound: float | None = None) -> None:
        """A solver's incumbent TEL and bound (rounds) as numbers, as the back ends report them
        from their callbacks: a plain observer passes the bound on (:meth:`on_bound`); the
        incumbent's schedule comes through :meth:`on_incumbent` when the search has it."""
        if bound is not None and math.isfinite(bound):
            self.on_bound(float(bound))

    def set_stage(self, stage: str) -> None:
        """Name what runs now (a display shows it)."""


class Progress(Observer):
    """Collects the incumbent and bound of a running solve and shows them (module docstring).

    Parameters
    ----------
    mode : {"live", "lines", "quiet"}
        ``live``: one line rewritten in place (for a terminal); ``lines``: a plain line every
        ``every`` seconds and a last one at :meth:`close`; ``quiet``: no update lines.
    log : bool, default False
        Write the solver's log lines (:meth:`log`) too.
    every : float, default 2.0
        Seconds between two update lines (``live``: between two rewrites).
    stream : file, optional
        Where to write; default ``sys.stderr`` at the time of each write.
    label : str
        Prefix of the update line.

    Notes
    -----
    Thread-safe: solvers call :meth:`update` and :meth:`log` from their own threads; a ticker
    thread (started by :meth:`start` or ``with``) writes the update line on time even while
    no callback arrives (presolve, model build). Source: ours.
    """

    def __init__(
        self,
        mode: str = "lines",
        *,
        log: bool = False,
        every: float = 2.0,
        stream: TextIO | None = None,
        label: str = "",
    ) -> None:
        super().__init__()
        if mode not in ("live", "lines", "quiet"):
            raise ValueError(f"progress mode must be 'live', 'lines' or 'quiet', got {mode!r}")
        if not (isinstance(every, int | float) and math.isfinite(every) and every > 0):
            raise ValueError(f"every must be a finite number of seconds > 0, got {every!r}")
        self.mode = mode
        self.log_enabled = bool(log)
        self.every = float(every)
        self.label = label
        self.incumbent: float | None = None
        self.bound: float | None = None
        self.stage = ""
        self._stream = stream
        self._t0 = time.perf_counter()
        self._last = -math.inf
        self._partial = ""
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        self._shown = False

    # ------------------------------------------------------------------ feeding
    def on_incumbent(self, schedule: Schedule) -> None:
        """A better schedule: its TEL becomes the incumbent shown (:meth:`update`)."""
        self.update(incumbent=schedule.tel)

    def on_bound(self, bound: float) -> None:
        """A better bound (rounds) to show (:meth:`update`)."""
        self.update(bound=bound)

    def update(self, incumbent: float | None = None, bound: float | None = None) -> None:
        """Record a TEL found (``incumbent``, rounds; the smallest is kept) and a proven lower
        bound (``bound``, rounds; the largest is kept). Non-finite values are ignored."""
        if incumbent is not None and math.isfinite(incumbent):
            if self.incumbent is None or incumbent < self.incumbent:
                self.incumbent = float(incumbent)
        if bound is not None and math.isfinite(bound):
            if self.bound is None or bound > self.bound:
                self.bound = float(bound)

    def set_stage(self, stage: str) -> None:
        """Name what runs now (shown in the update line)."""
        self.stage = stage

    def log(self, text: str) -> None:
        """One piece of the solver's log; written line by line when ``log`` is on (a line
        without its end is held until the end arrives)."""
        if not self.log_enabled or not text:
            return
        with self._lock:
            data = self._partial + text
            *lines, self._partial = data.split("\n")
            for line in lines:
                self._write(line.rstrip("\r") + "\n")

    # ------------------------------------------------------------------ showing
    @property
    def elapsed(self) -> float:
        """Seconds since the object was made or :meth:`start` was called."""
        return time.perf_counter() - self._t0

    def status_line(self) -> str:
        """The update line now (:func:`format_status`)."""
        return format_status(self.elapsed, self.stage, self.incumbent, self.bound, self.label)

    def tick(self, force: bool = False) -> None:
        """Write the update line if ``every`` seconds have passed since the last (or
        ``force``)."""
        if self.mode == "quiet":
            return
        now = time.perf_counter()
        if not force and now - self._last < self.every:
            return
        with self._lock:
            self._last = now
            if self.mode == "live":
                self._write("\r" + self.status_line() + "\x1b[K")
                self._shown = True
            else:
                self._write(self.status_line() + "\n")
                self._shown = True

    def start(self) -> Progress:
        """Start the clock and the ticker thread (the first line comes ``every`` seconds
        later); returns ``self``."""
        self._t0 = self._last = time.perf_counter()
        if self.mode != "quiet" and self._ticker is None:
            self._stop.clear()
            self._ticker = threading.Thread(target=self._run, name="lpsched-progress", daemon=True)
            self._ticker.start()
        return self

    def close(self) -> None:
        """Stop the ticker; ``live`` erases its line, ``lines`` writes a last update when it
        wrote any (or ``log`` is on), so a short quiet run prints nothing."""
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(timeout=2.0)
            self._ticker = None
        with self._lock:
            if self._partial:
                self._write(self._partial + "\n")
                self._partial = ""
            if self.mode == "live" and self._shown:
                self._write("\r\x1b[K")
                self._shown = False
            elif self.mode == "lines" and (self.log_enabled or self._shown):
                self.tick(force=True)

    def __enter__(self) -> Progress:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _run(self) -> None:
        period = min(self.every, 0.5)
        while not self._stop.wait(period):
            self.tick()

    def _write(self, text: str) -> None:
        stream = self._stream if self._stream is not None else sys.stderr
        try:
            stream.write(text)
            stream.flush()
        except (OSError, ValueError):  # closed or broken stream: progress is not worth a crash
            pass


def cli_progress(verbose: bool, label: str, stream: TextIO | None = None) -> Progress:
    """The command line's :class:`Progress`: ``-v`` -> the solver log and an update line every
    2 s; standard error a terminal -> the live line; otherwise a plain update line every 30 s.

    Parameters
    ----------
    verbose : bool
        ``-v`` / ``--verbose``.
    label : str
        The command's name, the prefix of the update line.
    stream : file, optional
        Default ``sys.stderr``.

    Returns
    -------
    Progress
        Not started (use ``with``).

    Notes
    -----
    Source: ours.
    """
    out = stream if stream is not None else sys.stderr
    if verbose:
        return Progress("lines", log=True, every=2.0, stream=stream, label=label)
    tty = getattr(out, "isatty", None)
    if tty is not None and tty():
        return Progress("live", every=0.5, stream=stream, label=label)
    return Progress("lines", every=30.0, stream=stream, label=label)
