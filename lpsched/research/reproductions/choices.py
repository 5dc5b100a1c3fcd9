"""A study's choices (its workloads or families, its policies and their options, the sizes of
its exact models), checked before any row is computed.

Source: ours. A name outside the study's list is a mistake on the command line, not a failure
of the study: the command line reports :class:`StudyChoiceError` as a usage error (exit 2).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ...instance import Instance
from ...policies.registry import check_policy_options, parse_policy
from ...solvers.options import LP_MAX_NONZEROS, RAISE_LIMIT, refuse_if_surely_too_large
from ...solvers.result import LPTooLargeError

__all__ = ["StudyChoiceError", "check_choices", "check_policies", "check_model_sizes"]


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


def check_model_sizes(
    study: str,
    instances: Iterable[tuple[int, str, Callable[[], Instance]]],
    max_nonzeros: int = LP_MAX_NONZEROS,
) -> None:
    """Refuse a study whose time-indexed model (the exact MIP, the LP bound) is surely above
    the size limit for one of its instances, before any instance is solved.

    Two steps, so that a size such as ``n = 10**8`` is refused without drawing it: every model
    has at least ``2 n`` non-zeros (each request one start and one memory row), checked on
    ``n`` alone; then each instance is drawn (cheap below that size) and checked with
    :func:`~lpsched.solvers.options.refuse_if_surely_too_large` (its smallest possible
    horizon).

    Parameters
    ----------
    study : str
        The reproduction's name, for the message.
    instances : iterable of (int, str, callable)
        ``(n, label, make)`` per instance of the study: its number of requests, what names it
        (``"paper-scaled seed 0"``) and a function drawing it.
    max_nonzeros : int, default LP_MAX_NONZEROS
        The limit of the solves the study makes (constraint-matrix non-zeros).

    Raises
    ------
    LPTooLargeError
        The first instance surely too large, naming ``n``, the limit and the largest ``n`` the
        first step lets through. Source: ours.
    """
    pending = list(instances)
    largest = max_nonzeros // 2
    for n, label, _ in pending:
        if n > largest:
            raise LPTooLargeError(
                f"{study}: n = {n:,} ({label}) is refused before anything is built: its exact "
                f"model needs at least 2n = {2 * n:,} non-zeros, above the limit of "
                f"{max_nonzeros:,} (so n <= {largest:,}; the exact solves of this study "
                "finish within their time limit up to about n = 60)"
            )
    for n, label, make in sorted(pending, key=lambda p: p[0]):
        try:
            refuse_if_surely_too_large(make(), max_nonzeros)
        except LPTooLargeError as exc:
            why = str(exc).replace(f" ({RAISE_LIMIT})", "")  # a study has no such option
            raise LPTooLargeError(
                f"{study}: n = {n:,} ({label}) is refused before any model is built: {why}; "
                "the study keeps this limit, choose smaller sizes"
            ) from None
