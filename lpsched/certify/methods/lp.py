"""Certify method ``lp``: the LP relaxation of the time-indexed model, solved whole by HiGHS.

Source: SPEC section 3 (:func:`lpsched.solvers.solve.relaxation_bound`); ours as a method.
"""

from __future__ import annotations

from typing import Any

from ...instance import Instance
from ...schedule import Schedule
from ...solvers.options import SolveOptions
from ...solvers.progress import Observer
from ...solvers.solve import relaxation_bound
from ..method import Method

__all__ = ["METHOD"]


def run(
    instance: Instance, schedule: Schedule, options: SolveOptions, observer: Observer
) -> dict[str, Any]:
    """Report the LP value at the tight horizon of ``schedule`` (rounds) to ``observer``; the
    contract is :class:`~lpsched.certify.method.Method`.

    ``options.method_options["lp"]`` may give ``backend`` (``matrix`` or ``pyomo``),
    ``horizon`` and ``windows`` (:func:`~lpsched.solvers.solve.relaxation_bound`).

    Returns
    -------
    dict
        ``horizon`` and the LP's facts (``build_s``, ``solve_s``, ``columns``, ``nonzeros``,
        ``backend``).

    Raises
    ------
    LPTooLargeError
        The model has more than ``options.max_nonzeros`` non-zeros (default
        :data:`~lpsched.solvers.options.LP_MAX_NONZEROS`).
    RuntimeError
        HiGHS did not solve the LP within ``options.time_limit``.
    """
    res = relaxation_bound(
        instance, schedule, options, progress=observer, **options.method_options.get("lp", {})
    )
    observer.on_bound(res.bound)
    return res.info | {"horizon": res.horizon}


METHOD = Method(
    "lp",
    "lower",
    "the LP relaxation of the time-indexed model, built whole and solved by HiGHS",
    run,
)
