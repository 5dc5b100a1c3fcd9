"""Decoding JSON text for the readers: :func:`read_text` (a file's text, its errors named),
:func:`load_json` (duplicate keys, over-long integers and malformed text are errors naming the
file and line) and :class:`NonFiniteNumber` (``NaN``, ``Infinity`` and overflowing numbers,
which every reader refuses naming the field).
"""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path
from typing import Any

from ..instance import InstanceError, quote

__all__ = ["NonFiniteNumber", "load_json", "read_text"]


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {quote(key)}")
        out[key] = value
    return out


class _BadNumber(ValueError):
    """An integer literal with more digits than Python converts."""

    def __init__(self, token: str, reason: str) -> None:
        super().__init__(token, reason)
        self.token, self.reason = token, reason


class NonFiniteNumber(float):
    """A number read from JSON text that no finite float holds: the literals ``NaN``,
    ``Infinity``, ``-Infinity`` (which Python's ``json`` accepts, RFC 8259 does not) and
    overflowing numbers such as ``1e400``. Its value is NaN or an infinity; its ``repr`` is the
    text of the file, so that error messages quote what was written. Every reader refuses it
    wherever it stands (a field, or anywhere under ``metadata``). Source: ours."""

    token: str

    def __new__(cls, token: str) -> NonFiniteNumber:
        out = super().__new__(cls, float(token))
        out.token = token
        return out

    def __repr__(self) -> str:
        return self.token

    __str__ = __repr__


def _finite_float(token: str) -> float:
    value = float(token)
    return value if math.isfinite(value) else NonFiniteNumber(token)


def _bounded_int(token: str) -> int:
    try:
        return int(token)
    except ValueError:  # more digits than Python converts (sys.get_int_max_str_digits)
        raise _BadNumber(token[:20], "the integer has too many digits") from None


def _line_of(text: str, token: str) -> int | None:
    """Line (1-based) of the first number starting with ``token`` outside a JSON string."""
    for match in re.finditer(r'"(?:[^"\\]|\\.)*"|(?<![0-9.eE+-])(' + re.escape(token) + ")", text):
        if match.group(1) is not None:
            return text.count("\n", 0, match.start(1)) + 1
    return None


def first_nonfinite(value: Any, where: str) -> tuple[str, float] | None:
    """Where (``metadata.a[2]``) the first non-finite float under ``value`` sits, and it."""
    stack = [(value, where)]
    while stack:
        v, at = stack.pop()
        if isinstance(v, float) and not math.isfinite(v):
            return at, v
        if isinstance(v, dict):
            stack.extend((x, f"{at}.{k}") for k, x in reversed(list(v.items())))
        elif isinstance(v, list):
            stack.extend((x, f"{at}[{k}]") for k, x in reversed(list(enumerate(v))))
    return None


def load_json(text: str, path: str | os.PathLike[str]) -> Any:
    """Parse JSON text read from ``path``; duplicate keys are an error.

    ``NaN``, ``Infinity``, ``-Infinity`` and numbers beyond the float range (``1e400``) come
    back as :class:`NonFiniteNumber`, which the readers refuse naming the field (``must be an
    integer, got NaN``); an integer of more digits than Python converts is an error here.

    Raises
    ------
    InstanceError
        Malformed JSON (with the line), a duplicate key, an integer too long (with the line), or
        nesting too deep, naming the file.
    """
    try:
        return json.loads(
            text,
            object_pairs_hook=_no_duplicate_keys,
            parse_constant=NonFiniteNumber,
            parse_float=_finite_float,
            parse_int=_bounded_int,
        )
    except _BadNumber as exc:
        line = _line_of(text, exc.token)
        at = f" at line {line}" if line is not None else ""
        raise InstanceError(
            f"{path}: malformed JSON{at}: the number {exc.token}... {exc.reason}"
        ) from None
    except json.JSONDecodeError as exc:
        raise InstanceError(f"{path}: malformed JSON at line {exc.lineno}: {exc.msg}") from None
    except ValueError as exc:
        raise InstanceError(f"{path}: malformed JSON: {exc}") from None
    except RecursionError:
        raise InstanceError(f"{path}: malformed JSON: nested too deeply") from None


def read_text(path: Path, kind: str) -> str:
    """The text of the file ``path`` (UTF-8, a byte-order mark dropped).

    Parameters
    ----------
    path : Path
        The file.
    kind : str
        What it should be, for the message about a directory (``"an instance file"``).

    Returns
    -------
    str

    Raises
    ------
    InstanceError
        ``{path}: no such file``, ``{path}: is a directory, not {kind}`` or ``{path}: cannot
        read: ...`` (permissions, bytes that are not UTF-8). Source: ours.
    """
    try:
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InstanceError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InstanceError(f"{path}: is a directory, not {kind}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InstanceError(f"{path}: cannot read: {exc}") from None
