"""lpsched: mathematical programming for LLM-serving schedules under a KV-cache budget.

The data flow (ARCHITECTURE.md): workloads / files -> :class:`Instance` -> policy (priority list)
-> :func:`execute` -> :class:`Schedule` -> metrics. Seed paper: Wang, Ye, Zhou, *LLM Serving
Optimization with Variable Prefill and Decode Lengths*, arXiv 2508.06133.
"""

from .executor import execute
from .instance import (
    Instance,
    InstanceError,
    Request,
    read_instance,
    read_trace_csv,
    write_instance,
)
from .policies import POLICIES, run_policy
from .schedule import InfeasibleScheduleError, Schedule, read_schedule

__version__ = "0.1.0"

__all__ = [
    "Instance",
    "InstanceError",
    "Request",
    "read_instance",
    "write_instance",
    "read_trace_csv",
    "Schedule",
    "read_schedule",
    "InfeasibleScheduleError",
    "execute",
    "POLICIES",
    "run_policy",
    "__version__",
]
