"""Optional compilation of the hot loops: numba when it is installed, plain Python otherwise.

The speed-critical kernels (Phase-1 ``quantile`` windows, the backfill search, incremental
re-planning) are written once as plain Python functions over numpy arrays and decorated with
:func:`jit`. With the ``fast`` extra (``pip install lpsched[fast]``, i.e. numba) they are compiled
in nopython mode and cached on disk; without numba, or with the environment variable
``LPSCHED_NUMBA=0``, the very same source runs interpreted, so both routes give identical
schedules (the tests run both). :data:`BACKEND` says which one is in use (``"numba"`` or
``"python"``); the benchmarks print it.

Source: ours (the house rule "numba for a kernel numpy cannot express", with the fallback that
keeps numba optional).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from types import ModuleType
from typing import Any, TypeVar, cast

F = TypeVar("F", bound=Callable[..., Any])

_numba: ModuleType | None
try:  # pragma: no cover - which branch runs depends on the environment
    if os.environ.get("LPSCHED_NUMBA", "1").strip().lower() in {"0", "false", "no", "off"}:
        raise ImportError("disabled by LPSCHED_NUMBA=0")
    import numba

    _numba = numba
except ImportError:  # pragma: no cover
    _numba = None

BACKEND: str = "numba" if _numba is not None else "python"
"""``"numba"`` when the kernels are compiled, ``"python"`` when they run interpreted."""


def jit(function: F) -> F:
    """Compile ``function`` with ``numba.njit(cache=True)`` when numba is in use, else return it.

    Parameters
    ----------
    function : callable
        A kernel written in the subset of Python that numba's nopython mode accepts (numpy
        arrays, ints, floats, loops); it must give the same results interpreted.

    Returns
    -------
    callable
        The compiled kernel, or ``function`` itself.

    Notes
    -----
    Source: ours.
    """
    if _numba is None:
        return function
    return cast(F, _numba.njit(cache=True)(function))
