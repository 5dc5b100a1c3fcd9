"""Arrival rounds from trace times (lpsched.generators.arrivals): the errors of bad times.

Every bad time must raise one clear error naming the file, the line and the field
``arrived_at``, never a numpy warning or a wrapped-around integer.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from lpsched.generators.arrivals import trace_arrival_rounds, trace_window
from lpsched.generators.workloads import from_traces
from lpsched.instance import InstanceError


def _trace(tmp_path, times, name="t.csv"):
    p = tmp_path / name
    rows = "".join(f"{4 + k % 3},{1 + k % 2},{t}\n" for k, t in enumerate(times))
    p.write_text("num_prefill_tokens,num_decode_tokens,arrived_at\n" + rows)
    return p


@pytest.mark.parametrize("far", ["1e300", "2000000000000"])
def test_far_arrival_names_file_line_and_field(tmp_path, far):
    # 1e300 s at 1 ms rounds used to warn and give "arrival must be >= 0, got -2^63";
    # a span over 2^40 rounds printed np.int64(2000000000000000)
    p = _trace(tmp_path, [0, 1, far])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(InstanceError) as info:
            from_traces([p], 3, 100, round_s=0.001, seed=1)
    msg = str(info.value)
    assert msg.startswith(f"{p}: line 4: field 'arrived_at'") and "2^40" in msg
    assert "np." not in msg and "-9223372036854775808" not in msg


def test_constant_times_and_a_rate_name_the_window(tmp_path):
    # used to say "round duration must be positive, got 0.0", naming no file
    p = _trace(tmp_path, [5, 5, 5, 5])
    with pytest.raises(
        InstanceError, match=rf"^{p}: lines 3-5: field 'arrived_at' is 5 s on every row"
    ):
        trace_window(p, 3, 100, offset=1, rate=2.0)


def test_trace_window_lines_skip_blank_rows(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text(
        "num_prefill_tokens,num_decode_tokens,arrived_at\n1,1,0\n\n99,1,1\n1,1,2\n1,1,1e300\n"
    )
    with pytest.raises(InstanceError, match=rf"^{p}: line 4: num_prefill_tokens"):
        trace_window(p, 3, 10, round_s=1.0)
    assert trace_window(p, 2, 100, round_s=1.0).metadata["rows"] == [2, 4]  # the file's lines
    with pytest.raises(InstanceError, match=rf"^{p}: line 6: field 'arrived_at'"):
        trace_window(p, 2, 10, offset=2, round_s=1.0)


def test_trace_arrival_rounds_checks():
    assert trace_arrival_rounds(np.array([3.0, 1.0]), 0.5).tolist() == [4, 0]
    for bad in (0, -1.0, float("nan"), float("inf"), True):
        with pytest.raises(ValueError, match="round duration must be a positive finite number"):
            trace_arrival_rounds(np.array([0.0, 1.0]), bad)
    with pytest.raises(
        InstanceError, match=r"^f\.csv: line 9: field 'arrived_at' must be a finite"
    ):
        trace_arrival_rounds(np.array([0.0, np.inf]), 1.0, rows=["f.csv: line 8", "f.csv: line 9"])
    with pytest.raises(InstanceError, match=r"^time 1: field 'arrived_at'"):
        trace_arrival_rounds(np.array([0.0, 2.0**41]), 1.0)
    assert trace_arrival_rounds(np.array([0.0, 2.0**40]), 1.0).tolist() == [0, 2**40]


def test_horizon_past_2_40_names_the_row(tmp_path):
    p = _trace(tmp_path, [0, 2**40 - 1])
    with pytest.raises(InstanceError, match=rf"^{p}: line 3: field 'arrived_at' gives round"):
        from_traces([p], 2, 100, round_s=1.0)
