"""lpsched: mathematical programming for LLM-serving schedules under a KV-cache budget.

The data flow (``docs/architecture.md``): generators / files -> :class:`Instance` -> policy
(priority list) -> :func:`execute` -> :class:`Schedule` -> metrics; and Instance ->
formulations -> solvers -> the driver (:func:`solve`) -> one :class:`Result`: exact TEL,
bounds, gaps. This module re-exports the names a
researcher uses daily. Seed paper: Wang, Ye, Zhou, *LLM Serving Optimization with Variable
Prefill and Decode Lengths*, arXiv 2508.06133.
"""

__version__ = "0.1.0"

from .certify import best_bound, certify, export_model, lp_bound, solve, solve_exact  # noqa: E402
from .executor import execute  # noqa: E402
from .instance import Instance, InstanceError, Request  # noqa: E402
from .io import (  # noqa: E402
    default_instance,
    read_instance,
    read_schedule,
    read_trace_csv,
    write_instance,
    write_schedule,
)
from .policies.registry import POLICIES, list_policy, register_policy, run_policy  # noqa: E402
from .schedule import InfeasibleScheduleError, Schedule  # noqa: E402
from .solvers import Result, SolveOptions, SolveStatus  # noqa: E402
from .timing import TimeModel, register_time_model, to_seconds  # noqa: E402

__all__ = [
    "__version__",
    "Instance",
    "InstanceError",
    "Request",
    "read_instance",
    "default_instance",
    "write_instance",
    "read_trace_csv",
    "Schedule",
    "read_schedule",
    "write_schedule",
    "InfeasibleScheduleError",
    "execute",
    "POLICIES",
    "list_policy",
    "register_policy",
    "run_policy",
    "SolveStatus",
    "SolveOptions",
    "Result",
    "solve",
    "solve_exact",
    "lp_bound",
    "best_bound",
    "export_model",
    "certify",
    "TimeModel",
    "register_time_model",
    "to_seconds",
]
