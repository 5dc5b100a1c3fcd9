"""Every file lpsched reads or writes: instance and schedule JSON, trace CSV (SPEC section 9).

Readers validate once and raise :class:`~lpsched.instance.InstanceError` naming the file, the
request (or line) and the field; writers produce the stable, versioned formats of SPEC section 9.
The public helpers :func:`load_json` (duplicate keys are an error) and
:func:`~lpsched.instance.int_field` (one integer coercion rule) are shared by every reader.
"""

from __future__ import annotations

import csv
import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, overload

import numpy as np

from .instance import MAX_VALUE, Instance, InstanceError, int_field
from .schedule import Schedule

__all__ = [
    "INSTANCE_FORMAT",
    "INSTANCE_VERSION",
    "SCHEDULE_FORMAT",
    "SCHEDULE_VERSION",
    "instance_to_dict",
    "instance_from_dict",
    "read_instance",
    "write_instance",
    "load_json",
    "read_trace_csv",
    "require_files",
    "schedule_to_dict",
    "write_schedule",
    "read_schedule",
]

INSTANCE_FORMAT = "lpsched/instance"
INSTANCE_VERSION = 1
SCHEDULE_FORMAT = "lpsched/schedule"
SCHEDULE_VERSION = 1


def instance_to_dict(instance: Instance) -> dict[str, Any]:
    """The SPEC section 9 instance JSON object of ``instance`` (``arrival`` always written).

    Source: SPEC section 9.
    """
    reqs = []
    for i in range(instance.n):
        r: dict[str, Any] = {
            "id": instance.ids[i],
            "prefill": int(instance.prefill[i]),
            "decode": int(instance.decode[i]),
            "arrival": int(instance.arrival[i]),
        }
        if instance.decode_lo is not None:
            assert instance.decode_hi is not None  # an instance has both bounds or neither
            r["decode_lo"] = int(instance.decode_lo[i])
            r["decode_hi"] = int(instance.decode_hi[i])
        reqs.append(r)
    return {
        "format": INSTANCE_FORMAT,
        "version": INSTANCE_VERSION,
        "name": instance.name,
        "memory": instance.memory,
        "requests": reqs,
        "metadata": dict(instance.metadata),
    }


def instance_from_dict(data: Any, source: str = "<memory>") -> Instance:
    """Parse a SPEC section 9 instance object (already decoded from JSON).

    Parameters
    ----------
    data : object
        The decoded JSON value.
    source : str
        The file it came from, named in every error.

    Returns
    -------
    Instance

    Raises
    ------
    InstanceError
        Wrong format or version, a missing or mistyped field; names source, request, field.
    """
    if not isinstance(data, dict):
        raise InstanceError(f"{source}: expected a JSON object with 'memory' and 'requests'")
    for key, kind in (("name", str), ("metadata", dict)):
        if key in data and not isinstance(data[key], kind):
            raise InstanceError(
                f"{source}: field '{key}' must be a JSON {'string' if kind is str else 'object'}"
            )
    fmt = data.get("format", INSTANCE_FORMAT)
    if fmt != INSTANCE_FORMAT:
        raise InstanceError(f"{source}: field 'format' is {fmt!r}, expected {INSTANCE_FORMAT!r}")
    version = data.get("version", INSTANCE_VERSION)
    if version != INSTANCE_VERSION or isinstance(version, bool):
        raise InstanceError(f"{source}: field 'version' is {version!r}; this lpsched reads 1")
    for key in ("memory", "requests"):
        if key not in data:
            raise InstanceError(f"{source}: missing field '{key}'")
    requests = data["requests"]
    if not isinstance(requests, list):
        raise InstanceError(f"{source}: field 'requests' must be a list")
    if not requests:
        raise InstanceError(f"{source}: field 'requests' is empty")
    cols: dict[str, list[int]] = {
        k: [] for k in ("prefill", "decode", "arrival", "decode_lo", "decode_hi")
    }
    ids = []
    with_interval = any(
        isinstance(r, dict) and ("decode_lo" in r or "decode_hi" in r) for r in requests
    )
    for pos, r in enumerate(requests):
        if not isinstance(r, dict):
            raise InstanceError(f"{source}: request at position {pos} is not an object")
        rid = r.get("id", f"r{pos}")
        if isinstance(rid, bool) or not isinstance(rid, (str, int)):
            raise InstanceError(
                f"{source}: request at position {pos}: field 'id' must be a "
                f"string or an integer, got {rid!r}"
            )
        rid = str(rid)
        ids.append(rid)
        for key in cols:
            optional = key == "arrival" or (key.startswith("decode_") and not with_interval)
            if key not in r:
                if key == "arrival":
                    cols[key].append(0)
                    continue
                if optional:
                    continue
                raise InstanceError(f"{source}: request '{rid}': missing field '{key}'")
            cols[key].append(int_field(r[key], source, f"request '{rid}'", key))
    return Instance(
        memory=int_field(data["memory"], source, "instance", "memory"),
        prefill=cols["prefill"],
        decode=cols["decode"],
        arrival=cols["arrival"],
        ids=tuple(ids),
        decode_lo=cols["decode_lo"] if with_interval else None,
        decode_hi=cols["decode_hi"] if with_interval else None,
        name=str(data.get("name", Path(source).stem if source != "<memory>" else "instance")),
        metadata=data.get("metadata") or {},
        source=source,
    )


def read_instance(path: str | os.PathLike[str]) -> Instance:
    """Read an instance JSON file (SPEC section 9).

    Parameters
    ----------
    path : path-like
        The instance file (a trace CSV has no memory budget: see :func:`read_trace_csv` and
        :func:`lpsched.generators.workloads.from_traces`).

    Returns
    -------
    Instance

    Raises
    ------
    InstanceError
        Missing file, empty file, malformed JSON, or invalid data; the message names the file,
        the request and the field.
    """
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InstanceError(f"{p}: no such file") from None
    except IsADirectoryError:
        raise InstanceError(f"{p}: is a directory, not an instance file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InstanceError(f"{p}: cannot read: {exc}") from None
    if not text.strip():
        raise InstanceError(f"{p}: the file is empty")
    return instance_from_dict(load_json(text, p), source=str(p))


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


def load_json(text: str, path: str | os.PathLike[str]) -> Any:
    """Parse JSON text read from ``path``; duplicate keys are an error.

    Raises
    ------
    InstanceError
        Malformed JSON (with the line), a duplicate key, or nesting too deep, naming the file.
    """
    try:
        return json.loads(text, object_pairs_hook=_no_duplicate_keys)
    except json.JSONDecodeError as exc:
        raise InstanceError(f"{path}: malformed JSON at line {exc.lineno}: {exc.msg}") from None
    except ValueError as exc:
        raise InstanceError(f"{path}: malformed JSON: {exc}") from None
    except RecursionError:
        raise InstanceError(f"{path}: malformed JSON: nested too deeply") from None


def write_instance(instance: Instance, path: str | os.PathLike[str]) -> None:
    """Write ``instance`` as SPEC section 9 JSON (one request per line, stable key order)."""
    data = instance_to_dict(instance)
    reqs = data.pop("requests")
    head = json.dumps(data, indent=1)[:-2]
    lines = ",\n  ".join(json.dumps(r) for r in reqs)
    Path(path).write_text(f'{head},\n "requests": [\n  {lines}\n ]\n}}\n', encoding="utf-8")


TRACE_PREFILL = "num_prefill_tokens"
TRACE_DECODE = "num_decode_tokens"
TRACE_ARRIVAL = "arrived_at"


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
                    f"{p}: line 1: missing column '{col}' (header is {','.join(header)!r}; "
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
                    try:
                        av = float(row[ci_a])
                    except ValueError:
                        av = math.nan
                    if not math.isfinite(av) or av < 0:
                        raise InstanceError(
                            f"{p}: {who}: field '{TRACE_ARRIVAL}' must be a time >= 0 in seconds, "
                            f"got {row[ci_a]!r}"
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


def schedule_to_dict(schedule: Schedule) -> dict[str, Any]:
    """The SPEC section 9 schedule JSON object of ``schedule``; with evictions also ``runs`` (rows
    ``[request, start, end, completed]``), ``evictions`` and ``wasted_tokens``."""
    out: dict[str, Any] = {
        "format": SCHEDULE_FORMAT,
        "version": SCHEDULE_VERSION,
        "instance": schedule.instance.name,
        "policy": schedule.policy,
        "start": [int(x) for x in schedule.start],
        "completion": [int(x) for x in schedule.completion],
        "tel": schedule.tel,
    }
    if schedule.runs is not None:
        out.update(
            runs=schedule.runs.tolist(),
            evictions=schedule.evictions,
            wasted_tokens=schedule.wasted_tokens,
        )
    return out


def write_schedule(schedule: Schedule, path: str | os.PathLike[str]) -> None:
    """Write ``schedule`` as SPEC section 9 schedule JSON to ``path``."""
    Path(path).write_text(json.dumps(schedule_to_dict(schedule)) + "\n", encoding="utf-8")


def read_schedule(
    path: str | os.PathLike[str], instance: Instance, *, check: bool = True
) -> Schedule:
    """Read a schedule JSON file written for ``instance``.

    Parameters
    ----------
    path : path-like
        The schedule JSON (SPEC section 9, with the optional ``runs`` of evicting policies).
    instance : Instance
        The instance it schedules (its name must match the file's ``instance`` field).
    check : bool, default True
        Also refuse a schedule that breaks the model (a start before its arrival, a round
        over ``M``); False reads it as it is, for inspecting infeasible schedules.

    Returns
    -------
    Schedule

    Raises
    ------
    InstanceError
        Missing or malformed file, wrong format, or a start list of the wrong length; the
        completions and TEL in the file must agree with the instance; with ``check``, an
        infeasible schedule (the message says where).
    """
    p = Path(path)
    try:
        data = load_json(p.read_text(encoding="utf-8-sig"), p)
    except FileNotFoundError:
        raise InstanceError(f"{p}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InstanceError(f"{p}: cannot read: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != SCHEDULE_FORMAT:
        raise InstanceError(f"{p}: field 'format' must be {SCHEDULE_FORMAT!r}")
    version = data.get("version", SCHEDULE_VERSION)
    if version != SCHEDULE_VERSION or isinstance(version, bool):
        raise InstanceError(f"{p}: field 'version' is {version!r}; this lpsched reads 1")
    if "instance" in data and data["instance"] != instance.name:
        raise InstanceError(
            f"{p}: field 'instance' is {data['instance']!r}, but the instance "
            f"given is {instance.name!r}"
        )
    start = data.get("start")
    if not isinstance(start, list) or len(start) != instance.n:
        raise InstanceError(f"{p}: field 'start' must list {instance.n} integers")
    values = [
        int_field(x, str(p), f"request '{instance.ids[i]}'", "start") for i, x in enumerate(start)
    ]
    for i, v in enumerate(values):
        if not 0 <= v <= MAX_VALUE:
            raise InstanceError(
                f"{p}: request '{instance.ids[i]}': field 'start' must be a "
                f"round in [0, 2^40], got {v}"
            )
    runs = data.get("runs")
    if runs is not None:
        if not (
            isinstance(runs, list)
            and all(
                isinstance(r, list)
                and len(r) == 4
                and all(isinstance(v, int) and not isinstance(v, bool) for v in r)
                for r in runs
            )
        ):
            raise InstanceError(
                f"{p}: field 'runs' must list [request, start, end, completed] integer rows"
            )
        runs = np.asarray(runs, dtype=np.int64).reshape(-1, 4)
    sched = Schedule(
        instance, np.asarray(values, dtype=np.int64), policy=str(data.get("policy", "")), runs=runs
    )
    if "completion" in data and data["completion"] != sched.completion.tolist():
        raise InstanceError(f"{p}: field 'completion' disagrees with start + decode length")
    if "tel" in data and (isinstance(data["tel"], bool) or data["tel"] != sched.tel):
        raise InstanceError(f"{p}: field 'tel' is {data['tel']!r}, the starts give {sched.tel}")
    if check:
        bad = sched.violations(limit=3)
        if bad:
            raise InstanceError(f"{p}: infeasible schedule: " + "; ".join(bad))
    return sched
