"""Solver options, checked once, and the model-size limits (SPEC section 3).

:class:`SolveOptions` holds what every solver call takes (time limit, threads, MIP gap, seed,
size limit, work limit) and checks it when it is made: ``time_limit`` None or a finite number
of seconds ``> 0``, ``work_limit`` None or a finite number ``> 0``, ``mip_gap`` a finite
number in ``[0, 1]``, ``threads`` None or a positive integer, ``max_nonzeros`` None or a
positive integer (:class:`ValueError` naming the option and its range). The ``check_*``
functions are the same checks one option at a time.

Model-size limits (named once here). A model
above its limit is refused before any memory is spent on it, with
:class:`~lpsched.solvers.result.LPTooLargeError` naming the size, the horizon, the limit and how to
raise it: ``max_nonzeros=`` in Python, ``--max-nonzeros N`` on ``lpsched exact``, ``bound``,
``export`` and ``schedule`` (for ``sorted-lp``)::

    name                  default      what it limits (constraint-matrix non-zeros)
    LP_MAX_NONZEROS       20,000,000   any model built: solve_exact, solve_lp, lp_bound,
                                       best_bound(method="lp"), export_model(backend="highs"),
                                       Sorted-LP (about 0.5 GB)
    AUTO_LP_MAX_NONZEROS   5,000,000   best_bound(method="auto") tries the LP only up to this,
                                       else it gives the combinatorial bound
    PYOMO_MAX_NONZEROS     2,000,000   models built through Pyomo: export_model(backend="pyomo"),
                                       solve_exact(backend="pyomo"), lp_bound(backend="pyomo")
                                       (about 1 kB of memory per non-zero)
    MAX_HORIZON            1,000,000   horizon T in rounds (one memory row each); not settable

``max_nonzeros=None`` (the default everywhere) means the row's default for that call.

Arrivals may start anywhere (epoch seconds mapped to rounds): every function here works on the
time axis shifted by the earliest arrival ``a_min = min_i a_i`` (``a_i - a_min``), which changes
no TEL and no bound (SPEC section 9), and maps starts back (``p_i + a_min``). Horizons ``T`` are
rounds of the shifted axis (rounds after the earliest arrival).

The options are checked before any work: ``time_limit`` None or a finite number of seconds
``> 0``, ``mip_gap`` a finite number in ``[0, 1]``, ``threads`` None or a positive integer
(:class:`ValueError` naming the option and its range). ``time_limit`` covers the whole call.
Ctrl-C stops a running solver and the solve returns
a result with status ``interrupted``, the best schedule and bound so far.

Arrivals may start anywhere: the solvers work on the time axis shifted by the earliest arrival
(:func:`shift_arrivals`), which changes no TEL and no bound (SPEC section 9).

Source: ours (the limits measured in ``benchmarks/bench_exact.py``).
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..bounds import combinatorial_bound
from ..formulations.horizon import horizon_t1, horizon_t2
from ..formulations.time_indexed import matrix_size
from ..instance import Instance
from .result import LPTooLargeError

__all__ = [
    "SolveOptions",
    "LP_MAX_NONZEROS",
    "AUTO_LP_MAX_NONZEROS",
    "MAX_HORIZON",
    "PYOMO_MAX_NONZEROS",
    "RAISE_LIMIT",
    "check_max_nonzeros",
    "check_time_limit",
    "check_work_limit",
    "check_mip_gap",
    "check_threads",
    "MAX_THREADS",
    "check_horizon",
    "check_size",
    "refuse_if_surely_too_large",
    "shift_arrivals",
]

#: Largest time-indexed model built (constraint-matrix non-zeros), about 0.5 GB.
LP_MAX_NONZEROS = 20_000_000
#: Largest LP that ``best_bound(method="auto")`` tries before falling back to combinatorial.
AUTO_LP_MAX_NONZEROS = 5_000_000
#: Largest horizon (rounds, i.e. memory rows of the time-indexed model).
MAX_HORIZON = 1_000_000
#: Largest model built through Pyomo (about 1 kB of memory per non-zero).
PYOMO_MAX_NONZEROS = 2_000_000
#: How every size message says to raise a limit.
RAISE_LIMIT = "raise it with --max-nonzeros, or max_nonzeros= in Python"
#: Memory per constraint-matrix non-zero of a time-indexed LP solved by HiGHS (bytes; ours:
#: peak RSS of ``lp_bound`` on paper-scaled n = 60, 120, 200 grows about 103 bytes per
#: non-zero, the matrix built and solved), for saying when raising the limit cannot help.
BYTES_PER_NONZERO = 120


def _physical_memory() -> int | None:
    """This machine's memory in bytes, or None where the system does not say."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        return None


def raise_limit_advice(nonzeros: int) -> str:
    """How to get a model of ``nonzeros`` non-zeros built: raise the limit, or (when about
    :data:`BYTES_PER_NONZERO` bytes each exceed this machine's memory) not at all here.
    Source: ours."""
    need, have = nonzeros * BYTES_PER_NONZERO, _physical_memory()
    if have is None or need <= have:
        return RAISE_LIMIT
    return (
        f"raising the limit cannot help: it would need about {need / 2**30:,.0f} GiB of "
        f"memory ({BYTES_PER_NONZERO} bytes per non-zero), and this machine has "
        f"{have / 2**30:,.0f} GiB; 'lpsched certify' and 'lpsched bound --method lp-aggregated' "
        "give bounds without this model"
    )


def check_max_nonzeros(value: int | None, default: int = LP_MAX_NONZEROS) -> int:
    """The model-size limit ``max_nonzeros`` as given: a positive integer, or None for ``default``.

    Raises
    ------
    ValueError
        Naming the option and its valid values, for anything else (0, a negative number, a
        float such as ``1e6``, a string, a boolean). Source: ours.
    """
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(
            "max_nonzeros must be a positive integer (non-zeros of the constraint matrix) or "
            f"None for the default {default:,}, got {value!r}"
        )
    return int(value)


def _is_real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _finite(value: Any) -> bool:
    """A real number whose float is finite (an integer such as ``10**400`` is not)."""
    try:
        return _is_real(value) and math.isfinite(float(value))
    except OverflowError:
        return False


def check_time_limit(value: float | None, name: str = "time_limit") -> float | None:
    """A time limit as given: None (no limit) or a finite number of seconds ``> 0``.

    Raises
    ------
    ValueError
        Naming the option and its valid values, for anything else (0, a negative number,
        NaN, infinity, a string, a boolean). Source: ours.
    """
    if value is None:
        return None
    if not _finite(value) or value <= 0:
        raise ValueError(
            f"{name} must be None (no limit) or a finite number of seconds > 0, got {value!r}"
        )
    return float(value)


def check_work_limit(value: float | None, solver: str | None = None) -> float | None:
    """A work limit as given: None (no limit) or a finite number ``> 0`` of the solver's
    deterministic work units (see :class:`SolveOptions`), a whole number for
    ``solver="highs"`` (branch-and-bound nodes).

    Raises
    ------
    ValueError
        Naming the option and its valid values, for anything else (0, a negative number,
        NaN, infinity, a string, a boolean, a fraction of a node). Source: ours.
    """
    if value is None:
        return None
    if not _finite(value) or value <= 0:
        raise ValueError(
            "work_limit must be None (no limit) or a finite number > 0 (HiGHS: branch-and-bound "
            f"nodes; CP-SAT: deterministic seconds), got {value!r}"
        )
    if solver == "highs" and not float(value).is_integer():
        raise ValueError(f"work_limit for HiGHS is a whole number of nodes, got {value!r}")
    return float(value)


def check_mip_gap(value: float) -> float:
    """The relative MIP gap as given: a finite number in ``[0, 1]``.

    Raises
    ------
    ValueError
        Naming the option and its valid range, for anything else. Source: ours.
    """
    if not _finite(value) or not 0 <= value <= 1:
        raise ValueError(f"mip_gap must be a finite number in [0, 1], got {value!r}")
    return float(value) + 0.0  # -0.0 -> 0.0


#: Most solver threads accepted: four per core of this machine, at least 8 (ours: with 4,096
#: threads on 2 cores HiGHS aborted once with SIGABRT and certify took 4-9x its time limit;
#: with 256, 1.7x; threads beyond the cores only contend).
MAX_THREADS = max(8, 4 * (os.cpu_count() or 1))


def check_threads(value: int | None) -> int | None:
    """Solver threads as given: None (the solver's choice) or an integer in
    ``[1, MAX_THREADS]``.

    Raises
    ------
    ValueError
        Naming the option and its valid values, for anything else. Source: ours.
    """
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Integral)
        or not 1 <= value <= MAX_THREADS
    ):
        raise ValueError(
            "threads must be None (the solver's choice) or an integer from 1 to "
            f"{MAX_THREADS:,}, got {value!r}"
        )
    return int(value)


def shift_arrivals(instance: Instance) -> tuple[Instance, int]:
    """The instance on the time axis that starts at its earliest arrival, and that shift.

    Returns
    -------
    shifted : Instance
        ``instance`` with arrivals ``a_i - a_min`` (the same object when ``a_min = 0``).
    shift : int
        ``a_min = min_i a_i`` (rounds). Every schedule of ``shifted`` with starts ``p_i`` is
        a schedule of ``instance`` with starts ``p_i + a_min``, with the same latencies
        ``C_i - a_i`` and the same memory per round (moved by ``a_min``), so the optimal TEL
        and every bound are the same (SPEC section 9).

    Notes
    -----
    Source: SPEC section 9 (arrivals in epoch seconds mapped to rounds); ours.
    """
    shift = int(instance.arrival.min())
    if shift == 0:
        return instance, 0
    return instance.replace(arrival=instance.arrival - shift), shift


def refuse_if_surely_too_large(instance: Instance, max_nonzeros: int) -> None:
    """Refuse before any heuristic runs when even the smallest horizon the tight rule could
    choose gives too large a model.

    The combinatorial bound ``LB`` is at most any ``UB``, so ``T2 >= horizon_t2(LB)`` and every
    start window has slack ``>= LB - sum o`` (SPEC section 3).

    Raises
    ------
    LPTooLargeError
        See :func:`check_size`. Source: ours.
    """
    lb = combinatorial_bound(instance)
    t_lo = min(horizon_t1(instance), horizon_t2(instance, lb))
    check_size(instance, t_lo, lb - int(instance.decode.sum()), max_nonzeros, at_least=True)


def check_horizon(instance: Instance, T: int, model: str = "the time-indexed model") -> None:
    """Refuse a model with one memory row per round of a horizon ``T`` above ``MAX_HORIZON``.

    Every method that keeps a row, a price or a profile entry per round calls this before it
    allocates anything of length ``T``: arrivals spread over 10^9 rounds would otherwise ask
    for gigabytes before any time limit is looked at.

    Parameters
    ----------
    instance : Instance
        Named in the message.
    T : int
        Horizon (rounds).
    model : str, optional
        What needs the horizon, for the message.

    Raises
    ------
    LPTooLargeError
        ``T > MAX_HORIZON``, naming both. Source: ours.
    """
    if T > MAX_HORIZON:
        raise LPTooLargeError(
            f"{instance.name}: {model} needs horizon T = {T:,} rounds (one memory row each), "
            f"above the limit MAX_HORIZON = {MAX_HORIZON:,}, which is fixed"
        )


def check_size(
    instance: Instance, T: int, slack: int | None, max_nonzeros: int, at_least: bool = False
) -> None:
    """Refuse a model of horizon ``T`` (rounds) above a limit of the module docstring's table.

    Parameters
    ----------
    instance : Instance
    T : int
        Horizon (rounds).
    slack : int or None
        Waiting slack of the start windows (rounds); None: full windows.
    max_nonzeros : int
        Limit on the constraint-matrix non-zeros.
    at_least : bool, default False
        ``T`` is the smallest horizon the tight rule could choose, so the model has at least
        this size (said in the message).

    Raises
    ------
    LPTooLargeError
        Naming the size, the horizon, the limit and how to raise it. Source: ours.
    """
    check_horizon(instance, T)
    cols, nnz = matrix_size(instance, T, slack)
    if nnz > max_nonzeros:
        size = (
            f"needs at least {nnz:,} non-zeros ({cols:,} columns at the smallest horizon "
            f"possible, T = {T:,})"
            if at_least
            else f"has {nnz:,} non-zeros ({cols:,} columns) at horizon T = {T:,}"
        )
        raise LPTooLargeError(
            f"{instance.name}: the time-indexed model {size}, above the limit of "
            f"{max_nonzeros:,} ({raise_limit_advice(nnz)})"
        )


@dataclass(frozen=True)
class SolveOptions:
    """What every solver call and every certify method takes, checked once when made.

    Attributes
    ----------
    time_limit : float or None, default 60
        Seconds of wall time for the whole call; None: no limit.
    threads : int or None
        Threads of HiGHS and CP-SAT; None: the solver's choice.
    mip_gap : float, default 0
        Relative gap at which a MIP stops (0: prove optimality).
    seed : int, default 0
        Seed of the randomised searches (local search, LNS), ``>= 0`` (numpy's generators).
    max_nonzeros : int or None
        Size limit of a model (constraint-matrix non-zeros); None: the call's default (the
        table of the module docstring).
    local_search : int, default 0
        Moves of the list local search in the driver's opening
        (:func:`lpsched.certify.solve`; ``lpsched exact`` makes 4,000).
    method_options : dict, default {}
        Keyword options per method of the driver's plan, by method name (``{"mip":
        {"solver": "cpsat"}}``); each method says which it takes.
    work_limit : float or None
        Deterministic work of the MIP methods (``mip``, ``mip-overlap``; so
        :func:`lpsched.solve_exact`), the same on a busy machine as on an idle one: HiGHS'
        branch-and-bound nodes (``mip_max_nodes``, a whole number), CP-SAT's deterministic
        seconds (``max_deterministic_time``; deterministic with ``threads=1`` only). A solve
        it stops has status ``work-limit``. ``time_limit`` stays a safety net; with a work
        limit the driver's opening local search is stopped by its moves, not at 5 s. None:
        no work limit.

    Raises
    ------
    ValueError
        An option out of its range (the message names it). Source: ours (one place for the
        checks that were repeated at every entry point).
    """

    time_limit: float | None = 60.0
    threads: int | None = None
    mip_gap: float = 0.0
    seed: int = 0
    max_nonzeros: int | None = None
    local_search: int = 0
    method_options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    work_limit: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "time_limit", check_time_limit(self.time_limit))
        object.__setattr__(self, "work_limit", check_work_limit(self.work_limit))
        object.__setattr__(self, "threads", check_threads(self.threads))
        object.__setattr__(self, "mip_gap", check_mip_gap(self.mip_gap))
        if (
            isinstance(self.seed, bool)
            or not isinstance(self.seed, numbers.Integral)
            or not 0 <= self.seed < 2**63
        ):
            raise ValueError(f"seed must be an integer in [0, 2**63), got {self.seed!r}")
        object.__setattr__(self, "seed", int(self.seed))
        if self.max_nonzeros is not None:
            object.__setattr__(self, "max_nonzeros", check_max_nonzeros(self.max_nonzeros))
        if (
            isinstance(self.local_search, bool)
            or not isinstance(self.local_search, numbers.Integral)
            or self.local_search < 0
        ):
            raise ValueError(
                f"local_search must be a non-negative integer (moves), got {self.local_search!r}"
            )

    def replace(self, **changes: Any) -> SolveOptions:
        """A copy with ``changes`` (checked again)."""
        return dataclasses.replace(self, **changes)
