"""Fuzzing the readers (lpsched.io): random text and structured mutations of valid files.

The only allowed outcomes of reading a file are a valid :class:`Instance` (or trace arrays, or
:class:`Schedule`) or an :class:`InstanceError` whose message names the file and says where
(a field, a line, a key); never another exception, and never a silent change: a mutated file
that still reads must say exactly what was read. Each test compares the result with an
independent reading of the same text (``json.loads`` / ``csv`` and SPEC section 9), written
here from the SPEC alone.

Set ``LPSCHED_FUZZ_STATS=1`` and run with ``-s`` to print how many inputs of each family were
tried and how they ended (the counts of the reliability table).
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lpsched.instance import MAX_VALUE, Instance, InstanceError
from lpsched.io import (
    INSTANCE_KEYS,
    REQUEST_KEYS,
    SCHEDULE_KEYS,
    SCHEDULE_KEYS_V1,
    SCHEDULE_REQUEST_KEYS,
    instance_to_dict,
    read_instance,
    read_schedule,
    read_trace_csv,
    schedule_to_dict,
    write_instance,
)
from lpsched.schedule import Schedule

FUZZ = settings(
    max_examples=250,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None,
)
STATS: Counter[str] = Counter()

# An error must say where: a field, a line, a key, a column, a request, or the whole file.
WHERE = re.compile(
    r"field|line \d|key|column|request|position|the file is empty|no rows|JSON object|"
    r"nested too deeply|not UTF-8|format|infeasible schedule"
)


@pytest.fixture(scope="module", autouse=True)
def _report():
    yield
    if os.environ.get("LPSCHED_FUZZ_STATS"):
        for key in sorted(STATS):
            print(f"{key}: {STATS[key]}")


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


def _write(folder: Path, name: str, data: str | bytes) -> Path:
    path = folder / name
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    path.write_bytes(data)
    return path


def _outcome(family: str, read, path: Path):
    """Run ``read(path)``; an InstanceError must name the file and say where."""
    STATS[f"{family}: inputs"] += 1
    try:
        out = read(path)
    except InstanceError as exc:
        msg = str(exc)
        assert msg.startswith(str(path)), msg
        assert WHERE.search(msg), msg
        assert "\n" not in msg and "\x1b" not in msg, msg
        STATS[f"{family}: InstanceError"] += 1
        return None
    STATS[f"{family}: valid"] += 1
    return out


# --------------------------------------------------------------------------- an independent reading


def _is_int(x: Any) -> bool:
    """A JSON integer as SPEC section 9 reads it: an int, or a float with an integral value."""
    if isinstance(x, bool):
        return False
    return isinstance(x, int) or (isinstance(x, float) and math.isfinite(x) and x == int(x))


def _strict_json(text: str) -> Any:
    """What a strict JSON reader sees (no NaN or Infinity, no duplicate keys), or raise."""

    def pairs(items):
        keys = [k for k, _ in items]
        if len(set(keys)) != len(keys):
            raise ValueError("duplicate key")
        return dict(items)

    def const(token):
        raise ValueError(token)

    def finite(token):
        value = float(token)
        if not math.isfinite(value):
            raise ValueError(token)
        return value

    if text.startswith("\ufeff"):  # the readers take one byte-order mark (utf-8-sig)
        text = text[1:]
    return json.loads(text, object_pairs_hook=pairs, parse_constant=const, parse_float=finite)


def _same_json(a: Any, b: Any) -> bool:
    """Equal JSON values, where 5 and 5.0 are the same number but True is not 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_json(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same_json(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def _instance_says(doc: Any, inst: Instance, path: Path) -> None:
    """``inst`` is exactly what the decoded document ``doc`` says (SPEC section 9)."""
    assert isinstance(doc, dict) and set(doc) <= set(INSTANCE_KEYS)
    assert doc.get("format", "lpsched/instance") == "lpsched/instance"
    assert _same_json(doc.get("version", 1), 1)
    assert doc.get("name", path.stem) == inst.name
    assert _same_json(doc.get("metadata") or {}, dict(inst.metadata))
    assert _is_int(doc["memory"]) and doc["memory"] == inst.memory
    reqs = doc["requests"]
    assert isinstance(reqs, list) and len(reqs) == inst.n
    intervals = any("decode_lo" in r or "decode_hi" in r for r in reqs)
    assert intervals == inst.has_intervals
    for i, r in enumerate(reqs):
        assert isinstance(r, dict) and set(r) <= set(REQUEST_KEYS)
        rid = r.get("id", f"r{i}")
        assert not isinstance(rid, bool) and isinstance(rid, (str, int))
        assert str(rid) == inst.ids[i]
        got = inst[i]
        for key in ("prefill", "decode", "arrival", "decode_lo", "decode_hi"):
            if key == "arrival" and key not in r:
                assert got.arrival == 0
                continue
            if key.startswith("decode_") and not intervals:
                continue
            assert _is_int(r[key]) and r[key] == getattr(got, key), key


# --------------------------------------------------------------------------- mutations


def _paths(value: Any, at: tuple = ()) -> list[tuple]:
    """Every path (tuple of keys / indices) into a decoded JSON value."""
    out = [at]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*at, k))
    elif isinstance(value, list):
        for k, v in enumerate(value):
            out += _paths(v, (*at, k))
    return out


def _get(value: Any, path: tuple) -> Any:
    for k in path:
        value = value[k]
    return value


JUNK_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.sampled_from([0, -1, 1, MAX_VALUE, MAX_VALUE + 1, 2**63, 10**30, 0.5, 1.0, -0.0, 1e300]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=6),
    st.lists(st.integers(0, 9), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(0, 9), max_size=2),
)
LITERALS = ["NaN", "Infinity", "-Infinity", "1e400", "-1e400", "1" + "0" * 5000, "1E+2", "2.5e-1"]


@st.composite
def json_mutation(draw, text: str) -> str:
    """A structured mutation of the JSON text of a valid file."""
    doc = json.loads(text)
    kind = draw(
        st.sampled_from(
            [
                "delete",
                "retype",
                "junk-key",
                "truncate",
                "duplicate",
                "literal",
                "bom",
                "crlf",
                "insert-text",
                "rename",
            ]
        )
    )
    STATS[f"mutation {kind}"] += 1
    paths = [p for p in _paths(doc) if p]
    if kind in ("delete", "retype", "rename", "junk-key") and paths:
        if kind == "junk-key":
            holders = [p for p in [(), *paths] if isinstance(_get(doc, p), dict)]
            holder = _get(doc, draw(st.sampled_from(holders)))
            holder[draw(st.text(min_size=1, max_size=8))] = draw(JUNK_VALUES)
            return json.dumps(doc)
        path = draw(st.sampled_from(paths))
        parent = _get(doc, path[:-1])
        if kind == "delete":
            del parent[path[-1]]
        elif kind == "retype":
            parent[path[-1]] = draw(JUNK_VALUES)
        elif isinstance(parent, dict):  # rename a key to a near miss
            key = path[-1]
            new = draw(st.sampled_from([key[:-1], key + "s", key.upper(), key[1:] + key[:1]]))
            parent[new or "x"] = parent.pop(key)
        return json.dumps(doc)
    if kind == "truncate":
        return text[: draw(st.integers(0, max(0, len(text) - 1)))]
    if kind == "duplicate":  # repeat the first key of some object (text level)
        spots = [m.start() for m in re.finditer(r"\{\s*\"", text)]
        if not spots:
            return text
        at = draw(st.sampled_from(spots))
        m = re.match(r"\{(\s*\"[^\"]*\"\s*:\s*[^,{}\[\]]*),", text[at:])
        if m is None:
            return text
        return text[: at + 1] + m.group(1) + "," + text[at + 1 :]
    if kind == "literal":  # a number becomes NaN, Infinity, a huge or a float literal
        spots = [m.span() for m in re.finditer(r"(?<![\"\w.])-?\d+(?![\"\w.])", text)]
        if not spots:
            return text
        a, b = draw(st.sampled_from(spots))
        return text[:a] + draw(st.sampled_from(LITERALS)) + text[b:]
    if kind == "bom":
        where = draw(st.sampled_from(["start", "twice", "inside"]))
        if where == "start":
            return "\ufeff" + text
        if where == "twice":
            return "\ufeff\ufeff" + text
        k = draw(st.integers(0, len(text)))
        return text[:k] + "\ufeff" + text[k:]
    if kind == "crlf":
        return text.replace("\n", "\r\n") if "\n" in text else text.replace(", ", ",\r\n")
    k = draw(st.integers(0, len(text)))  # insert-text: junk characters anywhere
    return text[:k] + draw(st.text(max_size=4)) + text[k:]


# --------------------------------------------------------------------------- instances


@st.composite
def instances_to_write(draw) -> tuple[Instance, bool]:
    """A valid instance, and whether to write it with write_instance (else compact JSON)."""
    n = draw(st.integers(1, 4))
    memory = draw(st.integers(2, 40))
    decode = [draw(st.integers(1, memory - 1)) for _ in range(n)]
    prefill = [draw(st.integers(0, memory - o)) for o in decode]
    intervals = draw(st.booleans())
    inst = Instance.from_arrays(
        prefill,
        decode,
        memory,
        [draw(st.integers(0, 5)) for _ in range(n)],
        ids=draw(st.lists(st.text(max_size=4), min_size=n, max_size=n, unique=True)),
        decode_lo=[1] * n if intervals else None,
        decode_hi=[memory - x for x in prefill] if intervals else None,
        name=draw(st.text(max_size=5)),
        metadata=draw(st.dictionaries(st.text(max_size=4), JUNK_VALUES, max_size=3)),
    )
    return inst, draw(st.booleans())


def _instance_text(folder: Path, inst: Instance, with_writer: bool) -> str:
    if with_writer:
        write_instance(inst, folder / "written.json")
        return (folder / "written.json").read_text(encoding="utf-8")
    return json.dumps(instance_to_dict(inst))


def _check_instance_text(folder: Path, family: str, text: str) -> None:
    path = _write(folder, "instance.json", text)
    inst = _outcome(family, read_instance, path)
    if inst is None:
        return
    try:
        doc = _strict_json(text)
    except ValueError:
        pytest.fail(f"the reader accepted text that is not strict JSON: {text[:200]!r}")
    _instance_says(doc, inst, path)


@FUZZ
@given(st.data())
def test_instance_mutations(folder, data):
    text = _instance_text(folder, *data.draw(instances_to_write()))
    _check_instance_text(folder, "instance JSON, valid", text)
    _check_instance_text(folder, "instance JSON, mutated", data.draw(json_mutation(text)))


@FUZZ
@given(st.one_of(st.text(max_size=80), st.binary(max_size=80), st.from_regex(r"\{.*\}")))
def test_instance_random_text(folder, text):
    if isinstance(text, bytes):
        path = _write(folder, "random.json", text)
        _outcome("instance JSON, random", read_instance, path)
        return
    _check_instance_text(folder, "instance JSON, random", text)


# --------------------------------------------------------------------------- trace CSV


def _csv_int(text: str) -> int | None:
    """A CSV token count read exactly (SPEC section 9: integer-valued numbers accepted)."""
    m = re.fullmatch(r"([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?", text.strip(), re.ASCII)
    if m is None or not (m[2] or m[3]):
        return None
    if m[4] and len(m[4].lstrip("+-")) > 6:  # an exponent that large: too large or a fraction
        return None if (m[2] + (m[3] or "")).strip("0") else 0
    from decimal import Decimal

    value = Decimal(text.strip())
    if value != value.to_integral_value() or abs(value) > MAX_VALUE:
        return None
    return int(value)


def _csv_says(text: str) -> tuple[list[int], list[int], list[float] | None] | None:
    """The trace as SPEC section 9 reads it, or None when some row is not valid."""
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        rows = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error:
        return None
    if not rows:
        return None
    header = [h.strip() for h in rows[0]]
    cols = ("num_prefill_tokens", "num_decode_tokens", "arrived_at")
    if any(header.count(c) > 1 for c in cols) or not set(cols[:2]) <= set(header):
        return None
    at = {c: header.index(c) for c in cols if c in header}
    s: list[int] = []
    o: list[int] = []
    a: list[float] = []
    for row in rows[1:]:
        if all(not c.strip() for c in row):
            continue
        if len(row) <= max(at.values()):
            return None
        sv, ov = _csv_int(row[at[cols[0]]]), _csv_int(row[at[cols[1]]])
        if sv is None or ov is None or sv < 0 or ov < 1:
            return None
        s.append(sv)
        o.append(ov)
        if "arrived_at" in at:
            t = row[at["arrived_at"]].strip()
            if not re.fullmatch(r"\+?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", t, re.ASCII):
                return None
            if not math.isfinite(float(t)):
                return None
            a.append(float(t))
    if not s:
        return None
    return s, o, (a if "arrived_at" in at else None)


NEAR_NUMBERS = [
    "",
    " 7 ",
    "7.0",
    "7.5",
    "-1",
    "0",
    "-0",
    "+3",
    "1e1",
    "1e400",
    "1e-400",
    "nan",
    "inf",
    "1_0",
    "0x1",
    "\u0661",
    "\uff17",
    "9" * 30,
    "1" + "0" * 5000,
    "1." + "0" * 20 + "1",
    "8.",
    ".5",
    '"4"',
    "4,5",
    "7\x00",
    "1e99999999999",
]
CELLS = st.one_of(st.integers(0, 50).map(str), st.sampled_from(NEAR_NUMBERS), st.text(max_size=3))


@st.composite
def trace_files(draw) -> str:
    """A valid trace CSV, with or without arrivals and extra columns, in any column order."""
    cols = ["num_prefill_tokens", "num_decode_tokens"]
    if draw(st.booleans()):
        cols.append("arrived_at")
    cols += draw(st.lists(st.sampled_from(["extra", "model", "x"]), max_size=2, unique=True))
    cols = draw(st.permutations(cols))
    lines = [",".join(cols)]
    for _ in range(draw(st.integers(1, 5))):
        cell = {
            "num_prefill_tokens": str(draw(st.integers(0, 900))),
            "num_decode_tokens": str(draw(st.integers(1, 900))),
            "arrived_at": repr(draw(st.floats(0, 1e6))),
        }
        lines.append(",".join(cell.get(c, draw(st.text("ab c", max_size=3))) for c in cols))
    return "\n".join(lines) + "\n"


@st.composite
def csv_mutation(draw, text: str) -> str:
    kind = draw(
        st.sampled_from(
            [
                "cell",
                "value",
                "value",
                "drop-cell",
                "junk-row",
                "truncate",
                "duplicate-column",
                "bom",
                "crlf",
                "blank-lines",
                "insert-text",
                "header",
            ]
        )
    )
    STATS[f"mutation {kind}"] += 1
    lines = text.split("\n")
    if kind == "value":  # a token count or a time becomes a near miss of a number
        head = lines[0].split(",")
        c = draw(st.sampled_from([k for k, h in enumerate(head) if h.startswith(("num", "arr"))]))
        r = draw(st.integers(1, len(lines) - 2))
        cells = lines[r].split(",")
        cells[c] = draw(st.sampled_from(NEAR_NUMBERS))
        lines[r] = ",".join(cells)
        return "\n".join(lines)
    if kind in ("cell", "drop-cell"):
        r = draw(st.integers(0, len(lines) - 2))
        cells = lines[r].split(",")
        c = draw(st.integers(0, len(cells) - 1))
        if kind == "cell":
            cells[c] = draw(CELLS)
        else:
            del cells[c]
        lines[r] = ",".join(cells)
        return "\n".join(lines)
    if kind == "junk-row":
        lines.insert(draw(st.integers(1, len(lines))), ",".join(draw(st.lists(CELLS, max_size=4))))
        return "\n".join(lines)
    if kind == "truncate":
        return text[: draw(st.integers(0, len(text)))]
    if kind == "duplicate-column":
        head = lines[0].split(",")
        lines[0] = ",".join(head + [draw(st.sampled_from(head))])
        return "\n".join(lines)
    if kind == "bom":
        return "\ufeff" + text if draw(st.booleans()) else "\ufeff\ufeff" + text
    if kind == "crlf":
        return text.replace("\n", "\r\n")
    if kind == "blank-lines":
        return text.replace("\n", "\n\n", draw(st.integers(1, 3)))
    if kind == "header":
        lines[0] = lines[0].replace(
            "tokens", draw(st.sampled_from(["token", "Tokens", " tokens "]))
        )
        return "\n".join(lines)
    k = draw(st.integers(0, len(text)))
    return text[:k] + draw(st.text(max_size=3)) + text[k:]


def _check_trace_text(folder: Path, family: str, text: str | bytes) -> None:
    path = _write(folder, "trace.csv", text)
    got = _outcome(family, read_trace_csv, path)
    if isinstance(text, bytes):
        return
    said = _csv_says(text)
    if got is None:
        assert said is None, f"refused a valid trace: {text!r}"
        return
    assert said is not None, f"accepted an invalid trace: {text!r}"
    s, o, a = got
    assert s.tolist() == said[0] and o.tolist() == said[1]
    assert (a is None) == (said[2] is None)
    if a is not None:
        assert a.tolist() == said[2]


@FUZZ
@given(st.data())
def test_trace_mutations(folder, data):
    text = data.draw(trace_files())
    _check_trace_text(folder, "trace CSV, valid", text)
    _check_trace_text(folder, "trace CSV, mutated", data.draw(csv_mutation(text)))


@FUZZ
@given(
    st.one_of(
        st.text(max_size=60),
        st.binary(max_size=60),
        st.lists(st.lists(CELLS, max_size=4), max_size=4).map(
            lambda rows: (
                "num_prefill_tokens,num_decode_tokens,arrived_at\n"
                + "\n".join(",".join(r) for r in rows)
            )
        ),
    )
)
def test_trace_random_text(folder, text):
    _check_trace_text(folder, "trace CSV, random", text)


# --------------------------------------------------------------------------- schedules


SCHED_INST = Instance.from_arrays([2, 1, 0, 3], [3, 2, 1, 2], 10, [0, 1, 1, 2], name="fz")


def _v1_dict(sched: Schedule) -> dict[str, Any]:
    """The version-1 schedule object (SPEC section 9 before version 2), as lpsched wrote it."""
    out: dict[str, Any] = {
        "format": "lpsched/schedule",
        "version": 1,
        "instance": sched.instance.name,
        "policy": sched.policy,
        "start": sched.start.tolist(),
        "completion": sched.completion.tolist(),
        "tel": sched.tel,
    }
    if sched.runs is not None:
        out.update(
            runs=sched.runs.tolist(), evictions=sched.evictions, wasted_tokens=sched.wasted_tokens
        )
    return out


@st.composite
def schedule_files(draw) -> str:
    start = [a + draw(st.integers(0, 4)) for a in SCHED_INST.arrival.tolist()]
    runs = None
    if draw(st.booleans()):  # an evicting policy's record: request 0 cut once, then completed
        start[0] = max(start[0], 2)
        runs = [[0, 0, 1, 0], [0, start[0], start[0] + 3, 1]] + [
            [i, start[i], start[i] + int(SCHED_INST.decode[i]), 1] for i in range(1, 4)
        ]
    sched = Schedule(SCHED_INST, start, policy=draw(st.text(max_size=4)), runs=runs)
    version = draw(st.sampled_from([1, 2]))
    STATS[f"schedule JSON version {version}"] += 1
    return json.dumps(schedule_to_dict(sched) if version == 2 else _v1_dict(sched))


def _runs_ok(rows: Any, width: int) -> bool:
    """A list of integer rows of ``width`` entries within the model's range (SPEC section 6)."""
    return isinstance(rows, list) and all(
        isinstance(r, list)
        and len(r) == width
        and all(type(v) is int and abs(v) <= 2 * MAX_VALUE for v in r)
        for r in rows
    )


def _schedule_says(doc: Any, sched: Schedule) -> None:
    """``sched`` is exactly what the decoded document says (SPEC section 9, versions 1 and 2)."""
    inst = SCHED_INST
    assert isinstance(doc, dict) and doc["format"] == "lpsched/schedule"
    version = doc.get("version", 1)
    assert type(version) is int and version in (1, 2)
    assert set(doc) <= set(SCHEDULE_KEYS if version == 2 else SCHEDULE_KEYS_V1)
    assert doc.get("instance", inst.name) == inst.name
    assert doc.get("policy", "") == sched.policy
    derived = {
        "tel": sched.tel,
        "evictions": sched.evictions,
        "wasted_tokens": sched.wasted_tokens,
    }
    if version == 1:
        assert all(_is_int(x) for x in doc["start"]) and doc["start"] == sched.start.tolist()
        derived["completion"] = sched.completion.tolist()
        rows = doc.get("runs")
        assert rows is None or _runs_ok(rows, 4)
    else:
        derived.update(makespan=sched.makespan, peak_memory=sched.peak_memory)
        reqs = doc["requests"]
        assert isinstance(reqs, list) and len(reqs) == inst.n
        rows = None
        if any(k in doc for k in ("evictions", "wasted_tokens")) or any("runs" in r for r in reqs):
            rows = []
        for i, r in enumerate(reqs):
            assert isinstance(r, dict) and set(r) <= set(SCHEDULE_REQUEST_KEYS)
            assert not isinstance(r["id"], bool) and str(r["id"]) == inst.ids[i]
            p, o = r["start"], int(inst.decode[i])
            assert _is_int(p) and p == sched.start[i]
            assert _same_json(r.get("arrival", int(inst.arrival[i])), int(inst.arrival[i]))
            assert _same_json(r.get("completion", p + o), p + o)
            own = r.get("runs", [[int(p), int(p) + o, 1]])
            assert _runs_ok(own, 3) and own and all(x[2] in (0, 1) for x in own)
            if rows is not None:
                rows += [[i, *x] for x in own]
    for key, value in derived.items():
        if key in doc:
            assert _same_json(doc[key], value), key
    if rows is None:
        assert sched.runs is None
    else:
        assert sched.runs is not None and sched.runs.tolist() == rows


def _check_schedule_text(folder: Path, family: str, text: str, check: bool) -> None:
    path = _write(folder, "schedule.json", text)
    sched = _outcome(family, lambda p: read_schedule(p, SCHED_INST, check=check), path)
    if sched is None:
        return
    try:
        doc = _strict_json(text)
    except ValueError:
        pytest.fail(f"the reader accepted text that is not strict JSON: {text[:200]!r}")
    _schedule_says(doc, sched)
    if check:
        assert sched.feasible


@FUZZ
@given(st.data(), st.booleans())
def test_schedule_mutations(folder, data, check):
    text = data.draw(schedule_files())
    _check_schedule_text(folder, "schedule JSON, valid", text, check)
    _check_schedule_text(folder, "schedule JSON, mutated", data.draw(json_mutation(text)), check)


@FUZZ
@given(st.text(max_size=80))
def test_schedule_random_text(folder, text):
    _check_schedule_text(folder, "schedule JSON, random", text, True)
