"""Every file lpsched reads or writes: instance and schedule JSON, trace CSV (SPEC section 9).

Readers validate once and raise :class:`~lpsched.instance.InstanceError` naming the file, the
request (or line) and the field; a key the format does not define is an error naming it and the
closest defined key (free-form data goes under ``metadata``), and so are ``NaN``, ``Infinity``
and numbers beyond the float range. Writers produce the stable, versioned formats of SPEC
section 9, each file whole or not at all (:func:`atomic_write_text`; a failure raises
:class:`WriteError` naming the path). The public helpers :func:`load_json` (duplicate keys are an
error) and :func:`~lpsched.instance.int_field` (one integer coercion rule) are shared by every
reader; user text in messages is quoted with :func:`~lpsched.instance.quote`.
"""

from __future__ import annotations

import contextlib
import csv
import difflib
import json
import math
import os
import re
import secrets
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal, overload

import numpy as np

from .instance import MAX_VALUE, Instance, InstanceError, int_field, quote
from .schedule import Schedule

__all__ = [
    "WriteError",
    "atomic_write_text",
    "INSTANCE_KEYS",
    "REQUEST_KEYS",
    "SCHEDULE_KEYS",
    "SCHEDULE_REQUEST_KEYS",
    "SCHEDULE_KEYS_V1",
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
    "write_priorities",
]

INSTANCE_FORMAT = "lpsched/instance"
INSTANCE_VERSION = 1
SCHEDULE_FORMAT = "lpsched/schedule"
SCHEDULE_VERSION = 2
#: The keys of an instance JSON object and of one request (SPEC section 9); any other key is an
#: error, except under ``metadata`` (free-form).
INSTANCE_KEYS = ("format", "version", "name", "memory", "requests", "metadata")
REQUEST_KEYS = ("id", "prefill", "decode", "arrival", "decode_lo", "decode_hi")
#: The keys of a schedule JSON object (version 2) and of one of its requests (SPEC section 9,
#: runs: SPEC section 6), and those of version 1 (positional ``start``, still read).
SCHEDULE_KEYS = (
    "format",
    "version",
    "instance",
    "policy",
    "tel",
    "makespan",
    "peak_memory",
    "evictions",
    "wasted_tokens",
    "requests",
)
SCHEDULE_REQUEST_KEYS = ("id", "arrival", "start", "completion", "runs")
SCHEDULE_KEYS_V1 = (
    "format",
    "version",
    "instance",
    "policy",
    "start",
    "completion",
    "tel",
    "runs",
    "evictions",
    "wasted_tokens",
)
#: Keys people write by habit, with the key they mean (trace columns and near synonyms).
_KNOWN_SLIPS = {
    "arrived_at": "arrival",
    "num_prefill_tokens": "prefill",
    "num_decode_tokens": "decode",
}


class WriteError(OSError):
    """A file could not be written whole; the message names the path and the reason.

    Raised by :func:`atomic_write_text` (and so by every writer of lpsched); the file at the
    path, if any, is unchanged. It is an ``OSError`` (with the ``errno`` of the cause).
    Source: ours.
    """


def atomic_write_text(path: str | os.PathLike[str], text: str, *, encoding: str = "utf-8") -> None:
    """Write ``text`` to ``path`` whole or not at all.

    The text goes to a new temporary file in the same folder, is flushed to disk, and then
    replaces ``path`` in one step (``os.replace``), so that a reader never sees half a file and
    a failed write (an unwritable folder, a full disk) leaves the previous file, if any, intact
    and no temporary file behind. A new file gets the permissions the umask gives; a replaced
    file keeps its permission bits; a symbolic link is followed (the link stays).

    Parameters
    ----------
    path : path-like
        The file to write.
    text : str
        Its whole content.
    encoding : str, default "utf-8"

    Raises
    ------
    WriteError
        The file cannot be written; the message names the path and the reason.

    Notes
    -----
    Source: ours (the usual write-then-rename idiom).
    """
    target = Path(path)
    if target.is_symlink():
        target = Path(os.path.realpath(target))
    tmp: str | None = None
    try:
        data = text.encode(encoding)
        folder = target.parent
        if not folder.is_dir():
            raise FileNotFoundError(
                f"folder {os.fspath(folder) or '.'} does not exist"
                if not folder.exists()
                else f"{os.fspath(folder)} is not a folder"
            )
        if target.is_dir():
            raise IsADirectoryError("is a directory")
        for _ in range(100):
            tmp = os.path.join(folder, f".{target.name}.{secrets.token_hex(4)}.tmp")
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
                break
            except FileExistsError:
                tmp = None
        else:
            raise FileExistsError("no free temporary file name in the folder")
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        with contextlib.suppress(OSError):  # a replaced file keeps its permission bits
            os.chmod(tmp, stat.S_IMODE(os.stat(target).st_mode))
        os.replace(tmp, target)
        tmp = None
    except (OSError, UnicodeEncodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        err = WriteError(f"{path}: cannot write: {reason} (nothing was written)")
        err.errno = getattr(exc, "errno", None)
        raise err from None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _brief(value: Any, limit: int = 60) -> str:
    """``repr(value)`` (escaped, one line), cut to about ``limit`` characters for a message."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _unknown_keys(
    keys: Iterable[Any], allowed: Sequence[str], source: str, who: str | None = None
) -> None:
    """Raise naming every key of ``keys`` not in ``allowed`` and the closest allowed key."""
    unknown = [k for k in keys if k not in allowed]
    if not unknown:
        return
    parts = []
    for key in unknown:
        guess = _KNOWN_SLIPS.get(key) if isinstance(key, str) else None
        if guess not in allowed:
            close = difflib.get_close_matches(str(key), allowed, n=1, cutoff=0.6)
            guess = close[0] if close else None
        parts.append(_brief(str(key)) + (f" (did you mean {guess!r}?)" if guess else ""))
    where = f"{source}: {who}: " if who else f"{source}: "
    word = "field" if len(unknown) == 1 else "fields"
    raise InstanceError(
        f"{where}unknown {word} {', '.join(parts)}; the fields are {', '.join(allowed)}"
        + (" (free-form data goes under 'metadata')" if "metadata" in allowed else "")
    )


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
    _unknown_keys(data, INSTANCE_KEYS, source)
    for key, kind in (("name", str), ("metadata", dict)):
        if key in data and not isinstance(data[key], kind):
            raise InstanceError(
                f"{source}: field '{key}' must be a JSON {'string' if kind is str else 'object'}"
            )
    nonfinite = _first_nonfinite(data.get("metadata"), "metadata")
    if nonfinite is not None:
        raise InstanceError(
            f"{source}: field {quote(nonfinite[0])} is {nonfinite[1]!r}, not a JSON number "
            "(NaN and infinities cannot be written back)"
        )
    fmt = data.get("format", INSTANCE_FORMAT)
    if fmt != INSTANCE_FORMAT:
        raise InstanceError(
            f"{source}: field 'format' is {_brief(fmt)}, expected {INSTANCE_FORMAT!r}"
        )
    version = data.get("version", INSTANCE_VERSION)
    if version != INSTANCE_VERSION or isinstance(version, bool):
        raise InstanceError(f"{source}: field 'version' is {_brief(version)}; this lpsched reads 1")
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
                f"string or an integer, got {_brief(rid)}"
            )
        rid = str(rid)
        ids.append(rid)
        who = f"request {quote(rid)}"
        _unknown_keys(r, REQUEST_KEYS, source, who)
        for key in cols:
            optional = key == "arrival" or (key.startswith("decode_") and not with_interval)
            if key not in r:
                if key == "arrival":
                    cols[key].append(0)
                    continue
                if optional:
                    continue
                raise InstanceError(f"{source}: {who}: missing field '{key}'")
            cols[key].append(int_field(r[key], source, who, key))
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
            raise ValueError(f"duplicate key {quote(key)}")
        out[key] = value
    return out


class _BadNumber(ValueError):
    """An integer literal with more digits than Python converts."""

    def __init__(self, token: str, reason: str) -> None:
        super().__init__(token, reason)
        self.token, self.reason = token, reason


class NonFiniteNumber(float):
    """A number read from JSON text that no finite float holds: the literals ``NaN``,
    ``Infinity``, ``-Infinity`` (which Python's ``json`` accepts, RFC 8259 does not) and
    overflowing numbers such as ``1e400``. Its value is NaN or an infinity; its ``repr`` is the
    text of the file, so that error messages quote what was written. Every reader refuses it
    wherever it stands (a field, or anywhere under ``metadata``). Source: ours."""

    token: str

    def __new__(cls, token: str) -> NonFiniteNumber:
        out = super().__new__(cls, float(token))
        out.token = token
        return out

    def __repr__(self) -> str:
        return self.token

    __str__ = __repr__


def _finite_float(token: str) -> float:
    value = float(token)
    return value if math.isfinite(value) else NonFiniteNumber(token)


def _bounded_int(token: str) -> int:
    try:
        return int(token)
    except ValueError:  # more digits than Python converts (sys.get_int_max_str_digits)
        raise _BadNumber(token[:20], "the integer has too many digits") from None


def _line_of(text: str, token: str) -> int | None:
    """Line (1-based) of the first number starting with ``token`` outside a JSON string."""
    for match in re.finditer(r'"(?:[^"\\]|\\.)*"|(?<![0-9.eE+-])(' + re.escape(token) + ")", text):
        if match.group(1) is not None:
            return text.count("\n", 0, match.start(1)) + 1
    return None


def _first_nonfinite(value: Any, where: str) -> tuple[str, float] | None:
    """Where (``metadata.a[2]``) the first non-finite float under ``value`` sits, and it."""
    stack = [(value, where)]
    while stack:
        v, at = stack.pop()
        if isinstance(v, float) and not math.isfinite(v):
            return at, v
        if isinstance(v, dict):
            stack.extend((x, f"{at}.{k}") for k, x in reversed(list(v.items())))
        elif isinstance(v, list):
            stack.extend((x, f"{at}[{k}]") for k, x in reversed(list(enumerate(v))))
    return None


def load_json(text: str, path: str | os.PathLike[str]) -> Any:
    """Parse JSON text read from ``path``; duplicate keys are an error.

    ``NaN``, ``Infinity``, ``-Infinity`` and numbers beyond the float range (``1e400``) come
    back as :class:`NonFiniteNumber`, which the readers refuse naming the field (``must be an
    integer, got NaN``); an integer of more digits than Python converts is an error here.

    Raises
    ------
    InstanceError
        Malformed JSON (with the line), a duplicate key, an integer too long (with the line), or
        nesting too deep, naming the file.
    """
    try:
        return json.loads(
            text,
            object_pairs_hook=_no_duplicate_keys,
            parse_constant=NonFiniteNumber,
            parse_float=_finite_float,
            parse_int=_bounded_int,
        )
    except _BadNumber as exc:
        line = _line_of(text, exc.token)
        at = f" at line {line}" if line is not None else ""
        raise InstanceError(
            f"{path}: malformed JSON{at}: the number {exc.token}... {exc.reason}"
        ) from None
    except json.JSONDecodeError as exc:
        raise InstanceError(f"{path}: malformed JSON at line {exc.lineno}: {exc.msg}") from None
    except ValueError as exc:
        raise InstanceError(f"{path}: malformed JSON: {exc}") from None
    except RecursionError:
        raise InstanceError(f"{path}: malformed JSON: nested too deeply") from None


def write_instance(instance: Instance, path: str | os.PathLike[str]) -> None:
    """Write ``instance`` as SPEC section 9 JSON (one request per line, stable key order).

    The write is atomic (:func:`atomic_write_text`). Raises :class:`WriteError` naming the path
    when it cannot be written (the previous file, if any, intact) and ``ValueError`` for
    metadata that is not JSON (NaN, infinity, objects JSON cannot hold), before anything is
    written.
    """
    data = instance_to_dict(instance)
    reqs = data.pop("requests")
    try:
        head = json.dumps(data, indent=1, allow_nan=False)[:-2]
    except (TypeError, ValueError) as exc:
        raise InstanceError(
            f"{path}: cannot write instance {quote(instance.name)}: {exc}"
        ) from None
    lines = ",\n  ".join(json.dumps(r) for r in reqs)
    atomic_write_text(path, f'{head},\n "requests": [\n  {lines}\n ]\n}}\n')


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
                    f"{p}: line 1: missing column '{col}' (header is {_brief(','.join(header))}; "
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
                            f"got {_brief(row[ci_a])}"
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


def _request_runs(schedule: Schedule) -> list[list[list[int]]] | None:
    """The runs of each request as ``[start, end, completed]`` triples sorted by start, or None
    without a run record (SPEC section 6)."""
    if schedule.runs is None:
        return None
    n = schedule.instance.n
    out: list[list[list[int]]] = [[] for _ in range(n)]
    for req, p, end, done in sorted(schedule.runs.tolist(), key=lambda r: (r[0], r[1:])):
        if not 0 <= req < n:
            raise ValueError(
                f"cannot write schedule {schedule.policy!r}: a run names request index {req} "
                f"of an instance of {n} requests"
            )
        out[req].append([p, end, done])
    for i, rows in enumerate(out):
        if not rows:
            raise ValueError(
                f"cannot write schedule {schedule.policy!r}: request "
                f"{quote(schedule.instance.ids[i])} has no run in the run record"
            )
    return out


def schedule_to_dict(schedule: Schedule) -> dict[str, Any]:
    """The SPEC section 9 schedule JSON object (version 2) of ``schedule``.

    Parameters
    ----------
    schedule : Schedule
        Any schedule (feasible or not) of its instance.

    Returns
    -------
    dict
        ``format``, ``version`` (2), ``instance`` (its name), ``policy``, ``tel`` (rounds),
        ``makespan`` (rounds), ``peak_memory`` (tokens) and ``requests``: one object per
        request in instance order, ``{"id", "arrival", "start", "completion"}`` (rounds). With
        a run record (evicting policies, SPEC section 6) also ``evictions`` and
        ``wasted_tokens``, and a request whose runs are not just ``[start, completion, 1]`` gets
        ``runs``: every run as ``[start, end, completed]``, sorted by start.

    Raises
    ------
    ValueError
        The run record cannot be written: a run names a request index outside the instance,
        or a request has no run.

    Notes
    -----
    Source: SPEC section 9 (runs: SPEC section 6).
    """
    inst = schedule.instance
    per_request = _request_runs(schedule)
    requests = []
    for i in range(inst.n):
        p, c = int(schedule.start[i]), int(schedule.completion[i])
        r: dict[str, Any] = {"id": inst.ids[i], "arrival": int(inst.arrival[i]), "start": p}
        r["completion"] = c
        if per_request is not None and per_request[i] != [[p, c, 1]]:
            r["runs"] = per_request[i]
        requests.append(r)
    out: dict[str, Any] = {
        "format": SCHEDULE_FORMAT,
        "version": SCHEDULE_VERSION,
        "instance": inst.name,
        "policy": schedule.policy,
        "tel": schedule.tel,
        "makespan": schedule.makespan,
        "peak_memory": schedule.peak_memory,
    }
    if per_request is not None:
        out.update(evictions=schedule.evictions, wasted_tokens=schedule.wasted_tokens)
    out["requests"] = requests
    return out


def write_schedule(schedule: Schedule, path: str | os.PathLike[str]) -> None:
    """Write ``schedule`` as SPEC section 9 schedule JSON (version 2) to ``path``.

    One request per line, keys in a stable order (:func:`schedule_to_dict`). The write is
    atomic (:func:`atomic_write_text`).

    Raises
    ------
    WriteError
        The file cannot be written; the message names the path (the previous file, if any,
        intact).
    ValueError
        The schedule cannot be written (see :func:`schedule_to_dict`), before anything is
        written.
    """
    data = schedule_to_dict(schedule)
    reqs = data.pop("requests")
    head = json.dumps(data, indent=1)[:-2]
    lines = ",\n  ".join(json.dumps(r) for r in reqs)
    atomic_write_text(path, f'{head},\n "requests": [\n  {lines}\n ]\n}}\n')


def read_schedule(
    path: str | os.PathLike[str], instance: Instance, *, check: bool = True
) -> Schedule:
    """Read a schedule JSON file (version 2, or the version 1 of earlier lpsched) of ``instance``.

    Parameters
    ----------
    path : path-like
        The schedule JSON (SPEC section 9).
    instance : Instance
        The instance it schedules: its name must match the file's ``instance`` field, and in
        version 2 the request ids and arrivals must be the instance's, in its order.
    check : bool, default True
        Also refuse a schedule that breaks the model (a start before its arrival, a round
        over ``M``, inconsistent runs); False reads it as it is, for inspecting infeasible
        schedules (``lpsched check``).

    Returns
    -------
    Schedule
        With ``runs`` when the file has a run record (``evictions``, ``wasted_tokens`` or a
        request's ``runs``): in version 2 the rows are ordered by request, then as listed
        (``write_schedule`` lists a request's runs by start).

    Raises
    ------
    InstanceError
        Missing or malformed file, wrong format or version, an unknown key, a missing or
        mistyped field, a request whose id or arrival is not the instance's, or a derived
        value (``completion``, ``tel``, ``makespan``, ``peak_memory``, ``evictions``,
        ``wasted_tokens``) that disagrees with the starts; with ``check``, an infeasible
        schedule (the message says where). Every message names the file, and the request and
        field when there is one.

    Notes
    -----
    Source: SPEC section 9 (runs: SPEC section 6).
    """
    p = Path(path)
    try:
        data = load_json(p.read_text(encoding="utf-8-sig"), p)
    except FileNotFoundError:
        raise InstanceError(f"{p}: no such file") from None
    except IsADirectoryError:
        raise InstanceError(f"{p}: is a directory, not a schedule file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InstanceError(f"{p}: cannot read: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != SCHEDULE_FORMAT:
        raise InstanceError(f"{p}: field 'format' must be {SCHEDULE_FORMAT!r}")
    version = data.get("version", 1)
    if version not in (1, 2) or isinstance(version, bool):
        raise InstanceError(
            f"{p}: field 'version' is {_brief(version)}; this lpsched reads 1 and 2"
        )
    _unknown_keys(data, SCHEDULE_KEYS if version == 2 else SCHEDULE_KEYS_V1, str(p))
    if "instance" in data and data["instance"] != instance.name:
        raise InstanceError(
            f"{p}: field 'instance' is {quote(data['instance'])}, but the instance "
            f"given is {quote(instance.name)}"
        )
    policy = data.get("policy", "")
    if not isinstance(policy, str):
        raise InstanceError(f"{p}: field 'policy' must be a string, got {_brief(policy)}")
    if version == 1:
        start, runs = _v1_starts_and_runs(data, instance, str(p))
    else:
        start, runs = _v2_starts_and_runs(data, instance, str(p))
    sched = Schedule(instance, np.asarray(start, dtype=np.int64), policy=policy, runs=runs)
    derived: dict[str, Any] = {"tel": sched.tel}
    if version == 1:
        derived["completion"] = sched.completion.tolist()
    else:
        derived.update(makespan=sched.makespan, peak_memory=sched.peak_memory)
    derived.update(evictions=sched.evictions, wasted_tokens=sched.wasted_tokens)
    for key, value in derived.items():
        if key in data and not _same_ints(data[key], value):
            said = data[key]
            shown = "the list given" if isinstance(said, list) else _brief(said)
            raise InstanceError(
                f"{p}: field {key!r} is {shown}, but the starts"
                + (" and runs" if key in ("evictions", "wasted_tokens", "peak_memory") else "")
                + (" give start + decode length" if key == "completion" else f" give {value}")
            )
    if check:
        bad = sched.violations(limit=3)
        if bad:
            raise InstanceError(f"{p}: infeasible schedule: " + "; ".join(bad))
    return sched


def _start_field(value: Any, source: str, who: str, name: str = "start") -> int:
    """A round in ``[0, 2^40]`` read from a schedule, or raise naming the request and field."""
    v = int_field(value, source, who, name)
    if not 0 <= v <= MAX_VALUE:
        raise InstanceError(
            f"{source}: {who}: field {name!r} must be a round in [0, 2^40], got {v}"
        )
    return v


def _is_run_value(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and abs(v) <= 2 * MAX_VALUE


def _v1_starts_and_runs(
    data: dict[str, Any], instance: Instance, source: str
) -> tuple[list[int], np.ndarray | None]:
    """Version 1: a positional ``start`` list, ``runs`` rows ``[request, start, end, done]``."""
    start = data.get("start")
    if not isinstance(start, list) or len(start) != instance.n:
        raise InstanceError(f"{source}: field 'start' must list {instance.n} integers")
    values = [
        _start_field(x, source, f"request {quote(instance.ids[i])}") for i, x in enumerate(start)
    ]
    runs = data.get("runs")
    if runs is None:
        return values, None
    if not (
        isinstance(runs, list)
        and all(
            isinstance(r, list) and len(r) == 4 and all(_is_run_value(v) for v in r) for r in runs
        )
    ):
        raise InstanceError(
            f"{source}: field 'runs' must list [request, start, end, completed] rows of "
            "integers (rounds up to 2^41)"
        )
    if not runs:
        raise InstanceError(
            f"{source}: field 'runs' is empty; leave it out for a schedule without evictions"
        )
    for k, row in enumerate(runs):
        if not 0 <= row[0] < instance.n:
            raise InstanceError(
                f"{source}: field 'runs', row {k}: request index {row[0]} is not in "
                f"0..{instance.n - 1}"
            )
        if row[3] not in (0, 1):
            raise InstanceError(
                f"{source}: field 'runs', row {k}: completed must be 0 (cut short) or 1, "
                f"got {row[3]!r}"
            )
    return values, np.asarray(runs, dtype=np.int64).reshape(-1, 4)


def _v2_starts_and_runs(
    data: dict[str, Any], instance: Instance, source: str
) -> tuple[list[int], np.ndarray | None]:
    """Version 2: one object per request (id, arrival, start, completion, runs), checked
    against the instance."""
    reqs = data.get("requests")
    if not isinstance(reqs, list):
        raise InstanceError(f"{source}: field 'requests' must be a list (missing or not a list)")
    if len(reqs) != instance.n:
        raise InstanceError(
            f"{source}: field 'requests' lists {len(reqs)} requests, but instance "
            f"{quote(instance.name)} has {instance.n}"
        )
    starts: list[int] = []
    rows: list[list[int]] = []
    with_runs = "evictions" in data or "wasted_tokens" in data
    for pos, r in enumerate(reqs):
        if not isinstance(r, dict):
            raise InstanceError(f"{source}: request at position {pos} is not an object")
        rid = r.get("id")
        if "id" not in r or isinstance(rid, bool) or not isinstance(rid, (str, int)):
            raise InstanceError(
                f"{source}: request at position {pos}: field 'id' must be a string or an "
                f"integer, got {'nothing' if 'id' not in r else _brief(rid)}"
            )
        if str(rid) != instance.ids[pos]:
            raise InstanceError(
                f"{source}: request at position {pos}: field 'id' is {quote(str(rid))}, but "
                f"the instance has {quote(instance.ids[pos])} there (requests are listed in "
                "instance order)"
            )
        who = f"request {quote(instance.ids[pos])}"
        _unknown_keys(r, SCHEDULE_REQUEST_KEYS, source, who)
        if "start" not in r:
            raise InstanceError(f"{source}: {who}: missing field 'start'")
        p = _start_field(r["start"], source, who)
        o = int(instance.decode[pos])
        for key, value, why in (
            ("arrival", int(instance.arrival[pos]), "the instance says"),
            ("completion", p + o, f"start {p} + decode length {o} give"),
        ):
            if key in r and not _same_ints(r[key], value):
                raise InstanceError(
                    f"{source}: {who}: field {key!r} is {_brief(r[key])}, but {why} {value}"
                )
        starts.append(p)
        runs = r.get("runs", [[p, p + o, 1]])
        with_runs = with_runs or "runs" in r
        if not (
            isinstance(runs, list)
            and all(
                isinstance(x, list)
                and len(x) == 3
                and all(_is_run_value(v) for v in x)
                and x[2] in (0, 1)
                for x in runs
            )
            and runs
        ):
            raise InstanceError(
                f"{source}: {who}: field 'runs' must list one or more [start, end, completed] "
                "triples of integers (rounds up to 2^41; completed 0 or 1)"
            )
        rows += [[pos, *x] for x in runs]
    return starts, np.asarray(rows, dtype=np.int64).reshape(-1, 4) if with_runs else None


def _same_ints(said: Any, value: int | list[int]) -> bool:
    """Whether a value read from JSON is the integer (or list of integers) ``value``; integral
    floats count (``5.0``), booleans do not."""
    if isinstance(value, list):
        return (
            isinstance(said, list)
            and len(said) == len(value)
            and all(_same_ints(x, v) for x, v in zip(said, value, strict=True))
        )
    return not isinstance(said, bool) and isinstance(said, (int, float)) and said == value


def write_priorities(
    instance: Instance, order: Sequence[int] | np.ndarray, path: str | os.PathLike[str]
) -> None:
    """Write each request's position in a priority list as JSON Lines, for a serving engine.

    Parameters
    ----------
    instance : Instance
        The instance the list orders (its request ids are written).
    order : sequence of int, shape (n,)
        The priority list: request indices, first to run first (a permutation of ``range(n)``).
    path : path-like
        The file to write (whole or not at all, :func:`atomic_write_text`).

    Raises
    ------
    ValueError
        ``order`` is not a permutation of ``range(n)``.
    WriteError
        The file cannot be written.

    Notes
    -----
    One line per request, in instance order: ``{"id": ..., "priority": k}`` with ``k`` the
    request's position in ``order`` (0 first), so lower runs first, as vLLM's ``priority``
    scheduling policy takes a request's ``priority`` field. Source: ours.
    """
    lst = np.asarray(order)
    n = instance.n
    if (
        lst.shape != (n,)
        or lst.dtype.kind not in "iu"
        or not np.array_equal(np.sort(lst), np.arange(n))
    ):
        raise ValueError(f"a priority list must name each of the {n} request indices once")
    position = np.empty(n, dtype=np.int64)
    position[lst] = np.arange(n)
    lines = (
        json.dumps({"id": rid, "priority": int(k)})
        for rid, k in zip(instance.ids, position.tolist(), strict=True)
    )
    atomic_write_text(path, "".join(line + "\n" for line in lines))
