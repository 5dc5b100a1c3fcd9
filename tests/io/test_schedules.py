"""Schedule files (lpsched.io.schedules): JSON round trips (versions 2 and 1), and the error
messages of bad input.

Every bad input must raise :class:`InstanceError` (a ``ValueError``) whose message names the
file, the request id and the field (SPEC section 9; runs: SPEC section 6).
"""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lpsched.instance import Instance, InstanceError
from lpsched.io import read_schedule, write_instance, write_schedule
from lpsched.schedule import Schedule

# --------------------------------------------------------------------------- helpers


def _write_json(path, data) -> str:
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


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
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
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
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
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


# --------------------------------------------------------------------------- ids are escaped


def test_schedule_errors_escape_ids(tmp_path):
    inst = ONLINE.replace(ids=("ok", "new\nline", "x"))
    path = tmp_path / "s.json"
    path.write_text(
        json.dumps({"format": "lpsched/schedule", "instance": inst.name, "start": [0, "one", 3]})
    )
    with pytest.raises(InstanceError, match=r"request 'new\\nline': field 'start'") as info:
        read_schedule(path, inst)
    assert str(info.value).isprintable()


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
