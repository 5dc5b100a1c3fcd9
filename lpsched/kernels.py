"""Optional compilation of the hot loops: numba when it is installed, plain Python otherwise.

The speed-critical kernels (Phase-1 ``quantile`` windows, the backfill search, incremental
re-planning) are written once as plain Python functions over numpy arrays and decorated with
:func:`jit`. With the ``fast`` extra (``pip install lpsched[fast]``, i.e. numba) they are compiled
in nopython mode and cached on disk; without numba, or with the environment variable
``LPSCHED_NUMBA=0``, the very same source runs interpreted, so both routes give identical
schedules (the tests run both). :data:`BACKEND` says which one is in use (``"numba"`` or
``"python"``); the benchmarks print it.

numba itself is imported on the first call of a kernel, not at ``import lpsched`` (it costs
about half a second): until then a kernel is a thin stand-in; the first call compiles every
registered kernel and puts the compiled dispatchers in the kernels' modules in place of the
stand-ins, so that kernels calling kernels compile in nopython mode.

Source: ours (the house rule "numba for a kernel numpy cannot express", with the fallback that
keeps numba optional).
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
from collections.abc import Callable
from typing import Any, TypeVar, cast

F = TypeVar("F", bound=Callable[..., Any])

_DISABLED = os.environ.get("LPSCHED_NUMBA", "1").strip().lower() in {"0", "false", "no", "off"}

BACKEND: str = (
    "numba" if not _DISABLED and importlib.util.find_spec("numba") is not None else "python"
)
"""``"numba"`` when the kernels are compiled, ``"python"`` when they run interpreted."""

_PENDING: dict[Callable[..., Any], Callable[..., Any]] = {}  # stand-in -> plain function
_COMPILED: dict[Callable[..., Any], Callable[..., Any]] = {}  # stand-in -> numba dispatcher


def _compile_all() -> None:
    """Compile every registered kernel and put the dispatchers in place of the stand-ins.

    Every loaded module of the package that holds a stand-in under any name (the kernel's own
    module, or one that imported it) gets the dispatcher, so that numba, which resolves a
    kernel's globals when it compiles it, sees compiled callees.
    """
    import numba

    while _PENDING:
        stand_in, function = _PENDING.popitem()
        _COMPILED[stand_in] = numba.njit(cache=True)(function)
    package = __name__.partition(".")[0]
    for name, module in list(sys.modules.items()):
        if module is None or name.partition(".")[0] != package:
            continue
        for attr, value in list(vars(module).items()):
            if callable(value) and value in _COMPILED:
                setattr(module, attr, _COMPILED[value])


def jit(function: F) -> F:
    """Compile ``function`` with ``numba.njit(cache=True)`` when numba is in use, else return it.

    Parameters
    ----------
    function : callable
        A module-level kernel written in the subset of Python that numba's nopython mode
        accepts (numpy arrays, ints, floats, loops); it must give the same results interpreted.

    Returns
    -------
    callable
        ``function`` itself under the ``"python"`` backend; otherwise a stand-in that compiles
        on first call (``.py_func`` is the plain function in both cases of ``"numba"``).

    Notes
    -----
    Source: ours.
    """
    if BACKEND == "python":
        return function

    @functools.wraps(function)
    def stand_in(*args: Any) -> Any:
        if _PENDING:
            _compile_all()
        return _COMPILED[stand_in](*args)

    stand_in.py_func = function  # type: ignore[attr-defined]
    _PENDING[stand_in] = function
    return cast(F, stand_in)
