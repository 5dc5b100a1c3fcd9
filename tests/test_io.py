"""Files (lpsched.io): instance JSON round trips, trace CSV, schedule JSON, and the error
messages of bad input.

Every bad input must raise :class:`InstanceError` (a ``ValueError``) whose message names the
file, the request id (or CSV line) and the field (SPEC sections 1 and 9).
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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


V2_DOC = {
    "format": "lpsched/schedule",
    "version": 2,
    "instance": "hand-online",
    "policy": "hand",
    "tel": 7,  # (3 - 0) + (3 - 1) + (4 - 2)
    "makespan": 4,
    "peak_memory": 8,  # round 3: A holds 2 + 3, B holds 1 + 2
    "requests": [
        {"id": "A", "arrival": 0, "start": 0, "completion": 3},
        {"id": "B", "arrival": 1, "start": 1, "completion": 3},
        {"id": "C", "arrival": 2, "start": 3, "completion": 4},
    ],
}


def test_schedule_json_round_trip(tmp_path):
    sched = Schedule(ONLINE, [0, 1, 3], policy="hand")
    path = tmp_path / "s.json"
    write_schedule(sched, path)
    text = path.read_text()
    assert json.loads(text) == V2_DOC
    assert [json.loads(line.strip().rstrip(",")) for line in text.splitlines()[9:12]] == V2_DOC[
        "requests"
    ]  # one request a line
    back = read_schedule(path, ONLINE)
    assert back.start.tolist() == [0, 1, 3]
    assert back.policy == "hand"
    assert back.tel == 7
    assert back.runs is None


def test_schedule_with_runs_hand_made(tmp_path):
    """A evicted after 1 round at round 0 (arrival 0), restarted at 1: runs are listed."""
    runs = [[1, 1, 3, 1], [0, 1, 4, 1], [0, 0, 1, 0], [2, 4, 5, 1]]
    sched = Schedule(ONLINE, [1, 1, 4], policy="hand", runs=runs)
    assert sched.feasible
    path = tmp_path / "s.json"
    write_schedule(sched, path)
    doc = json.loads(path.read_text())
    assert doc["requests"] == [
        {"id": "A", "arrival": 0, "start": 1, "completion": 4, "runs": [[0, 1, 0], [1, 4, 1]]},
        {"id": "B", "arrival": 1, "start": 1, "completion": 3},
        {"id": "C", "arrival": 2, "start": 4, "completion": 5},
    ]
    assert (doc["evictions"], doc["wasted_tokens"], doc["tel"]) == (1, 1, 4 + 2 + 3)
    back = read_schedule(path, ONLINE)
    assert back.runs is not None
    assert back.runs.tolist() == sorted(runs)  # ordered by request, then start


def test_a_request_without_a_run_cannot_be_written(tmp_path):
    sched = Schedule(ONLINE, [0, 1, 3], runs=[[0, 0, 3, 1], [2, 3, 4, 1]])
    with pytest.raises(ValueError, match="request 'B' has no run in the run record"):
        write_schedule(sched, tmp_path / "s.json")
    assert not (tmp_path / "s.json").exists()


def test_schedule_with_a_run_record_but_no_eviction_keeps_it(tmp_path):
    runs = [[i, p, p + o, 1] for i, (p, o) in enumerate(zip([0, 1, 3], [3, 2, 1], strict=True))]
    path = tmp_path / "s.json"
    write_schedule(Schedule(ONLINE, [0, 1, 3], runs=runs), path)
    doc = json.loads(path.read_text())
    assert (doc["evictions"], doc["wasted_tokens"]) == (0, 0)
    assert all("runs" not in r for r in doc["requests"])
    assert read_schedule(path, ONLINE).runs.tolist() == runs


@pytest.mark.parametrize("with_runs", [False, True])
def test_version_1_is_still_read(tmp_path, with_runs):
    doc = {
        "format": "lpsched/schedule",
        "version": 1,
        "instance": "hand-online",
        "policy": "hand",
        "start": [1, 1, 4],
        "completion": [4, 3, 5],
        "tel": 9,
    }
    runs = [[0, 0, 1, 0], [0, 1, 4, 1], [1, 1, 3, 1], [2, 4, 5, 1]]
    if with_runs:
        doc.update(runs=runs, evictions=1, wasted_tokens=1)
    back = read_schedule(_write_json(tmp_path / "v1.json", doc), ONLINE)
    assert back.start.tolist() == [1, 1, 4] and back.tel == 9
    assert (back.runs.tolist() if with_runs else back.runs) == (runs if with_runs else None)
    doc["tel"] = 8
    with pytest.raises(InstanceError, match="field 'tel' is 8, but the starts give 9"):
        read_schedule(_write_json(tmp_path / "v1.json", doc), ONLINE)
    doc["tel"] = 9
    for bad, needle in [
        ([], "field 'runs' is empty; leave it out"),
        ([[0, 1, 4, 1], [1, 1, 3, 1], [3, 4, 5, 1]], r"row 2: request index 3 is not in 0\.\.2"),
    ]:
        doc.update(runs=bad)
        doc.pop("evictions", None), doc.pop("wasted_tokens", None)
        with pytest.raises(InstanceError, match=needle):
            read_schedule(_write_json(tmp_path / "v1.json", doc), ONLINE)


def test_read_schedule_errors(tmp_path):
    for change, needle in [
        ({"tel": 8}, "field 'tel' is 8, but the starts give 7"),
        ({"makespan": 3}, "field 'makespan' is 3, but the starts give 4"),
        ({"peak_memory": 7}, "field 'peak_memory' is 7, but the starts and runs give 8"),
        ({"requests": V2_DOC["requests"][:2]}, "field 'requests' lists 2 requests"),
        ({"format": "lpsched/instance"}, "format"),
        ({"version": 3}, "field 'version' is 3; this lpsched reads 1 and 2"),
        ({"start": [0, 1, 3]}, "unknown field 'start'"),
    ]:
        bad = _write_json(tmp_path / "bad.json", {**V2_DOC, **change})
        with pytest.raises(InstanceError, match=re.escape(needle)) as info:
            read_schedule(bad, ONLINE)
        assert str(info.value).startswith(bad)
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    with pytest.raises(InstanceError, match="JSON"):
        read_schedule(broken, ONLINE)


@pytest.mark.parametrize(
    ("pos", "change", "needle"),
    [
        (
            1,
            {"id": "X"},
            "request at position 1: field 'id' is 'X', but the instance has 'B' there",
        ),
        (1, {"id": None}, "request at position 1: field 'id' must be a string"),
        (2, {"arrival": 0}, "request 'C': field 'arrival' is 0, but the instance says 2"),
        (
            2,
            {"completion": 5},
            "request 'C': field 'completion' is 5, but start 3 + decode length 1 give 4",
        ),
        (0, {"start": -1}, "request 'A': field 'start' must be a round in [0, 2^40], got -1"),
        (0, {"start": 0.5}, "request 'A': field 'start'"),
        (0, {"strat": 0}, "request 'A': unknown field 'strat' (did you mean 'start'?)"),
        (0, {"runs": [[0, 3]]}, "request 'A': field 'runs' must list one or more [start, end"),
        (0, {"runs": []}, "request 'A': field 'runs' must list one or more"),
        (0, {"runs": [[0, 3, 2]]}, "request 'A': field 'runs'"),
    ],
)
def test_schedule_v2_errors_name_request_and_field(tmp_path, pos, change, needle):
    reqs = [dict(r) for r in V2_DOC["requests"]]
    reqs[pos].update(change)
    path = _write_json(tmp_path / "s.json", {**V2_DOC, "requests": reqs})
    with pytest.raises(InstanceError, match=re.escape(needle)) as info:
        read_schedule(path, ONLINE)
    assert str(info.value).startswith(path)


def test_schedule_v2_missing_start_and_not_an_object(tmp_path):
    reqs = [dict(r) for r in V2_DOC["requests"]]
    del reqs[1]["start"]
    path = _write_json(tmp_path / "s.json", {**V2_DOC, "requests": reqs})
    with pytest.raises(InstanceError, match="request 'B': missing field 'start'"):
        read_schedule(path, ONLINE)
    path = _write_json(tmp_path / "s.json", {**V2_DOC, "requests": [1, 2, 3]})
    with pytest.raises(InstanceError, match="request at position 0 is not an object"):
        read_schedule(path, ONLINE)


def test_schedule_v2_infeasible_is_refused_unless_unchecked(tmp_path):
    reqs = [dict(r) for r in V2_DOC["requests"]]
    reqs[2].update(start=1, completion=2)  # C starts at 1, before its arrival 2
    doc = {**V2_DOC, "requests": reqs, "tel": 5, "makespan": 3, "peak_memory": 8}
    path = _write_json(tmp_path / "s.json", doc)
    with pytest.raises(InstanceError, match="request 'C' starts at round 1 before its arrival 2"):
        read_schedule(path, ONLINE)
    assert read_schedule(path, ONLINE, check=False).start.tolist() == [0, 1, 1]


def test_every_writer_uses_version_2(tmp_path):
    """``schedule -o`` and ``exact -o`` (the command line) write through write_schedule."""
    from click.testing import CliRunner

    from lpsched.cli import main

    inst_path = tmp_path / "i.json"
    write_instance(ONLINE, inst_path)
    for cmd in (
        ["schedule", str(inst_path), "--policy", "fcfs", "-o", str(tmp_path / "a.json")],
        ["exact", str(inst_path), "-o", str(tmp_path / "b.json")],
    ):
        result = CliRunner().invoke(main, cmd)
        assert result.exit_code == 0, result.output
    for name in ("a.json", "b.json"):
        doc = json.loads((tmp_path / name).read_text())
        assert doc["version"] == 2 and [r["id"] for r in doc["requests"]] == ["A", "B", "C"]
        assert read_schedule(tmp_path / name, ONLINE).tel == doc["tel"]
    out = CliRunner().invoke(main, ["schedule", str(inst_path), "--policy", "fcfs"]).output
    assert json.loads(out)["version"] == 2


@st.composite
def _schedules(draw):
    """Any schedule of a small random instance, feasible or not, with or without runs."""
    n = draw(st.integers(1, 5))
    decode = draw(st.lists(st.integers(1, 6), min_size=n, max_size=n))
    prefill = draw(st.lists(st.integers(0, 6), min_size=n, max_size=n))
    inst = Instance.from_arrays(
        prefill,
        decode,
        20,
        draw(st.lists(st.integers(0, 4), min_size=n, max_size=n)),
        ids=draw(st.lists(st.text(min_size=1, max_size=3), min_size=n, max_size=n, unique=True)),
        name=draw(st.text(max_size=4)),
    )
    start = draw(st.lists(st.integers(0, 12), min_size=n, max_size=n))
    runs = None
    if draw(st.booleans()):
        runs = [  # every request has a run (the writer refuses a request without one)
            [i, *draw(st.tuples(st.integers(-3, 30), st.integers(-3, 30), st.integers(0, 1)))]
            for i in list(range(n)) + draw(st.lists(st.integers(0, n - 1), max_size=5))
        ]
    return Schedule(inst, start, policy=draw(st.text(max_size=4)), runs=runs)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(_schedules())
def test_schedule_v2_round_trip_property(tmp_path, sched):
    path = tmp_path / "s.json"
    write_schedule(sched, path)
    back = read_schedule(path, sched.instance, check=False)
    assert back.start.tolist() == sched.start.tolist()
    assert back.policy == sched.policy
    assert (back.tel, back.makespan, back.peak_memory) == (
        sched.tel,
        sched.makespan,
        sched.peak_memory,
    )
    assert (back.evictions, back.wasted_tokens) == (sched.evictions, sched.wasted_tokens)
    if sched.runs is None:
        assert back.runs is None
    else:
        assert back.runs.tolist() == sorted(sched.runs.tolist())
    assert back.violations() == sched.violations()


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.integers(0, 10_000), st.sampled_from(["amin", "sorted-f-amin", "fcfs"]))
def test_policy_schedules_round_trip_checked(tmp_path, seed, policy):
    from lpsched.generators.intervals import from_spec
    from lpsched.generators.small import small_instance
    from lpsched.policies.registry import run_policy

    inst = from_spec(small_instance("uniform", 8, 30, seed=seed), "bins", seed=seed)
    sched = run_policy(inst, policy)
    path = tmp_path / "s.json"
    write_schedule(sched, path)
    back = read_schedule(path, inst)
    assert back.start.tolist() == sched.start.tolist()
    assert (back.runs is None) == (sched.runs is None)
    if sched.runs is not None:
        assert back.runs.tolist() == sorted(sched.runs.tolist())


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


def test_schedule_errors_escape_ids(tmp_path):
    inst = ONLINE.replace(ids=("ok", "new\nline", "x"))
    path = tmp_path / "s.json"
    path.write_text(
        json.dumps({"format": "lpsched/schedule", "instance": inst.name, "start": [0, "one", 3]})
    )
    with pytest.raises(InstanceError, match=r"request 'new\\nline': field 'start'") as info:
        read_schedule(path, inst)
    assert str(info.value).isprintable()


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


# --------------------------------------------------------------------------- schedule reader


def _schedule_doc(**changes):
    doc = {
        "format": "lpsched/schedule",
        "version": 1,
        "instance": ONLINE.name,
        "policy": "hand",
        "start": [0, 1, 3],
    }
    doc.update(changes)
    return doc


@pytest.mark.parametrize(
    ("changes", "needle"),
    [
        ({"strat": [0, 1, 3]}, "unknown field 'strat' (did you mean 'start'?)"),
        ({"policy": 7}, "field 'policy' must be a string"),
        ({"tel": True}, "field 'tel'"),
        ({"completion": [True, 2, 5]}, "field 'completion'"),
        ({"evictions": 3}, "field 'evictions' is 3"),
        ({"wasted_tokens": 1}, "field 'wasted_tokens'"),
        ({"runs": [[0, 2**70, 0, 1]]}, "field 'runs'"),
        ({"start": [0, 1, "NaN"]}, "field 'start'"),
    ],
)
def test_schedule_reader_refuses_silent_changes(tmp_path, changes, needle):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(_schedule_doc(**changes)))
    with pytest.raises(InstanceError, match=re.escape(needle)) as info:
        read_schedule(path, ONLINE)
    assert str(path) in str(info.value)


# --------------------------------------------------------------------------- atomic writes


def _enospc_after(monkeypatch, nbytes):
    """Make os.write write ``nbytes`` bytes of the next file, then fail with ENOSPC."""
    import errno
    import os

    real = os.write
    left = [nbytes]

    def fake(fd, data):
        if fd <= 2:
            return real(fd, data)
        if left[0] <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        k = real(fd, bytes(data[: left[0]]))
        left[0] -= k
        return k

    monkeypatch.setattr("lpsched.io.os.write", fake)


@pytest.mark.parametrize("writer", ["instance", "schedule", "text"])
def test_full_disk_leaves_the_previous_file_intact(tmp_path, monkeypatch, writer):
    import errno

    from lpsched.io import WriteError, atomic_write_text

    path = tmp_path / "out.json"
    path.write_text("previous\n")

    def write():
        if writer == "instance":
            write_instance(ONLINE, path)
        elif writer == "schedule":
            write_schedule(Schedule(ONLINE, [0, 1, 3]), path)
        else:
            atomic_write_text(path, "x" * 10_000)

    _enospc_after(monkeypatch, 7)
    with pytest.raises(WriteError, match=re.escape(f"{path}: cannot write: No space left")) as info:
        write()
    assert info.value.errno == errno.ENOSPC and isinstance(info.value, OSError)
    assert path.read_text() == "previous\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]  # no temporary file left


def test_atomic_write_replaces_whole_and_keeps_mode(tmp_path):
    import os
    import stat

    from lpsched.io import WriteError, atomic_write_text

    path = tmp_path / "a.txt"
    path.write_text("old")
    os.chmod(path, 0o640)
    atomic_write_text(path, "new text")
    assert path.read_text() == "new text" and stat.S_IMODE(path.stat().st_mode) == 0o640
    link = tmp_path / "link.txt"
    link.symlink_to(path)
    atomic_write_text(link, "via link")
    assert link.is_symlink() and path.read_text() == "via link"
    with pytest.raises(WriteError, match="folder .*missing does not exist"):
        atomic_write_text(tmp_path / "missing" / "a.txt", "x")
    with pytest.raises(WriteError, match="is a directory"):
        atomic_write_text(tmp_path, "x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "link.txt"]


def test_write_instance_refuses_non_json_metadata_before_writing(tmp_path):
    path = tmp_path / "i.json"
    with pytest.raises(InstanceError, match="cannot write instance"):
        write_instance(ONLINE.replace(metadata={"rate": float("nan")}), path)
    assert not path.exists()
