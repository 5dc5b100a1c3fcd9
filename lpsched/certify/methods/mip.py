"""Certify method ``mip``: the full time-indexed MIP (HiGHS, or CP-SAT), from the best schedule.

Source: SPEC section 3 (:func:`lpsched.solvers.solve.solve_time_indexed`); ours as a method.
"""

from __future__ import annotations

from typing import Any

from ...instance import Instance
from ...schedule import Schedule
from ...solvers.options import SolveOptions
from ...solvers.progress import Observer
from ...solvers.solve import solve_time_indexed
from ..method import Method

__all__ = ["METHOD", "FACTS", "run_mip"]

#: The facts of the solve the method returns (besides ``horizon`` and ``status``).
FACTS = (
    "solver", "build_s", "solve_s", "T1", "T2", "heuristic_tel", "heuristic", "columns", "rows",
    "nonzeros", "incumbent", "solver_status", "backend", "aggregate", "windows", "error",
    "retry", "nodes", "cuts", "overlap_cuts", "lp_before", "lp_after",
)  # fmt: skip


def run_mip(
    instance: Instance,
    schedule: Schedule,
    options: SolveOptions,
    observer: Observer,
    name: str = "mip",
    defaults: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Report the solver's incumbent and its proven bound to ``observer``: the run of the
    methods ``mip`` and ``mip-overlap``.

    ``options`` (its ``time_limit``, ``mip_gap``, ``threads``, ``max_nonzeros``) goes to
    :func:`~lpsched.solvers.solve.solve_time_indexed`; ``options.method_options[name]`` holds
    its keyword options (``solver``, ``warm_start``, ``horizon``, ``windows``, ``aggregate``,
    ``backend``, ``cover_cuts``, ``overlap_cuts``), over ``defaults``, and may give
    ``mip_gap`` instead of ``options``'.

    Returns
    -------
    dict
        ``horizon``, ``status`` (how the solve ended) and :data:`FACTS` (those reported).
    """
    kwargs = dict(defaults or {}) | dict(options.method_options.get(name, {}))
    if "mip_gap" in kwargs:
        options = options.replace(mip_gap=kwargs.pop("mip_gap"))
    res = solve_time_indexed(instance, schedule, options, progress=observer, **kwargs)
    if res.schedule is not None:
        observer.on_incumbent(res.schedule)
    observer.on_bound(res.bound)
    facts = {key: res.info[key] for key in FACTS if key in res.info}
    return facts | {"horizon": res.horizon, "status": str(res.status)}


METHOD = Method(
    "mip",
    "both",
    "HiGHS (or CP-SAT) on the full time-indexed MIP from the best schedule: its incumbent and "
    "dual bound",
    run_mip,
)
