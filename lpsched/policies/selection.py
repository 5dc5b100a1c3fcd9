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

from ..instance import OptionError
from .registry import PolicySelectionError, check_policy_options, parse_policy

__all__ = ["option_value", "parse_policy_list", "parse_policy_options", "select_policies"]


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
