"""The policy registry: one name, one callable ``(instance, **options) -> Schedule``.

The command line, the experiments and the notebooks all go through :func:`run_policy`, so a new
policy is one module (its priority-list function) plus one line in :data:`POLICIES`, or, at run
time, one call of :func:`register_policy`. List policies (those that produce a
priority list for the executor) are registered through :func:`list_policy`; policies that need
their own executor (eviction, re-planning) register a schedule-producing function directly.

A list policy's name may carry the suffix ``+backfill`` (``"mcsf+backfill"``): the same list,
run with ``backfill=True`` (SPEC section 4).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..executor import execute
from ..instance import Instance
from ..schedule import Schedule
from .amin import amax, amin, sorted_f_amin
from .baselines import fcfs_order, mcsf_order, size_order
from .online import online_fcfs, online_mcsf, online_sorted_f
from .sorted_f import sorted_f_order
from .sorted_lp import sorted_lp_order

__all__ = [
    "Policy",
    "POLICIES",
    "list_policy",
    "register_policy",
    "run_policy",
    "policy_names",
    "parse_policy",
]


@dataclass(frozen=True)
class Policy:
    """A registered policy.

    Attributes
    ----------
    name : str
        Registry name (``fcfs``, ``mcsf``, ...).
    run : callable
        ``run(instance, **options) -> Schedule``.
    description : str
        One line for ``lpsched policies`` and tables.
    options : tuple of str
        Keyword options the policy accepts (``backfill`` aside).
    backfill : bool
        Whether ``NAME+backfill`` exists: ``run`` then takes ``backfill=``. Policies with their
        own executor run in strict order only.
    """

    name: str
    run: Callable[..., Schedule]
    description: str
    options: tuple[str, ...] = ()
    backfill: bool = False


def list_policy(
    name: str, order: Callable[..., np.ndarray], description: str, options: tuple[str, ...] = ()
) -> Policy:
    """Wrap a priority-list function ``order(instance, **options) -> ndarray (n,)`` as a policy
    that runs the list with the executor; the schedule's ``info`` gets the list and timings."""

    def run(instance: Instance, *, backfill: bool = False, **opts) -> Schedule:
        t0 = time.perf_counter()
        lst = order(instance, **opts)
        t1 = time.perf_counter()
        label = name + ("+backfill" if backfill else "")
        sched = execute(instance, lst, backfill=backfill, policy=label)
        sched.info.update(order=lst, order_runtime_s=t1 - t0, runtime_s=time.perf_counter() - t0)
        return sched

    return Policy(name, run, description, options, backfill=True)


POLICIES: dict[str, Policy] = {
    p.name: p
    for p in (
        list_policy("fcfs", fcfs_order, "first come, first served (by arrival)"),
        list_policy("mcsf", mcsf_order, "memory-constrained shortest first (by decode length o_i)"),
        list_policy("size", size_order, "size-based priority (by s_i + o_i)"),
        list_policy(
            "sorted-f",
            sorted_f_order,
            "Sorted-F: batches minimising F(X) = sum o_i / |X|^2, then continuous batching",
            ("solver", "sample_size", "quantile", "seed"),
        ),
        list_policy(
            "sorted-lp",
            sorted_lp_order,
            "Sorted-LP: by the LP relaxation's fractional completion time, then o_i",
            ("horizon", "max_nonzeros"),
        ),
    )
}

# Policies with their own executor (eviction, online re-planning): SPEC sections 5 and 6.
_PHASE1_OPTIONS = ("solver", "sample_size", "quantile", "seed")
for _p in (
    Policy(
        "amax", amax, "A_max: MC-SF on the upper bounds u_i of the decode intervals", ("online",)
    ),
    Policy(
        "amin", amin, "A_min: MC-SF on estimates raised from l_i, evicting on overflow", ("online",)
    ),
    Policy(
        "sorted-f-amin",
        sorted_f_amin,
        "Sorted-F on the A_min estimates, re-planned after evictions",
        ("online", *_PHASE1_OPTIONS),
    ),
    Policy("online-fcfs", online_fcfs, "online FCFS over the arrived requests", ("replan_every",)),
    Policy("online-mcsf", online_mcsf, "online MC-SF: arrived requests by o_i", ("replan_every",)),
    Policy(
        "online-sorted-f",
        online_sorted_f,
        "receding-horizon Sorted-F: Phase 1 re-planned over the arrived requests",
        ("replan_every", *_PHASE1_OPTIONS),
    ),
):
    POLICIES[_p.name] = _p


def register_policy(
    name: str,
    order: Callable[..., np.ndarray],
    description: str = "",
    options: tuple[str, ...] = (),
) -> Policy:
    """Register a list policy at run time; the command line and the sweeps then know its name.

    Parameters
    ----------
    name : str
        Registry name: letters, digits and ``-`` or ``_``, not already registered, without
        ``+`` (``NAME+backfill`` is made automatically).
    order : callable
        ``order(instance, **options) -> ndarray of int, shape (n,)``: a priority list (a
        permutation of ``range(n)``) that the executor runs (SPEC section 4).
    description : str
        One line for ``lpsched policies``.
    options : tuple of str
        Keyword options ``order`` accepts (the others that a comparison passes are dropped).

    Returns
    -------
    Policy
        The registered policy.

    Raises
    ------
    ValueError
        A malformed or already registered name.

    Notes
    -----
    Source: ours (the plug-in route of ``docs/architecture.md``).
    """
    if not isinstance(name, str) or not name or not all(c.isalnum() or c in "-_" for c in name):
        raise ValueError(f"policy name must be letters, digits, '-' or '_', got {name!r}")
    if name in POLICIES:
        raise ValueError(f"policy {name!r} is already registered")
    policy = list_policy(name, order, description, options)
    POLICIES[name] = policy
    return policy


def policy_names() -> list[str]:
    """Names of all registered policies, in registry order."""
    return list(POLICIES)


def parse_policy(spec: str) -> tuple[Policy, bool]:
    """Split ``"name[+backfill]"`` into the registered policy and the backfill flag.

    Raises
    ------
    KeyError
        If the name is not registered (the message lists the registered names).
    """
    text = spec.strip() if isinstance(spec, str) else ""
    name, plus, suffix = text.partition("+")
    if (plus and suffix != "backfill") or name not in POLICIES:
        raise KeyError(
            f"unknown policy {spec!r}; registered: {', '.join(POLICIES)} "
            "(list policies also as NAME+backfill)"
        )
    policy = POLICIES[name]
    if plus and not policy.backfill:
        raise KeyError(f"policy {name!r} runs in strict order only; '{spec}' does not exist")
    return policy, bool(plus)


def run_policy(instance: Instance, spec: str, **options) -> Schedule:
    """Run the policy ``spec`` (``"name"`` or ``"name+backfill"``) on ``instance``.

    Parameters
    ----------
    instance : Instance
    spec : str
        Registered name, optionally with ``+backfill``.
    **options
        Policy options; those a policy does not accept are ignored, so one option set can be
        passed to every policy of a comparison (``solver`` only reaches ``sorted-f``).

    Returns
    -------
    Schedule
        Feasible by construction; ``info["runtime_s"]`` is the wall time of list + executor.

    Raises
    ------
    KeyError
        Unknown policy name.
    """
    policy, backfill = parse_policy(spec)
    opts = {k: v for k, v in options.items() if k in policy.options}
    if policy.backfill:
        opts["backfill"] = backfill
    return policy.run(instance, **opts)
