"""A study's choices (its workloads or families, its policies and their options), checked
before any row is computed.

Source: ours. A name outside the study's list is a mistake on the command line, not a failure
of the study: the command line reports :class:`StudyChoiceError` as a usage error (exit 2).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ...policies.registry import check_policy_options, parse_policy

__all__ = ["StudyChoiceError", "check_choices", "check_policies"]


class StudyChoiceError(KeyError):
    """A workload (or family) that the study does not have. A ``KeyError`` whose text is the
    message itself (not its ``repr``). Source: ours."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def check_choices(kind: str, chosen: Iterable[str], known: Iterable[str], hint: str = "") -> None:
    """Raise unless every name of ``chosen`` is one of ``known``.

    Parameters
    ----------
    kind : str
        What the names are, for the message (``"small workload"``, ``"family"``).
    chosen, known : iterable of str
        The names asked for, and the study's own.
    hint : str, optional
        A sentence added to the message (for example where other workloads live).

    Raises
    ------
    StudyChoiceError
        The first unknown name, with the study's list.
    """
    names = list(known)
    for name in chosen:
        if name not in names:
            raise StudyChoiceError(
                f"unknown {kind} {name!r}; known: {', '.join(names)}"
                + (f". {hint}" if hint else "")
            )


def check_policies(
    policies: Iterable[str],
    policy_options: Mapping[str, Any] | None = None,
    reserved: Mapping[str, str] | None = None,
) -> tuple[list[str], dict[str, Any]]:
    """The policies of a study without repeats, every name parsed, and the options checked.

    Parameters
    ----------
    policies : iterable of str
        Registry names (``NAME+backfill`` allowed), in the study's order.
    policy_options : mapping, optional
        Keyword options for the policies that declare them.
    reserved : mapping of str to str, optional
        Options the study sets itself, each with the reason shown.

    Returns
    -------
    (list of str, dict)
        The policies in first-seen order, and a copy of the options.

    Raises
    ------
    KeyError
        An unknown policy name (before any option is checked).
    PolicySelectionError
        An option in ``reserved``, or one that none of the policies declares
        (:func:`~lpsched.policies.registry.check_policy_options`).
    """
    pols = list(dict.fromkeys(policies))
    for p in pols:
        parse_policy(p)  # an unknown name fails here, before any solve
    options = dict(policy_options or {})
    check_policy_options(pols, options, reserved)
    return pols, options
