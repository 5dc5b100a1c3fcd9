"""The policy registry: one name, one callable ``(instance, **options) -> Schedule``.

The command line, the experiments and the notebooks all go through :func:`run_policy`, so a new
policy is one module (its priority-list function) plus one line in :data:`POLICIES` (a
:class:`~lpsched.plugins.Registry`), or, at run time, one call of :func:`register_policy`. List
policies (those that produce a priority list for the executor) are registered through
:func:`list_policy`; policies that need their own executor (eviction, re-planning) register a
schedule-producing function directly.

Plug-ins reach the registry in two ways (both loaded on the first look-up of a name that is not
registered, so every process, sweep workers included, finds them): an installed package's
entry point in the group ``lpsched.policies`` (``NAME = "module:function"``, the entry point's
name is the policy name) and the modules named in the environment variable ``LPSCHED_PLUGINS``,
which :func:`~lpsched.plugins.import_plugins` (the command line's ``--import MODULE``) imports
and sets; that machinery lives in :mod:`lpsched.plugins`, shared with the time models, and its
names are re-exported here. The sweep engine also passes the modules imported here
(:func:`~lpsched.plugins.plugin_modules`) to its worker processes, which import them before
their first task.

Policy options: a policy declares the keywords it takes (:attr:`Policy.options`);
:func:`check_policy_options` refuses, before a comparison starts, an option that none of its
policies declares (:class:`PolicySelectionError`), and :func:`run_policy` passes each policy
only the options it declares.

A list policy's name may carry the suffix ``+backfill`` (``"mcsf+backfill"``): the same list,
run with ``backfill=True`` (SPEC section 4).
"""

from __future__ import annotations

import copy
import inspect
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..blind import BlindSpec
from ..executor import execute
from ..instance import Instance
from ..plugins import (
    PLUGINS_ENV,
    PluginError,
    Registry,
    call_plugin,
    import_plugins,
    plugin_modules,
)
from ..schedule import Schedule
from ..solvers.result import LPTooLargeError
from .amin import AMAX, AMIN, AMIN_OPTIONS, SORTED_F_AMIN, amax, amin, sorted_f_amin
from .baselines import fcfs_order, mcsf_order, size_order
from .gsa import GSA, GSA_SPEC, check_gsa_options
from .online import online_fcfs, online_mcsf, online_sorted_f
from .pipeline import check_gba_options, gba, gba_d, sps
from .rect import RECT
from .response import RESPONSE, check_response_options
from .route import ROUTE, check_route_options
from .sorted_f import check_phase1_options, sorted_f_order
from .sorted_f_seconds import sorted_f_seconds_order
from .sorted_lp import check_lp_options, lp_swap_order, sorted_lp_order
from .svf import svf, volume_order
from .svf_1bit import OneBitSVF, check_one_bit_options, one_bit_reveal
from .vllm import check_victim_options, vllm, vllm_sf

__all__ = [
    "Policy",
    "POLICIES",
    "CLOCK_POLICIES",
    "list_policy",
    "blind_policy",
    "register_policy",
    "ENTRY_POINT_GROUP",
    "PLUGINS_ENV",
    "PluginError",
    "PolicySelectionError",
    "import_plugins",
    "plugin_modules",
    "load_plugins",
    "check_policy_options",
    "options_for",
    "run_policy",
    "policy_names",
    "parse_policy",
    "describe_policies",
]


@dataclass(frozen=True)
class Policy:
    """A registered policy: its name, how it runs, and what the registry and the command line
    need to know of it (options, variants, clock, list, checks, blindness).

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
    clock : bool
        Whether the policy admits by arrivals in seconds (``arrival_s``) on the clock of the
        time model given as its option ``time_model`` (SPEC section 10). A policy may take a
        ``time_model`` only to plan with it (``sorted-f-seconds``) and not run on a clock.
    listed : bool
        Whether its schedule follows one fixed priority list, ``info["order"]`` (what
        ``lpsched priorities`` writes): the list policies, ``svf`` and the vLLM-style queues.
    check : callable or None
        ``check(**options)``: raises ValueError for a bad option value, called with the
        options given that the policy declares before a comparison starts
        (:func:`check_policy_options`); None: the values are checked when it runs.
    blind : BlindSpec or None
        For a non-clairvoyant policy (SPEC section 11): how it is built on a view of the
        instance without ``o_i`` (:func:`blind_policy`); None for a policy that sees ``o_i``.
    """

    name: str
    run: Callable[..., Schedule]
    description: str
    options: tuple[str, ...] = ()
    backfill: bool = False
    clock: bool = False
    listed: bool = False
    check: Callable[..., Any] | None = None
    blind: BlindSpec | None = None

    def to_dict(self) -> dict[str, Any]:
        """``name``, ``description``, ``options`` (list) and ``backfill``: a row of ``lpsched
        policies --json``."""
        return {
            "name": self.name,
            "description": self.description,
            "options": list(self.options),
            "backfill": self.backfill,
        }


def list_policy(
    name: str,
    order: Callable[..., np.ndarray],
    description: str,
    options: tuple[str, ...] = (),
    *,
    backfill: bool = True,
    check: Callable[..., Any] | None = None,
) -> Policy:
    """Wrap a priority-list function ``order(instance, **options) -> ndarray (n,)`` as a policy
    that runs the list with the executor; the schedule's ``info`` gets the list and timings.
    ``backfill=False`` refuses ``NAME+backfill`` (a list tuned for the strict executor);
    ``check`` as :attr:`Policy.check`."""

    def run(instance: Instance, *, backfill: bool = False, **opts) -> Schedule:
        t0 = time.perf_counter()
        lst = order(instance, **opts)
        t1 = time.perf_counter()
        label = name + ("+backfill" if backfill else "")
        sched = execute(instance, lst, backfill=backfill, policy=label)
        sched.info.update(order=lst, order_runtime_s=t1 - t0, runtime_s=time.perf_counter() - t0)
        return sched

    return Policy(name, run, description, options, backfill=backfill, listed=True, check=check)


def blind_policy(
    name: str,
    spec: BlindSpec,
    description: str,
    options: tuple[str, ...] = (),
    *,
    check: Callable[..., Any] | None = None,
) -> Policy:
    """Wrap a :class:`~lpsched.blind.BlindSpec` as a policy run by the blind executor (SPEC
    section 11): the policy is built on a view of the instance without ``o_i`` and learns each
    ``o_i`` when the request completes. ``check`` as :attr:`Policy.check`. The policy's ``run``
    takes exactly the keywords ``options`` (its signature says so; another raises TypeError).
    Source: ours."""

    def run(instance: Instance, **opts: Any) -> Schedule:
        unknown = sorted(set(opts) - set(options))
        if unknown:
            raise TypeError(f"policy {name!r} takes no option {', '.join(map(repr, unknown))}")
        return spec.run(instance, name=name, **opts)

    # the signature it has: the instance, then its options as keywords (what ``options`` says)
    keyword = inspect.Parameter.KEYWORD_ONLY
    run.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter("instance", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + [inspect.Parameter(o, keyword, default=None) for o in options]
    )
    return Policy(name, run, description, options, check=check, blind=spec)


#: Entry-point group of plug-in policies: ``NAME = "module:function"`` registers ``function``
#: (a priority-list function, as for :func:`register_policy`) as the list policy ``NAME``.
ENTRY_POINT_GROUP = "lpsched.policies"

_PHASE1_OPTIONS = ("solver", "sample_size", "quantile", "seed")
#: Every policy by name, in the order of ``lpsched policies``: the list policies, then those
#: with their own executor, then the plug-ins as they are registered (:func:`register_policy`,
#: entry points of :data:`ENTRY_POINT_GROUP`, loaded on the first look-up of a name).
POLICIES: Registry[Policy] = Registry(
    "policy",
    (
        # the list policies: a priority list run by the executor (SPEC section 4)
        list_policy("fcfs", fcfs_order, "first come, first served (by arrival)"),
        list_policy("mcsf", mcsf_order, "memory-constrained shortest first (by decode length o_i)"),
        list_policy("size", size_order, "size-based priority (by s_i + o_i)"),
        list_policy(
            "sorted-f",
            sorted_f_order,
            "Sorted-F: batches minimising F(X) = sum o_i / |X|^2, then continuous batching",
            ("solver", "sample_size", "quantile", "seed", "fit"),
            check=check_phase1_options,
        ),
        list_policy(
            "sorted-lp",
            sorted_lp_order,
            "Sorted-LP: by the LP relaxation's fractional completion time, then o_i",
            ("horizon", "max_nonzeros", "lp", "max_iterations"),
            check=check_lp_options,
        ),
        list_policy(
            "volume",
            volume_order,
            "SVF's order (memory-time volume s_i o_i + o_i (o_i + 1) / 2) on lpsched's executor",
        ),
        list_policy(
            "lp-swap",
            lp_swap_order,
            "LP-Swap (our reading): Sorted-LP's list, neighbours swapped while TEL falls",
            ("horizon", "max_nonzeros", "lp", "max_iterations", "max_passes"),
            backfill=False,  # its swaps are judged by the strict executor
            check=check_lp_options,
        ),
        list_policy(
            "sorted-f-seconds",
            sorted_f_seconds_order,
            "Sorted-F in seconds: batches minimising F(X) x their mean seconds per round under "
            "a time model (ours)",
            ("time_model",),
        ),
        # policies with their own executor (eviction, online re-planning, preemption): SPEC
        # sections 5 and 6, and the production-style baselines of section 4; those marked ``clock``
        # admit by arrivals in seconds (``arrival_s``) on the clock of their option ``time_model``
        # (SPEC section 10): :data:`CLOCK_POLICIES`. The three of section 6 are blind (SPEC
        # section 11): each function runs its ``blind`` spec and takes the options as keywords
        Policy(
            "amax",
            amax,
            "A_max: MC-SF on the upper bounds u_i of the decode intervals",
            AMIN_OPTIONS,
            blind=AMAX,
        ),
        Policy(
            "amin",
            amin,
            "A_min: MC-SF on estimates raised from l_i, evicting on overflow",
            AMIN_OPTIONS,
            blind=AMIN,
        ),
        Policy(
            "sorted-f-amin",
            sorted_f_amin,
            "Sorted-F on the A_min estimates, re-planned after evictions",
            (*AMIN_OPTIONS, *_PHASE1_OPTIONS),
            blind=SORTED_F_AMIN,
        ),
        Policy(
            "svf",
            svf,
            "SVF: smallest volume first, peak reservation s_i + o_i, strict head-of-line",
            listed=True,
        ),
        Policy(
            "sps",
            sps,
            "staggered pipeline: slots started at offsets floor(j L / K), window L = max o_i",
        ),
        Policy(
            "gba",
            gba,
            "geometric batching: decode-length classes shortest first, each a staggered pipeline",
            ("alpha", "beta"),
            check=check_gba_options,
        ),
        Policy(
            "gba-d",
            gba_d,
            "GBA with every request started early where memory allows, delaying none",
            ("alpha", "beta"),
            check=check_gba_options,
        ),
        Policy(
            "online-fcfs",
            online_fcfs,
            "online FCFS over the arrived requests",
            ("replan_every", "time_model"),
            clock=True,
        ),
        Policy(
            "online-mcsf",
            online_mcsf,
            "online MC-SF: arrived requests by o_i",
            ("replan_every", "time_model"),
            clock=True,
        ),
        Policy(
            "online-sorted-f",
            online_sorted_f,
            "receding-horizon Sorted-F: Phase 1 re-planned over the arrived requests",
            ("replan_every", *_PHASE1_OPTIONS, "time_model"),
            clock=True,
        ),
        # the production-style baselines (SPEC section 4): two queues, the same options
        *(
            Policy(
                name,
                run,
                description,
                ("time_model", "victim", "early_fraction"),
                check=check_victim_options,
                clock=True,
                listed=True,
            )
            for name, run, description in (
                (
                    "vllm",
                    vllm,
                    "production-style: FCFS queue, admission by current memory, recompute "
                    "preemption",
                ),
                ("vllm-sf", vllm_sf, "as vllm with the queue by decode length o_i"),
            )
        ),
        # non-clairvoyant policies (SPEC section 11)
        blind_policy(
            "svf-1bit",
            BlindSpec(OneBitSVF, one_bit_reveal),
            "1-bit SVF (blind): queue by the volume of a class surrogate, peak reservation "
            "s_i + surrogate, extended or killed when outlived",
            ("max_decode", "threshold", "surrogate_short", "surrogate_long", "outlive"),
            check=check_one_bit_options,
        ),
        # GSA and GSA-Spec: one pipeline of slices, the same options
        *(
            blind_policy(
                name, spec, description, ("alpha", "beta", "prompts"), check=check_gsa_options
            )
            for name, spec, description in (
                (
                    "gsa",
                    GSA,
                    "GSA (blind): geometric slices beta alpha^p per phase on a staggered "
                    "pipeline, unfinished attempts killed and retried",
                ),
                (
                    "gsa-spec",
                    GSA_SPEC,
                    "GSA-Spec (blind): GSA plus speculative attempts in the memory it leaves "
                    "idle, killed first on a shortage",
                ),
            )
        ),
        blind_policy(
            "rect",
            RECT,
            "blind: caps 2^r, kill and restart, queue by area budget 2 s_i 2^r (Rect)",
        ),
        blind_policy(
            "response",
            RESPONSE,
            "blind: phases of cap 2^r, each a staggered pipeline on a surrogate prompt (Response)",
            ("surrogate_quantile",),
            check=check_response_options,
        ),
        blind_policy(
            "route",
            ROUTE,
            "blind: large to Rect, small prompt-heavy to capped Rect, then Response (Route)",
            ("large_fraction", "stage_unit", "surrogate_quantile"),
            check=check_route_options,
        ),
    ),
    taken="{kind} {name!r} is already registered (register_policy(..., replace=True) replaces it)",
    unknown="unknown {kind} {name!r}; registered: {names}{plugins} (list policies also as "
    "NAME+backfill)",
    group=ENTRY_POINT_GROUP,
    plugin=lambda name, function, description, _source: register_policy(
        name, function, description
    ),
)
#: The built-in policies that admit by arrivals in seconds on a time model's clock
#: (:attr:`Policy.clock`; SPEC section 10).
CLOCK_POLICIES = tuple(name for name, p in POLICIES.items() if p.clock)


class PolicyError(ValueError):
    """A registered (plug-in) policy raised or returned something other than a priority list;
    the message names the policy and its function. Source: ours."""


def register_policy(
    name: str,
    function: Callable[..., np.ndarray],
    description: str = "",
    options: tuple[str, ...] = (),
    replace: bool = False,
) -> Policy:
    """Register a list policy at run time; :func:`run_policy` and the sweeps of this process
    then know its name (the command line through ``--import MODULE`` or an entry point).

    Parameters
    ----------
    name : str
        Registry name: letters, digits and ``-`` or ``_``, not already registered, without
        ``+`` (``NAME+backfill`` is made automatically).
    function : callable
        ``function(instance, **options) -> ndarray of int, shape (n,)``: a priority list (a
        permutation of ``range(n)``) that the executor runs (SPEC section 4). It is called on a
        private copy of the instance, so whatever it changes there is not seen by the
        executor, the feasibility check or the policies that run after it.
    description : str
        One line for ``lpsched policies``.
    options : tuple of str
        Keyword options ``function`` accepts (the others that a comparison passes, such as
        ``solver``, are dropped).
    replace : bool, default False
        Replace a policy of this name registered earlier by ``register_policy`` (re-running a
        notebook cell); the built-in policies are never replaced.

    Returns
    -------
    Policy
        The registered policy.

    Raises
    ------
    ValueError
        A malformed or already registered name (``replace=True``: a built-in name).

    Notes
    -----
    Source: ours (the plug-in route of ``docs/architecture.md``).
    """
    where = f"{getattr(function, '__module__', '?')}.{getattr(function, '__qualname__', '?')}"

    def checked(instance: Instance, **opts) -> np.ndarray:
        # a private copy: a plug-in that unfreezes and rewrites the arrays (or the memory)
        # changes only its own view, never the instance the executor and the report use
        out = call_plugin(
            function,
            (copy.deepcopy(instance),),
            opts,
            who=f"policy {name!r} ({where})",
            returns="a policy returns a priority list",
            error=PolicyError,
        )
        try:
            order = np.asarray(out)
        except Exception as exc:
            raise PolicyError(
                f"policy {name!r} ({where}) failed: {type(exc).__name__}: {exc}"
            ) from exc
        if (
            order.shape != (instance.n,)
            or order.dtype.kind not in "iu"
            or not np.array_equal(np.sort(order), np.arange(instance.n))
        ):
            raise PolicyError(
                f"policy {name!r} ({where}) returned {order.dtype} array of shape "
                f"{order.shape}, not a permutation of range({instance.n})"
            )
        return order

    return POLICIES.register(list_policy(name, checked, description, options), replace=replace)


def load_plugins(name: str | None = None) -> None:
    """Register the plug-in policies (all, or those named ``name``): the modules of
    ``LPSCHED_PLUGINS``, then the entry points of the group ``lpsched.policies``, each a
    priority-list function registered as by :func:`register_policy`, its description the first
    line of its docstring and its distribution (:meth:`lpsched.plugins.Registry.load_plugins`).

    Raises
    ------
    PluginError
        Naming each module or entry point that fails to load (an import error, an object
        that is not callable, a name already registered); the others are still registered.
    """
    POLICIES.load_plugins(name)


def policy_names() -> list[str]:
    """Names of all registered policies, in registry order."""
    return POLICIES.names()


def parse_policy(spec: str) -> tuple[Policy, bool]:
    """Split ``"name[+backfill]"`` into the registered policy and the backfill flag.

    Raises
    ------
    KeyError
        If the name is not registered (the message lists the registered names).
    PluginError
        A plug-in of this name (:func:`load_plugins`) that fails to load.
    """
    text = spec.strip() if isinstance(spec, str) else ""
    name, plus, suffix = text.partition("+")
    policy = POLICIES.lookup(name, shown=spec)
    if plus and suffix != "backfill":
        raise KeyError(POLICIES.missing(spec))
    if plus and not policy.backfill:
        raise KeyError(f"policy {name!r} runs in strict order only; '{spec}' does not exist")
    return policy, bool(plus)


class PolicySelectionError(ValueError):
    """A comparison's policies or policy options that do not fit together: an option that none
    of the selected policies declares, an option the comparison sets itself, or a list without
    the policy the comparison's ratios are taken to. The command line reports it as a usage
    error (exit code 2). Source: ours."""


def options_for(specs: Iterable[str], options: Mapping[str, Any]) -> dict[str, Any]:
    """The entries of ``options`` that at least one of the policies ``specs`` declares.

    Raises
    ------
    KeyError
        Unknown policy name (:func:`parse_policy`).
    """
    declared = {o for spec in specs for o in parse_policy(spec)[0].options}
    return {k: v for k, v in options.items() if k in declared}


def check_policy_options(
    specs: Sequence[str],
    options: Mapping[str, Any],
    reserved: Mapping[str, str] | None = None,
) -> None:
    """Refuse policy options that the comparison of ``specs`` cannot pass on, before it starts.

    Parameters
    ----------
    specs : sequence of str
        The selected policies (``NAME`` or ``NAME+backfill``).
    options : mapping
        Option name -> value, as given to :func:`run_policy` for every policy (each policy
        gets the ones it declares).
    reserved : mapping of str to str, optional
        Options the caller sets itself, each with the reason shown (e.g. ``{"solver": "set
        it with --phase1"}``).

    Raises
    ------
    PolicySelectionError
        An option in ``reserved``, or one that none of ``specs`` declares (the message names
        the option, the selected policies and the options they declare), or a value a
        policy's :attr:`Policy.check` refuses (the message names the policy and the values).
    KeyError
        Unknown policy name.

    Notes
    -----
    Source: ours (the command line's ``--option KEY=VALUE``).
    """
    policies = [parse_policy(spec)[0] for spec in specs]
    for key in options:
        if reserved and key in reserved:
            raise PolicySelectionError(f"option {key!r}: {reserved[key]}")
        if any(key in p.options for p in policies):
            continue
        names = ", ".join(dict.fromkeys(specs))
        own = "; ".join(
            f"{p.name}: {', '.join(p.options)}" for p in dict.fromkeys(policies) if p.options
        )
        raise PolicySelectionError(
            f"option {key!r} is declared by none of the selected policies ({names}); "
            + (f"the options they declare: {own}" if own else "none of them takes options")
            + (" (backfill: write NAME+backfill)" if key == "backfill" else "")
        )
    for p in dict.fromkeys(policies):
        given = {k: v for k, v in options.items() if k in p.options}
        if p.check is None or not given:
            continue
        try:
            p.check(**given)
        except ValueError as exc:
            shown = ", ".join(f"{k}={v!r}" for k, v in given.items())
            raise PolicySelectionError(f"policy {p.name!r} with {shown}: {exc}") from None


def run_policy(instance: Instance, spec: str, **options) -> Schedule:
    """Run the policy ``spec`` (``"name"`` or ``"name+backfill"``) on ``instance``.

    Parameters
    ----------
    instance : Instance
    spec : str
        Registered name, optionally with ``+backfill``.
    **options
        Policy options. One option set can be passed to every policy of a comparison: an
        option that some registered policy accepts reaches only the policies that accept it
        (``solver`` only reaches the Sorted-F family, ``max_nonzeros`` only ``sorted-lp``); an
        option that no registered policy accepts is refused (a typo such as ``solvr``).

    Returns
    -------
    Schedule
        Feasible by construction; ``info["runtime_s"]`` is the wall time of list + executor.

    Raises
    ------
    KeyError
        Unknown policy name.
    TypeError
        An option no registered policy accepts; the message lists this policy's options.
    ValueError
        An option value the policy's own check refuses (``Policy.check``), as ``policy
        'NAME' with KEY=VALUE: ...``.
    LPTooLargeError
        ``sorted-lp`` on an instance whose LP exceeds its size limit: the message says the
        policy cannot run and how to raise the limit (``max_nonzeros``).

    Notes
    -----
    Source: ours (one option set for a comparison, typos caught).
    """
    policy, backfill = parse_policy(spec)
    known = {o for p in POLICIES.values() for o in p.options}
    unknown = sorted(set(options) - known)
    if unknown:
        own = ", ".join(policy.options) or "none"
        raise TypeError(
            f"run_policy: unknown option{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(map(repr, unknown))} for policy {policy.name!r}; its options: {own}"
            + (" (backfill: write NAME+backfill)" if policy.backfill else "")
        )
    opts = {k: v for k, v in options.items() if k in policy.options}
    if policy.check is not None and opts:
        try:
            policy.check(**opts)
        except ValueError as exc:  # the policy and the values, as a comparison reports them
            shown = ", ".join(f"{k}={v!r}" for k, v in opts.items())
            raise ValueError(f"policy {spec!r} with {shown}: {exc}") from None
    if policy.backfill:
        opts["backfill"] = backfill
    try:
        return policy.run(instance, **opts)
    except LPTooLargeError as exc:
        raise LPTooLargeError(f"policy {spec!r} cannot run on this instance: {exc}") from exc


def describe_policies() -> str:
    """The registered policies as text, one line each: name and description (``lpsched
    policies``). Source: ours."""
    width = max(len(name) for name in POLICIES) + 2
    return "\n".join(f"{p.name:{width}s}{p.description}" for p in POLICIES.values())
