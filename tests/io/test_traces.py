"""Trace files (lpsched.io.traces): serving trace CSV and the error messages of bad input.

Every bad input must raise :class:`InstanceError` (a ``ValueError``) whose message names the
file, the CSV line and the column (SPEC sections 1 and 9).
"""

from __future__ import annotations

import numpy as np
import pytest

from lpsched.instance import InstanceError
from lpsched.io import read_trace_csv

# --------------------------------------------------------------------------- trace CSV


def _csv(tmp_path, text, name="trace.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _csv_error(path, *needles):
    with pytest.raises(InstanceError) as info:
        read_trace_csv(path)
    msg = str(info.value)
    for needle in [str(path), *needles]:
        assert needle in msg, f"{needle!r} not in message {msg!r}"
    return msg


def test_csv_extra_columns(tmp_path):
    path = _csv(
        tmp_path,
        "request_id,num_decode_tokens,model,num_prefill_tokens\n"
        "q1,143,llama,812\nq2,1,llama,0\nq3,7,x,33\n",
    )
    s, o, a = read_trace_csv(path)
    assert s.tolist() == [812, 0, 33]
    assert o.tolist() == [143, 1, 7]
    assert a is None
    assert s.dtype == np.int64 and o.dtype == np.int64


def test_csv_with_arrivals_and_integer_floats(tmp_path):
    path = _csv(
        tmp_path,
        "num_prefill_tokens,num_decode_tokens,arrived_at\n812.0,143,0.0\n5,2,0.25\n\n6,1,3.5\n",
    )
    s, o, a = read_trace_csv(path)
    assert s.tolist() == [812, 5, 6]
    assert o.tolist() == [143, 2, 1]
    assert a.tolist() == [0.0, 0.25, 3.5]


def test_csv_wrong_header(tmp_path):
    path = _csv(tmp_path, "num_prefill_tokens,decode\n1,2\n")
    _csv_error(path, "line 1", "num_decode_tokens")


def test_csv_empty_file(tmp_path):
    path = _csv(tmp_path, "")
    _csv_error(path, "empty")


def test_csv_header_only(tmp_path):
    path = _csv(tmp_path, "num_prefill_tokens,num_decode_tokens\n")
    _csv_error(path, "no rows")


def test_csv_short_row(tmp_path):
    path = _csv(tmp_path, "num_prefill_tokens,num_decode_tokens\n1,2\n5\n")
    _csv_error(path, "line 3", "num_decode_tokens")


@pytest.mark.parametrize(
    "row, column",
    [
        ("-1,2", "num_prefill_tokens"),
        ("1,-2", "num_decode_tokens"),
        ("1,0", "num_decode_tokens"),
        ("1.5,2", "num_prefill_tokens"),
        ("1,abc", "num_decode_tokens"),
        ("nan,2", "num_prefill_tokens"),
        ("1,NaN", "num_decode_tokens"),
        ("1,inf", "num_decode_tokens"),
    ],
)
def test_csv_bad_value(tmp_path, row, column):
    path = _csv(tmp_path, f"num_prefill_tokens,num_decode_tokens\n3,4\n{row}\n")
    _csv_error(path, "line 3", column)


@pytest.mark.parametrize("value", ["nan", "-1", "soon"])
def test_csv_bad_arrival(tmp_path, value):
    path = _csv(tmp_path, f"num_prefill_tokens,num_decode_tokens,arrived_at\n3,4,0\n1,2,{value}\n")
    _csv_error(path, "line 3", "arrived_at")


# --------------------------------------------------------------------------- trace times


@pytest.mark.parametrize("text", ["1_000", "0x10", "\u0661\u0662", "inf", "nan", "1e5000"])
def test_trace_time_must_be_a_plain_number(tmp_path, text):
    p = tmp_path / "t.csv"
    p.write_text(f"num_prefill_tokens,num_decode_tokens,arrived_at\n1,2,0\n1,2,{text}\n")
    with pytest.raises(InstanceError, match=r"t\.csv: line 3: field 'arrived_at'"):
        read_trace_csv(p)


def test_trace_time_forms_that_are_numbers(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("num_prefill_tokens,num_decode_tokens,arrived_at\n1,2, 1.5\n1,2,2e1\n1,2,+3.\n")
    assert read_trace_csv(p)[2].tolist() == [1.5, 20.0, 3.0]
