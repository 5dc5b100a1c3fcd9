"""Policy lists and policy options written as text: ``a,b`` / ``+a,+b`` and ``KEY=VALUE``.

What the command line's ``--policies``, ``--policy`` and ``--option KEY=VALUE`` take, parsed
against the registry (:mod:`lpsched.policies.registry`), so that a notebook or a script that
reads the same text gets the same lists and values. Source: ours.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..instance import Instance, OptionError
from ..timing.model import TimeModel
from .registry import POLICIES, PolicySelectionError, check_policy_options, parse_policy
from .sorted_f import resolve_phase1

__all__ = [
    "COMMAND_FLAGS",
    "command_options",
    "option_value",
    "parse_policy_list",
    "parse_policy_options",
    "require_priority_list",
    "select_policies",
]


def parse_policy_list(
    text: str, option: str = "--policies", default: Sequence[str] | None = None
) -> list[str]:
    """The comma-separated policy names of ``text``, each checked against the registry.

    Parameters
    ----------
    text : str
        ``a,b,...`` (the exact list) or, with ``default``, ``+a,+b,...`` (``default`` followed
        by ``a`` and ``b``). Names are kept once each, in order; ``NAME+backfill`` is a name.
    option : str
        The option the text comes from, named in the messages.
    default : sequence of str, optional
        The list that ``+a`` adds to; without one, ``+a`` is refused.

    Returns
    -------
    list of str

    Raises
    ------
    lpsched.instance.OptionError
        Naming ``option``: an empty list, ``+a`` without a default, additions mixed with names,
        or an unknown name (the message lists the registered ones).
    lpsched.plugins.PluginError
        A plug-in of that name that fails to load.
    """
    items = [p.strip() for p in text.split(",") if p.strip()]
    if not items:
        raise OptionError("no policy given", option)
    added = [p[1:].strip() for p in items if p.startswith("+")]
    if added and default is None:
        raise OptionError(
            f"'+NAME' adds to a default list, which {option} does not have; give the name", option
        )
    if added and len(added) != len(items):
        raise OptionError(
            f"give the exact list (a,b) or additions (+a,+b), not both: {text!r}", option
        )
    names = list(dict.fromkeys([*(default or ()), *added] if added else items))
    for name in names:
        try:
            parse_policy(name)
        except KeyError as exc:
            raise OptionError(exc.args[0], option) from None
    return names


def select_policies(
    text: str | None,
    options: Mapping[str, Any],
    *,
    option: str = "--policies",
    default: Sequence[str] | None = None,
    reserved: Mapping[str, str] | None = None,
) -> list[str]:
    """The policies of ``text`` (:func:`parse_policy_list`; None: ``default``), with the
    policy ``options`` checked against them
    (:func:`~lpsched.policies.registry.check_policy_options`).

    Raises
    ------
    lpsched.instance.OptionError
        A list that :func:`parse_policy_list` refuses (naming ``option``), or options that
        the policies cannot take, or ``reserved`` ones (naming ``--option``).
    """
    names = list(default or ()) if text is None else parse_policy_list(text, option, default)
    try:
        check_policy_options(names, options, reserved)
    except PolicySelectionError as exc:
        raise OptionError(str(exc), "--option") from None
    return names


def option_value(text: str) -> bool | int | float | str:
    """The value of ``KEY=VALUE``: ``true`` / ``false`` (any case) a bool, an integer literal
    (``12``, ``-3``) an int, a finite decimal or exponent number (``0.5``, ``1e-3``) a float,
    anything else the string as given (``swap``).

    Raises
    ------
    ValueError
        ``nan``, ``inf`` or a number too large for a float.
    """
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    if re.fullmatch(r"[+-]?[0-9]+", text):
        return int(text)
    number = re.fullmatch(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?", text)
    if number and math.isfinite(float(text)):
        return float(text)
    if number or text.strip().lower().lstrip("+-") in ("nan", "inf", "infinity"):
        raise ValueError(f"{text!r} is not a finite number")
    return text


def parse_policy_options(pairs: Iterable[str]) -> dict[str, Any]:
    """``KEY=VALUE`` pairs as a dict of policy options, each value by :func:`option_value`.

    Raises
    ------
    lpsched.instance.OptionError
        A pair without ``=``, a KEY that is not a Python keyword name, or a KEY given twice;
        a value that is not a finite number (:func:`option_value`), naming ``--option``.
    """
    out: dict[str, Any] = {}
    for pair in pairs:
        key, eq, text = pair.partition("=")
        key = key.strip()
        if not eq or not key.isidentifier():
            raise OptionError(f"expected KEY=VALUE with KEY a keyword such as alpha, got {pair!r}")
        if key in out:
            raise OptionError(f"{key!r} given twice")
        try:
            out[key] = option_value(text)
        except ValueError as exc:
            raise OptionError(str(exc), "--option") from None
    return out


#: Policy options that the command line sets from its own flags, with the flag to use: its
#: ``--option`` refuses them (the ``reserved`` of :func:`select_policies`).
COMMAND_FLAGS = {
    "solver": "set it with --phase1",
    "max_nonzeros": "set it with --max-nonzeros",
    "time_model": "set it with --time-model",
}


def command_options(
    instance: Instance,
    options: Mapping[str, Any],
    *,
    phase1: str | None = None,
    max_nonzeros: int | None = None,
    time_model: TimeModel | None = None,
) -> dict[str, Any]:
    """The keyword options of :func:`~lpsched.policies.registry.run_policy` for the policies
    of ``lpsched run``, ``schedule`` and ``priorities``: their flags (:data:`COMMAND_FLAGS`)
    and the ``--option`` pairs.

    Parameters
    ----------
    instance : Instance
        The instance the policies run on: ``auto`` for the Phase-1 solver is resolved at its
        ``n`` and ``M`` (:func:`~lpsched.policies.sorted_f.resolve_phase1`, the one rule).
    options : mapping
        The ``--option`` pairs (:func:`parse_policy_options`), added last.
    phase1 : {"auto", "dp", "swap", "quantile"}, optional
        The Sorted-F Phase-1 solver (option ``solver``); None: ``auto``.
    max_nonzeros : int, optional
        The size limit of ``sorted-lp``'s LP (option ``max_nonzeros``), given only when set.
    time_model : TimeModel, optional
        For the policies that declare one (a clock, or a plan in seconds), given only when set.

    Returns
    -------
    dict

    Raises
    ------
    ValueError
        An unknown Phase-1 solver.

    Notes
    -----
    Source: ours.
    """
    opts: dict[str, Any] = {"solver": resolve_phase1(phase1 or "auto", instance.n, instance.memory)}
    if max_nonzeros is not None:
        opts["max_nonzeros"] = max_nonzeros
    if time_model is not None:
        opts["time_model"] = time_model
    return opts | dict(options)


def require_priority_list(spec: str) -> None:
    """Refuse a policy without a fixed priority list (``lpsched priorities``).

    Parameters
    ----------
    spec : str
        A registry name, ``NAME`` or ``NAME+backfill``.

    Raises
    ------
    ValueError
        A policy that re-plans as it runs, or a staggered pipeline that fixes each request's
        start round; the message lists the policies that have a list.
    KeyError
        An unknown policy name.

    Notes
    -----
    Source: ours.
    """
    if not parse_policy(spec)[0].listed:
        listed = ", ".join(name for name, p in POLICIES.items() if p.listed)
        raise ValueError(
            f"policy {spec!r} has no fixed priority list (the policies that re-plan as they "
            "run and the staggered pipelines, which fix each request's start round, have "
            f"none); use one of {listed} (a list policy also as NAME+backfill)"
        )
