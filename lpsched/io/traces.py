"""Serving trace CSV (SPEC section 9): the reader of the public traces' columns, and the check
that a trace folder holds the files a run needs."""

from __future__ import annotations

import csv
import math
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, overload

import numpy as np

from ..instance import InstanceError, int_field
from ._common import brief

__all__ = ["TRACE_PREFILL", "TRACE_DECODE", "TRACE_ARRIVAL", "read_trace_csv", "require_files"]

TRACE_PREFILL = "num_prefill_tokens"
TRACE_DECODE = "num_decode_tokens"
TRACE_ARRIVAL = "arrived_at"
#: A time in seconds as a trace writes it: a plain decimal number (no ``1_000``, ``0x1p3``,
#: ``inf`` or non-ASCII digits, all of which Python's ``float`` would take).
_TIME_TEXT = re.compile(r"[+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


@overload
def read_trace_csv(
    path: str | os.PathLike[str], *, with_lines: Literal[False] = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]: ...


@overload
def read_trace_csv(
    path: str | os.PathLike[str], *, with_lines: Literal[True]
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray]: ...


@overload
def read_trace_csv(
    path: str | os.PathLike[str], *, with_lines: bool
) -> (
    tuple[np.ndarray, np.ndarray, np.ndarray | None]
    | tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray]
): ...


def read_trace_csv(
    path: str | os.PathLike[str], *, with_lines: bool = False
) -> (
    tuple[np.ndarray, np.ndarray, np.ndarray | None]
    | tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray]
):
    """Read a serving trace CSV: ``num_prefill_tokens,num_decode_tokens[,arrived_at]``.

    Other columns are ignored; integer-valued floats (``812.0``) are accepted.

    Parameters
    ----------
    path : path-like
        The CSV file (header row required).

    Returns
    -------
    prefill, decode : ndarray of int64, shape (rows,)
        Token counts ``s`` and ``o`` per row.
    arrived_at : ndarray of float64, shape (rows,), or None
        Arrival times in seconds, when the column exists.
    line : ndarray of int64, shape (rows,)
        Only with ``with_lines=True``: the line of the file each row ends on (1-based).

    Raises
    ------
    InstanceError
        Missing or empty file, missing header column, a row with too few fields, or a
        value that is negative, not an integer, NaN, or a decode length of 0. The message
        names the file, the row (1-based line number) and the column.

    Notes
    -----
    Source: the column names of the public traces (Vidur / Splitwise, SPEC section 9).
    """
    p = Path(path)
    try:
        fh = p.open(newline="", encoding="utf-8-sig")
    except FileNotFoundError:
        raise InstanceError(f"{p}: no such file") from None
    except IsADirectoryError:
        raise InstanceError(f"{p}: is a directory, not a trace file") from None
    except OSError as exc:
        raise InstanceError(f"{p}: cannot read: {exc}") from None
    with fh:
        reader = csv.reader(fh)
        try:
            header = next(reader)
        except StopIteration:
            raise InstanceError(f"{p}: the file is empty") from None
        except (csv.Error, UnicodeDecodeError) as exc:
            raise InstanceError(f"{p}: malformed CSV: {exc}") from None
        header = [h.strip() for h in header]
        for col in (TRACE_PREFILL, TRACE_DECODE, TRACE_ARRIVAL):
            if header.count(col) > 1:
                raise InstanceError(f"{p}: line 1: column '{col}' appears twice")
        for col in (TRACE_PREFILL, TRACE_DECODE):
            if col not in header:
                raise InstanceError(
                    f"{p}: line 1: missing column '{col}' (header is {brief(','.join(header))}; "
                    f"expected {TRACE_PREFILL},{TRACE_DECODE}[,{TRACE_ARRIVAL}])"
                )
        ci_s, ci_o = header.index(TRACE_PREFILL), header.index(TRACE_DECODE)
        ci_a = header.index(TRACE_ARRIVAL) if TRACE_ARRIVAL in header else None
        need = max(ci_s, ci_o, ci_a or 0) + 1
        s: list[int] = []
        o: list[int] = []
        a: list[float] = []
        lines: list[int] = []
        try:
            for row in reader:
                line_no = reader.line_num
                if not row or all(not c.strip() for c in row):
                    continue
                who = f"line {line_no}"
                if len(row) < need:
                    missing = [
                        header[c] for c in (ci_s, ci_o, ci_a) if c is not None and c >= len(row)
                    ]
                    raise InstanceError(
                        f"{p}: {who}: missing field '{missing[0]}' (expected {len(header)} "
                        f"fields, got {len(row)})"
                    )
                sv = int_field(row[ci_s], str(p), who, TRACE_PREFILL, text_ok=True)
                ov = int_field(row[ci_o], str(p), who, TRACE_DECODE, text_ok=True)
                if sv < 0:
                    raise InstanceError(
                        f"{p}: {who}: field '{TRACE_PREFILL}' must be >= 0, got {sv}"
                    )
                if ov < 1:
                    raise InstanceError(
                        f"{p}: {who}: field '{TRACE_DECODE}' must be >= 1, got {ov}"
                    )
                s.append(sv)
                o.append(ov)
                lines.append(line_no)
                if ci_a is not None:
                    text = row[ci_a].strip()
                    av = float(text) if _TIME_TEXT.fullmatch(text) else math.nan
                    if not math.isfinite(av) or av < 0:
                        raise InstanceError(
                            f"{p}: {who}: field '{TRACE_ARRIVAL}' must be a time >= 0 in seconds, "
                            f"got {brief(row[ci_a])}"
                        )
                    a.append(av)
        except csv.Error as exc:
            raise InstanceError(f"{p}: line {reader.line_num}: malformed CSV: {exc}") from None
        except UnicodeDecodeError:
            raise InstanceError(f"{p}: after line {reader.line_num}: not UTF-8 text") from None
    if not s:
        raise InstanceError(f"{p}: the file has a header but no rows")
    arrivals = np.asarray(a, dtype=np.float64) if ci_a is not None else None
    out = (np.asarray(s, dtype=np.int64), np.asarray(o, dtype=np.int64), arrivals)
    return (*out, np.asarray(lines, dtype=np.int64)) if with_lines else out


def require_files(folder: str | os.PathLike[str], names: Sequence[str]) -> Path:
    """Check, before a long run starts, that ``folder`` holds the files ``names``.

    Returns
    -------
    Path
        ``folder``.

    Raises
    ------
    InstanceError
        Naming the folder and every missing file. Source: ours.
    """
    path = Path(folder)
    missing = [name for name in names if not (path / name).is_file()]
    if missing:
        raise InstanceError(f"{path}: missing file(s) {', '.join(missing)}")
    return path
