"""The checks every sweep makes of the rows it reads back, beside each sweep's own.

A row read back from a results CSV is trusted only if it could have been computed: the sweep
engine (:mod:`.engine`) rejects (moves to ``NAME.rejected.csv`` and recomputes) a row that
fails any of these, as it does one that fails the sweep's own ``check``:

* **finite numbers**, in every sweep: a cell of a result column that reads as a number must be
  finite (``inf``, ``-inf``, ``1e999``, ``nan``), except ``nan`` in the columns a sweep
  declares :attr:`RowRules.not_applicable`;
* **order** (:attr:`RowRules.order`): chains of columns, each at most the next (a bound at
  most the TEL, a mean TTFT at most the mean latency at most the makespan);
* **siblings** (:attr:`RowRules.shared`): the rows of one task (one instance) agree on the
  columns that describe the instance (its bound, its optimum, its memory); otherwise every
  row of the task is rejected and the task recomputed whole;
* **the row's own instance** (:attr:`RowRules.expect`): the values that the task's instance
  gives cheaply (its memory), where a sweep declares how.

Numbers agree within a relative tolerance of ``1e-6`` (the CSV keeps six significant digits).
Source: ours (certified-gaps' checks of its rows, made one for every sweep).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["RowRules", "non_finite"]

#: Relative tolerance of the comparisons (the CSV keeps six significant digits).
_REL = 1e-6


def _number(value: Any) -> float | None:
    """``value`` as a float, or None for what is not a number (text, '', ``None``)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(str(value))
    except ValueError:
        return None


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= _REL * max(1.0, abs(a), abs(b))


def non_finite(
    row: Mapping[str, str], columns: Sequence[str], not_applicable: Sequence[str] = ()
) -> str | None:
    """Why a row read back holds a number that is not finite in one of ``columns``, or None.

    Parameters
    ----------
    row : mapping of str to str
        The row's cells, as text.
    columns : sequence of str
        The columns checked (a sweep's result columns, its key and provenance left out).
    not_applicable : sequence of str, optional
        Columns where ``nan`` means "does not apply".

    Returns
    -------
    str or None
        Source: ours.
    """
    for col in columns:
        value = _number(row[col])
        if value is None or math.isfinite(value):
            continue
        if math.isnan(value) and col in not_applicable:
            continue
        return f"field '{col}' is not a finite number: {row[col]!r}"
    return None


@dataclass(frozen=True)
class RowRules:
    """What a sweep's rows must satisfy beyond finite numbers (see the module docstring).

    Attributes
    ----------
    order : sequence of sequence of str
        Chains of columns, each value at most the next (empty cells skipped), e.g.
        ``(("lp_bound", "tel"),)``.
    shared : sequence of str
        Columns on which all the rows of one task must agree.
    expect : callable, optional
        ``expect(values) -> mapping``: for a row's parsed values, the values of some columns
        that the row's own instance gives (cheaply), which the row must hold.
    not_applicable : sequence of str
        Columns where ``nan`` means "does not apply" (not refused).
    """

    order: Sequence[Sequence[str]] = ()
    shared: Sequence[str] = ()
    expect: Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = None
    not_applicable: Sequence[str] = ()

    def row_problem(self, values: Mapping[str, Any]) -> str | None:
        """Why one row's parsed values break :attr:`order` or :attr:`expect`, or None.
        Source: ours."""
        for chain in self.order:
            numbers = [(c, _number(values[c])) for c in chain]
            known = [(c, v) for c, v in numbers if v is not None]
            for (a, x), (b, y) in zip(known, known[1:], strict=False):
                if x > y and not _close(x, y):
                    return f"{a} {values[a]} is above {b} {values[b]}"
        if self.expect is not None:
            for col, want in self.expect(values).items():
                got, num, have = values[col], _number(want), _number(values[col])
                same = got == want if num is None else have is not None and _close(have, num)
                if not same:
                    return f"{col} {got} disagrees with its own instance, which gives {want}"
        return None

    def task_problem(self, rows: Sequence[Mapping[str, Any] | None]) -> str | None:
        """Why the rows of one task read back (None: absent) disagree on :attr:`shared`, or
        None. Source: ours."""
        present = [r for r in rows if r is not None]
        for col in self.shared:
            first = present[0][col] if present else None
            for r in present[1:]:
                a, b = _number(first), _number(r[col])
                same = first == r[col] if a is None or b is None else _close(a, b)
                if not same:
                    return f"the rows of one task differ in {col} ({first} and {r[col]})"
        return None
