"""A study's choices (its workloads or families), checked before any row is computed.

Source: ours. A name outside the study's list is a mistake on the command line, not a failure
of the study: the command line reports :class:`StudyChoiceError` as a usage error (exit 2).
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["StudyChoiceError", "check_choices"]


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
