"""Instance files (lpsched.io.instances): JSON round trips and the error messages of bad input.

Every bad input must raise :class:`InstanceError` (a ``ValueError``) whose message names the
file, the request id and the field (SPEC sections 1 and 9).
"""

from __future__ import annotations

import json

import pytest

from lpsched.instance import Instance, InstanceError
from lpsched.io import read_instance, write_instance

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


# ---------------------------------------------------------------------- unknown keys (hardening)


@pytest.mark.parametrize(
    ("where", "key", "guess"),
    [
        ("request", "arival", "arrival"),
        ("request", "arrived_at", "arrival"),  # the trace column name
        ("request", "prefil", "prefill"),
        ("request", "decode_high", "decode_hi"),
        ("top", "memroy", "memory"),
        ("top", "requets", "requests"),
        ("top", "meta", "metadata"),
        ("top", "nmae", "name"),
    ],
)
def test_unknown_key_is_an_error_with_the_close_match(tmp_path, where, key, guess):
    doc = _doc(_with(1, **{key: 3})) if where == "request" else {**_doc(GOOD), key: 3}
    path = _write_json(tmp_path / "typo.json", doc)
    msg = _expect_error(path, path, f"unknown field '{key}'", f"did you mean '{guess}'?")
    if where == "request":
        assert "request 'b'" in msg


def test_unknown_keys_all_named_and_metadata_free_form(tmp_path):
    path = _write_json(tmp_path / "typo.json", _doc(_with(0, zzz=1, arival=2)))
    _expect_error(path, "unknown fields 'zzz', 'arival' (did you mean 'arrival'?)", "request 'a'")
    free = _doc(GOOD, metadata={"arival": 1, "anything": {"memroy": [1, 2]}})
    assert read_instance(_write_json(tmp_path / "ok.json", free)).metadata["arival"] == 1


def test_online_instance_typo_no_longer_becomes_offline(tmp_path):
    reqs = [{**r, "arival": 5} for r in GOOD]
    path = _write_json(tmp_path / "online.json", _doc(reqs))
    _expect_error(path, "unknown field 'arival'")


# --------------------------------------------------------------------------- non-finite numbers


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_non_finite_number_in_a_field_names_request_and_field(tmp_path, literal):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(_doc(GOOD)).replace('"decode": 5', f'"decode": {literal}'))
    _expect_error(path, str(path), "request 'b'", "field 'decode'", literal)


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "1e999"])
def test_non_finite_number_in_metadata_is_refused(tmp_path, literal):
    path = tmp_path / "bad.json"
    doc = json.dumps(_doc(GOOD, metadata={"rate": 1, "deep": [0, {"x": 2}]}))
    path.write_text(doc.replace('"x": 2', f'"x": {literal}'))
    _expect_error(path, str(path), "metadata.deep[1].x", literal)


def test_integer_with_too_many_digits_names_the_line(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"memory": 20,\n "requests": [\n  {"prefill": 1' + "0" * 5000 + "}]}")
    _expect_error(path, str(path), "line 3", "too many digits")


# --------------------------------------------------------------------------- ids are escaped


@pytest.mark.parametrize("rid", ["a\nb", "\x1b[31mred", "tab\there", "\u202eevil", "bell\x07"])
def test_ids_are_echoed_escaped(tmp_path, rid):
    path = _write_json(tmp_path / "bad.json", _doc(_with(1, id=rid, decode=0)))
    msg = _expect_error(path, str(path), repr(rid), "field 'decode'")
    assert msg.isprintable()


def test_write_instance_refuses_non_json_metadata_before_writing(tmp_path):
    path = tmp_path / "i.json"
    inst = Instance.from_arrays([2, 1, 0], [3, 2, 1], 10, [0, 1, 2], name="hand-online")
    with pytest.raises(InstanceError, match="cannot write instance"):
        write_instance(inst.replace(metadata={"rate": float("nan")}), path)
    assert not path.exists()


def test_the_default_instance_is_package_data_and_the_generator_draw():
    """lpsched/data/default.json (what a wheel ships), instances/default.json (what a reader of
    the repository opens) and the generator call of DEFAULT_INSTANCE_SPEC are one instance."""
    from pathlib import Path

    import numpy as np

    from lpsched.generators.workloads import generate
    from lpsched.io import DEFAULT_INSTANCE_SPEC, default_instance

    root = Path(__file__).resolve().parents[2]
    packaged = (root / "lpsched" / "data" / "default.json").read_bytes()
    assert packaged == (root / "instances" / "default.json").read_bytes()
    inst = default_instance()
    spec = DEFAULT_INSTANCE_SPEC
    drawn = generate(spec["workload"], spec["n"], spec["memory"], seed=spec["seed"])
    assert inst.name == "default" and (inst.n, inst.memory) == (2000, 16492)
    for field in ("prefill", "decode", "arrival"):
        assert np.array_equal(getattr(inst, field), getattr(drawn, field)), field


# --------------------------------------------------------------------------- arrival_s
def test_json_round_trip_with_arrival_seconds(tmp_path):
    inst = Instance.from_arrays(
        [3, 0, 7], [2, 5, 1], 20, [0, 1, 4], arrival_s=[0.0, 0.1 + 0.2, 12.5], name="sec"
    )
    path = tmp_path / "sec.json"
    write_instance(inst, path)
    lines = [line.strip().rstrip(",") for line in path.read_text().splitlines()]
    assert (
        '{"id": "r1", "prefill": 0, "decode": 5, "arrival": 1, "arrival_s": 0.30000000000000004}'
        in lines
    )
    back = read_instance(path)
    assert back.arrival_s.tolist() == [0.0, 0.1 + 0.2, 12.5]  # exact (repr of the float)
    assert back.arrival.tolist() == [0, 1, 4]
    assert back[2].arrival_s == 12.5


def test_without_arrival_seconds_nothing_changes(tmp_path):
    inst = Instance.from_arrays([3, 0], [2, 5], 20, [0, 1])
    write_instance(inst, tmp_path / "a.json")
    assert "arrival_s" not in (tmp_path / "a.json").read_text()
    assert read_instance(tmp_path / "a.json").arrival_s is None


@pytest.mark.parametrize(
    "value, shown",
    [(-0.5, "-0.5"), ("NaN", "NaN"), ("Infinity", "Infinity"), (True, "True"), ("3", "'3'")],
)
def test_bad_arrival_seconds_names_file_request_and_field(tmp_path, value, shown):
    reqs = [dict(r) for r in GOOD]
    for r in reqs:
        r["arrival_s"] = 1.0
    if value in ("NaN", "Infinity"):  # JSON literals Python's json reads
        path = tmp_path / "bad.json"
        text = json.dumps(_doc(reqs)).replace(
            '"arrival_s": 1.0}, {"id": "c"', f'"arrival_s": {value}}}, {{"id": "c"'
        )
        path.write_text(text)
    else:
        reqs[1]["arrival_s"] = value
        path = _write_json(tmp_path / "bad.json", _doc(reqs))
    with pytest.raises(InstanceError) as err:
        read_instance(path)
    msg = str(err.value)
    assert "bad.json" in msg and "request 'b'" in msg and "'arrival_s'" in msg and shown in msg
    assert len(msg.splitlines()) == 1


def test_arrival_seconds_for_some_requests_only(tmp_path):
    reqs = [dict(r) for r in GOOD]
    reqs[0]["arrival_s"] = 0.0
    with pytest.raises(
        InstanceError, match="request 'b': missing field 'arrival_s'.*every request"
    ):
        read_instance(_write_json(tmp_path / "part.json", _doc(reqs)))
