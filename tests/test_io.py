"""Files (lpsched.io): instance JSON round trips, trace CSV, schedule JSON, and the error
messages of bad input.

Every bad input must raise :class:`InstanceError` (a ``ValueError``) whose message names the
file, the request id (or CSV line) and the field (SPEC sections 1 and 9).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from lpsched.instance import Instance, InstanceError
from lpsched.io import read_instance, read_schedule, read_trace_csv, write_instance, write_schedule
from lpsched.schedule import Schedule

# --------------------------------------------------------------------------- helpers


def _write_json(path, data) -> str:
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def _doc(requests, memory=20, **extra):
    return {
        "format": "lpsched/instance",
        "version": 1,
        "name": "t",
        "memory": memory,
        "requests": requests,
        **extra,
    }


GOOD = [
    {"id": "a", "prefill": 3, "decode": 2},
    {"id": "b", "prefill": 0, "decode": 5},
    {"id": "c", "prefill": 7, "decode": 1},
]


def _expect_error(path, *needles):
    """read_instance(path) raises InstanceError whose message contains every needle."""
    with pytest.raises(InstanceError) as info:
        read_instance(path)
    msg = str(info.value)
    for needle in needles:
        assert needle in msg, f"{needle!r} not in message {msg!r}"
    return msg


# --------------------------------------------------------------------------- JSON round trip


def _same(a: Instance, b: Instance) -> None:
    assert a.memory == b.memory
    assert a.ids == b.ids
    assert a.name == b.name
    assert a.prefill.tolist() == b.prefill.tolist()
    assert a.decode.tolist() == b.decode.tolist()
    assert a.arrival.tolist() == b.arrival.tolist()
    assert dict(a.metadata) == dict(b.metadata)
    assert a.has_intervals == b.has_intervals
    if a.has_intervals:
        assert a.decode_lo.tolist() == b.decode_lo.tolist()
        assert a.decode_hi.tolist() == b.decode_hi.tolist()


def test_json_round_trip_offline(tmp_path):
    inst = Instance.from_arrays(
        [812, 0, 5],
        [143, 1, 9],
        16492,
        ids=["r0", "x", "y"],
        name="demo",
        metadata={"source": "unit", "seed": 0},
    )
    path = tmp_path / "demo.json"
    write_instance(inst, path)
    data = json.loads(path.read_text())
    assert data["format"] == "lpsched/instance"
    assert data["version"] == 1
    assert data["memory"] == 16492
    assert data["requests"][0] == {"id": "r0", "prefill": 812, "decode": 143, "arrival": 0}
    back = read_instance(path)
    _same(inst, back)
    assert back.offline


def test_json_round_trip_with_arrivals(tmp_path):
    inst = Instance.from_arrays([1, 2, 3], [4, 5, 6], 20, [0, 7, 3], name="arr")
    path = tmp_path / "arr.json"
    write_instance(inst, path)
    back = read_instance(path)
    _same(inst, back)
    assert back.arrival.tolist() == [0, 7, 3]
    assert not back.offline


def test_json_round_trip_with_interval(tmp_path):
    inst = Instance.from_arrays([1, 2], [4, 5], 20, [0, 2], decode_lo=[2, 5], decode_hi=[6, 9])
    path = tmp_path / "iv.json"
    write_instance(inst, path)
    data = json.loads(path.read_text())
    assert data["requests"][1]["decode_lo"] == 5
    assert data["requests"][1]["decode_hi"] == 9
    _same(inst, read_instance(path))


def test_read_minimal_json_defaults(tmp_path):
    """``arrival`` and ``format``/``version`` are optional; arrival defaults to 0."""
    path = _write_json(tmp_path / "m.json", {"memory": 20, "requests": GOOD})
    inst = read_instance(path)
    assert inst.ids == ("a", "b", "c")
    assert inst.arrival.tolist() == [0, 0, 0]
    assert inst.decode.tolist() == [2, 5, 1]


# --------------------------------------------------------------------------- JSON errors


def _with(i, **changes):
    reqs = [dict(r) for r in GOOD]
    reqs[i].update(changes)
    return reqs


def test_missing_field(tmp_path):
    reqs = _with(1)
    del reqs[1]["decode"]
    path = _write_json(tmp_path / "bad.json", _doc(reqs))
    _expect_error(path, path, "'b'", "decode")


def test_negative_prefill(tmp_path):
    path = _write_json(tmp_path / "bad.json", _doc(_with(1, prefill=-3)))
    _expect_error(path, path, "'b'", "prefill", "-3")


@pytest.mark.parametrize("value", [1.5, "abc", True])
def test_non_integer_decode(tmp_path, value):
    path = _write_json(tmp_path / "bad.json", _doc(_with(2, decode=value)))
    _expect_error(path, path, "'c'", "decode")


def test_nan_prefill(tmp_path):
    path = tmp_path / "bad.json"
    text = json.dumps(_doc(_with(0, prefill=0))).replace('"prefill": 0', '"prefill": NaN')
    path.write_text(text)
    _expect_error(path, str(path), "'a'", "prefill")


def test_decode_zero(tmp_path):
    path = _write_json(tmp_path / "bad.json", _doc(_with(2, decode=0)))
    _expect_error(path, path, "'c'", "decode")


def test_prefill_plus_decode_above_memory(tmp_path):
    path = _write_json(tmp_path / "bad.json", _doc(_with(1, prefill=16, decode=5), memory=20))
    _expect_error(path, path, "'b'", "decode", "20")


def test_too_large_value_is_reported_as_written(tmp_path):
    # 10**19 does not fit in int64; the error must name the request and the field and report
    # the value as written, not a wrapped-around negative number.
    path = _write_json(tmp_path / "bad.json", _doc(_with(1, prefill=10**19), memory=10**20))
    msg = _expect_error(path, path, "'b'", "prefill")
    assert str(10**19) in msg


def test_duplicate_id(tmp_path):
    path = _write_json(tmp_path / "bad.json", _doc(_with(2, id="a")))
    _expect_error(path, path, "'a'", "id")


def test_negative_arrival(tmp_path):
    path = _write_json(tmp_path / "bad.json", _doc(_with(1, arrival=-1)))
    _expect_error(path, path, "'b'", "arrival")


def test_bad_interval(tmp_path):
    reqs = [dict(r, decode_lo=1, decode_hi=9) for r in GOOD]
    reqs[1]["decode_hi"] = 4  # below decode 5
    path = _write_json(tmp_path / "bad.json", _doc(reqs))
    _expect_error(path, path, "'b'", "decode_hi")


def test_empty_file(tmp_path):
    path = tmp_path / "empty.json"
    path.write_text("")
    _expect_error(path, str(path), "empty")


def test_malformed_json(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"memory": 20, "requests": [\n {"id": "a", "prefill": 1,,}]}')
    _expect_error(path, str(path), "JSON", "line 2")


def test_empty_requests(tmp_path):
    path = _write_json(tmp_path / "bad.json", _doc([]))
    _expect_error(path, path, "requests")


def test_wrong_format(tmp_path):
    path = _write_json(tmp_path / "bad.json", _doc(GOOD, format="lpsched/schedule"))
    _expect_error(path, path, "format", "lpsched/schedule")


def test_missing_memory(tmp_path):
    doc = _doc(GOOD)
    del doc["memory"]
    path = _write_json(tmp_path / "bad.json", doc)
    _expect_error(path, path, "memory")


def test_missing_file(tmp_path):
    path = tmp_path / "nope.json"
    _expect_error(path, str(path))


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


# --------------------------------------------------------------------------- schedule files

# the hand instance of tests/test_schedule.py, arriving at rounds 0, 1, 2
ONLINE = Instance.from_arrays(
    [2, 1, 0], [3, 2, 1], 10, [0, 1, 2], ids=["A", "B", "C"], name="hand-online"
)


def test_schedule_json_round_trip(tmp_path):
    sched = Schedule(ONLINE, [0, 1, 3], policy="hand")
    path = tmp_path / "s.json"
    write_schedule(sched, path)
    data = json.loads(path.read_text())
    assert data == {
        "format": "lpsched/schedule",
        "version": 1,
        "instance": "hand-online",
        "policy": "hand",
        "start": [0, 1, 3],
        "completion": [3, 3, 4],
        "tel": 7,
    }
    back = read_schedule(path, ONLINE)
    assert back.start.tolist() == [0, 1, 3]
    assert back.policy == "hand"
    assert back.tel == 7


def test_read_schedule_errors(tmp_path):
    path = tmp_path / "s.json"
    write_schedule(Schedule(ONLINE, [0, 1, 3], policy="hand"), path)
    data = json.loads(path.read_text())
    for change, needle in [
        ({"tel": 8}, "tel"),
        ({"start": [0, 1]}, "start"),
        ({"format": "lpsched/instance"}, "format"),
    ]:
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps({**data, **change}))
        with pytest.raises(InstanceError, match=needle) as info:
            read_schedule(bad, ONLINE)
        assert str(bad) in str(info.value)
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    with pytest.raises(InstanceError, match="JSON"):
        read_schedule(broken, ONLINE)


def test_read_schedule_rejects_completions_that_disagree(tmp_path):
    """read_schedule's docstring: the completions in the file must agree with the instance."""
    path = tmp_path / "s.json"
    write_schedule(Schedule(ONLINE, [0, 1, 3], policy="hand"), path)
    data = json.loads(path.read_text())
    data["completion"] = [9, 9, 9]  # the starts and decode lengths give (3, 3, 4)
    path.write_text(json.dumps(data))
    with pytest.raises(InstanceError, match="completion"):
        read_schedule(path, ONLINE)
