"""Problem data: requests and instances, validated once, read from and written to files.

An instance (SPEC section 1) is one worker with a KV-cache budget of ``M`` tokens and ``n``
requests; request ``i`` has a prefill length ``s_i >= 0``, a decode length ``o_i >= 1``, an
arrival round ``a_i >= 0`` and optionally a prediction interval ``l_i <= o_i <= u_i``. Every
value is an integer and ``s_i + o_i <= M`` must hold, or no schedule exists.

The data are stored as read-only numpy arrays (structure of arrays, as PyVRP does), so that the
executor and the formulations can work on a million requests without per-request objects.
"""

from __future__ import annotations

import csv
import json
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

MAX_VALUE = 2**40  # tokens or rounds; larger is a data error, and it keeps every sum in int64
INSTANCE_FORMAT = "lpsched/instance"
INSTANCE_VERSION = 1

__all__ = [
    "InstanceError",
    "Request",
    "Instance",
    "read_instance",
    "write_instance",
    "read_trace_csv",
]


class InstanceError(ValueError):
    """Bad instance data: the message names the file, the request (or row) and the field.

    Raised by every reader and by :class:`Instance` validation. It is a ``ValueError``, so
    callers that catch ``ValueError`` see it too. Source: ours.
    """


@dataclass(frozen=True)
class Request:
    """One request, a read-only view of a row of an :class:`Instance`.

    Attributes
    ----------
    id : str
        Request identifier (unique within the instance).
    prefill : int
        Prefill (prompt) length ``s_i`` in tokens, ``>= 0``.
    decode : int
        Decode (output) length ``o_i`` in tokens (= rounds of processing), ``>= 1``.
    arrival : int
        Arrival round ``a_i >= 0`` (0 in the offline problem).
    decode_lo, decode_hi : int or None
        Prediction interval ``l_i <= o_i <= u_i`` for the decode length (SPEC section 6).

    Notes
    -----
    Source: SPEC section 1 (the seed paper, arXiv 2508.06133, section 2).
    """

    id: str
    prefill: int
    decode: int
    arrival: int = 0
    decode_lo: int | None = None
    decode_hi: int | None = None

    @property
    def size(self) -> int:
        """Peak KV-cache footprint ``s_i + o_i`` in tokens."""
        return self.prefill + self.decode


def _frozen(values: Any, name: str, where: str) -> np.ndarray:
    try:
        arr = np.asarray(values)
    except OverflowError:
        arr = np.asarray(values, dtype=object)
    if arr.dtype == object and arr.size:
        arr = np.asarray(
            [
                _int_field(v, where, f"request at position {i}", name)
                for i, v in enumerate(arr.tolist())
            ],
            dtype=np.int64,
        )
    if arr.ndim != 1:
        raise InstanceError(f"{where}: field '{name}' must be a one-dimensional sequence")
    if arr.dtype.kind == "f":
        bad = ~np.isfinite(arr) | (arr != np.round(arr))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InstanceError(
                f"{where}: request at position {i}: field '{name}' must be an integer, "
                f"got {arr[i]!r}"
            )
    elif arr.dtype.kind not in "iu" and arr.size:
        raise InstanceError(f"{where}: field '{name}' must hold integers, got dtype {arr.dtype}")
    if arr.size and np.abs(arr).max() > MAX_VALUE:
        i = int(np.argmax(np.abs(arr)))
        raise InstanceError(
            f"{where}: request at position {i}: field '{name}' is too large, got {arr[i]!r}"
        )
    out = arr.astype(np.int64, copy=True)
    out.setflags(write=False)
    return out


@dataclass(frozen=True, eq=False)
class Instance:
    """An offline or online instance: KV-cache budget ``M`` and ``n`` requests.

    Build it with :meth:`from_requests`, :meth:`from_arrays` or the readers; the constructor
    validates everything once and freezes the arrays.

    Parameters
    ----------
    memory : int
        KV-cache budget ``M`` in tokens.
    prefill, decode, arrival : array_like of int, shape (n,)
        ``s_i`` (tokens), ``o_i`` (tokens = rounds) and ``a_i`` (rounds).
    ids : sequence of str, length n
        Unique request identifiers.
    decode_lo, decode_hi : array_like of int, shape (n,), optional
        Prediction interval ``l_i <= o_i <= u_i`` (both or neither).
    name : str
        Instance name (used in tables and schedule files).
    metadata : dict
        Free-form provenance (source, seed, generator parameters).
    source : str
        Where the data came from (a file path or ``"<memory>"``), used in error messages.

    Raises
    ------
    InstanceError
        If a value is negative, not an integer, NaN, a decode length is 0, an id repeats,
        the interval is inconsistent, or ``s_i + o_i > M`` for some request. The message names
        the source, the request id and the field.

    Notes
    -----
    Source: SPEC section 1; the arrays-of-structure layout is ours (speed at n = 10^6).
    """

    memory: int
    prefill: np.ndarray
    decode: np.ndarray
    arrival: np.ndarray
    ids: tuple[str, ...]
    decode_lo: np.ndarray | None = None
    decode_hi: np.ndarray | None = None
    name: str = "instance"
    metadata: Mapping[str, Any] = field(default_factory=dict)
    source: str = "<memory>"

    def __post_init__(self) -> None:
        where = self.source
        set_ = object.__setattr__
        if isinstance(self.memory, bool) or not _is_int(self.memory):
            raise InstanceError(f"{where}: field 'memory' must be an integer, got {self.memory!r}")
        set_(self, "memory", int(self.memory))
        if self.memory <= 0:
            raise InstanceError(f"{where}: field 'memory' must be positive, got {self.memory}")
        if self.memory > MAX_VALUE:
            raise InstanceError(f"{where}: field 'memory' is too large (> 2^40), got {self.memory}")
        for name in ("prefill", "decode", "arrival"):
            set_(self, name, _frozen(getattr(self, name), name, where))
        n = self.prefill.shape[0]
        if isinstance(self.ids, (str, bytes)) or not isinstance(self.ids, Iterable):
            raise InstanceError(f"{where}: field 'ids' must be a sequence of strings")
        ids = tuple(str(x) for x in self.ids)
        set_(self, "ids", ids)
        if len(ids) != n or self.decode.shape[0] != n or self.arrival.shape[0] != n:
            raise InstanceError(f"{where}: ids, prefill, decode and arrival differ in length")
        if n == 0:
            raise InstanceError(f"{where}: the instance has no requests")
        if len(set(ids)) != n:
            seen: set[str] = set()
            dup = next(x for x in ids if x in seen or seen.add(x))
            raise InstanceError(f"{where}: request '{dup}': field 'id' is not unique")
        if (self.decode_lo is None) != (self.decode_hi is None):
            raise InstanceError(f"{where}: give both 'decode_lo' and 'decode_hi' or neither")
        checks = [
            ("prefill", self.prefill < 0, "must be >= 0"),
            ("decode", self.decode < 1, "must be >= 1"),
            ("arrival", self.arrival < 0, "must be >= 0"),
        ]
        if self.decode_lo is not None:
            for name in ("decode_lo", "decode_hi"):
                set_(self, name, _frozen(getattr(self, name), name, where))
                if getattr(self, name).shape[0] != n:
                    raise InstanceError(
                        f"{where}: field '{name}' has {getattr(self, name).size} "
                        f"values for {n} requests"
                    )
            checks += [
                ("decode_lo", self.decode_lo < 1, "must be >= 1"),
                ("decode_lo", self.decode_lo > self.decode, "must be <= decode"),
                ("decode_hi", self.decode_hi < self.decode, "must be >= decode"),
                (
                    "decode_hi",
                    self.prefill + self.decode_hi > self.memory,
                    f"plus prefill must be <= memory M = {self.memory}",
                ),
            ]
        for name, bad, what in checks:
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                value = getattr(self, name)[i]
                raise InstanceError(
                    f"{where}: request '{ids[i]}': field '{name}' {what}, got {int(value)}"
                    + (f" (prefill {int(self.prefill[i])})" if "prefill" in what else "")
                )
        over = np.flatnonzero(self.prefill + self.decode > self.memory)
        if over.size:
            i = int(over[0])
            raise InstanceError(
                f"{where}: request '{ids[i]}': fields 'prefill' + 'decode' = "
                f"{int(self.prefill[i])} + {int(self.decode[i])} exceed memory M = {self.memory} "
                "(no schedule exists)"
            )
        horizon = int(self.arrival.max()) + int(self.decode.sum())
        if horizon > MAX_VALUE or n * self.memory > 2**62:
            raise InstanceError(
                f"{where}: the instance is too large for exact integer arithmetic (last arrival + "
                f"sum of decode lengths = {horizon} rounds; n * M = {n * self.memory})"
            )
        if not isinstance(self.metadata, Mapping):
            raise InstanceError(f"{where}: field 'metadata' must be an object")
        set_(self, "metadata", dict(self.metadata))

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_arrays(
        cls,
        prefill: Sequence[int] | np.ndarray,
        decode: Sequence[int] | np.ndarray,
        memory: int,
        arrival: Sequence[int] | np.ndarray | None = None,
        *,
        ids: Sequence[str] | None = None,
        decode_lo: Sequence[int] | np.ndarray | None = None,
        decode_hi: Sequence[int] | np.ndarray | None = None,
        name: str = "instance",
        metadata: Mapping[str, Any] | None = None,
        source: str = "<memory>",
    ) -> Instance:
        """Build an instance from length arrays (shape (n,), tokens; arrivals in rounds).

        ``ids`` default to ``r0 .. r{n-1}``, ``arrival`` to all zeros. Raises
        :class:`InstanceError` on invalid data (see :class:`Instance`).
        """
        try:
            n = len(prefill)
        except TypeError:
            raise InstanceError(
                f"{source}: field 'prefill' must be a sequence of integers"
            ) from None
        return cls(
            memory=memory,
            prefill=prefill,
            decode=decode,
            arrival=np.zeros(n, dtype=np.int64) if arrival is None else arrival,
            ids=tuple(f"r{i}" for i in range(n)) if ids is None else tuple(ids),
            decode_lo=decode_lo,
            decode_hi=decode_hi,
            name=name,
            metadata=metadata or {},
            source=source,
        )

    @classmethod
    def from_requests(
        cls,
        requests: Iterable[Request],
        memory: int,
        *,
        name: str = "instance",
        metadata: Mapping[str, Any] | None = None,
    ) -> Instance:
        """Build an instance from :class:`Request` objects. Raises :class:`InstanceError`."""
        reqs = list(requests)
        has_interval = any(r.decode_lo is not None for r in reqs)
        return cls(
            memory=memory,
            prefill=[r.prefill for r in reqs],
            decode=[r.decode for r in reqs],
            arrival=[r.arrival for r in reqs],
            ids=tuple(r.id for r in reqs),
            decode_lo=[r.decode_lo for r in reqs] if has_interval else None,
            decode_hi=[r.decode_hi for r in reqs] if has_interval else None,
            name=name,
            metadata=metadata or {},
        )

    # ------------------------------------------------------------------ views
    @property
    def n(self) -> int:
        """Number of requests ``n``."""
        return int(self.prefill.shape[0])

    @property
    def size(self) -> np.ndarray:
        """Peak footprint ``s_i + o_i`` per request, shape (n,), tokens."""
        return self.prefill + self.decode

    @property
    def offline(self) -> bool:
        """True when every request arrives at round 0."""
        return not bool(self.arrival.any())

    @property
    def has_intervals(self) -> bool:
        """True when the instance carries prediction intervals ``[l_i, u_i]``."""
        return self.decode_lo is not None

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> Request:
        return Request(
            id=self.ids[i],
            prefill=int(self.prefill[i]),
            decode=int(self.decode[i]),
            arrival=int(self.arrival[i]),
            decode_lo=None if self.decode_lo is None else int(self.decode_lo[i]),
            decode_hi=None if self.decode_hi is None else int(self.decode_hi[i]),
        )

    def __iter__(self):
        return (self[i] for i in range(self.n))

    def __repr__(self) -> str:
        return f"Instance(name={self.name!r}, n={self.n}, memory={self.memory})"

    def replace(self, **changes: Any) -> Instance:
        """A validated copy with some fields changed (e.g. ``memory=...``, ``arrival=...``)."""
        fields = dict(
            memory=self.memory,
            prefill=self.prefill,
            decode=self.decode,
            arrival=self.arrival,
            ids=self.ids,
            decode_lo=self.decode_lo,
            decode_hi=self.decode_hi,
            name=self.name,
            metadata=dict(self.metadata),
            source=self.source,
        )
        fields.update(changes)
        return Instance(**fields)

    def subset(self, index: Sequence[int] | np.ndarray, name: str | None = None) -> Instance:
        """The instance restricted to the requests ``index`` (in that order)."""
        idx = np.asarray(index)
        if idx.ndim != 1 or (idx.size and idx.dtype.kind not in "iu"):
            raise ValueError("subset index must be a one-dimensional array of integers")
        if idx.size and (idx.min() < -self.n or idx.max() >= self.n):
            raise ValueError(f"subset index out of range for {self.n} requests")

        def pick(a: np.ndarray | None) -> np.ndarray | None:
            return None if a is None else a[idx]

        return self.replace(
            prefill=self.prefill[idx],
            decode=self.decode[idx],
            arrival=self.arrival[idx],
            ids=tuple(self.ids[i] for i in idx),
            decode_lo=pick(self.decode_lo),
            decode_hi=pick(self.decode_hi),
            name=name or self.name,
        )

    # ------------------------------------------------------------------ serialisation
    def to_dict(self) -> dict[str, Any]:
        """The SPEC section 9 instance JSON object (``arrival`` always written)."""
        reqs = []
        for i in range(self.n):
            r: dict[str, Any] = {
                "id": self.ids[i],
                "prefill": int(self.prefill[i]),
                "decode": int(self.decode[i]),
                "arrival": int(self.arrival[i]),
            }
            if self.decode_lo is not None:
                r["decode_lo"] = int(self.decode_lo[i])
                r["decode_hi"] = int(self.decode_hi[i])
            reqs.append(r)
        return {
            "format": INSTANCE_FORMAT,
            "version": INSTANCE_VERSION,
            "name": self.name,
            "memory": self.memory,
            "requests": reqs,
            "metadata": dict(self.metadata),
        }

    @classmethod
    def from_dict(cls, data: Any, source: str = "<memory>") -> Instance:
        """Parse a SPEC section 9 instance object. Raises :class:`InstanceError`."""
        if not isinstance(data, dict):
            raise InstanceError(f"{source}: expected a JSON object with 'memory' and 'requests'")
        for key, kind in (("name", str), ("metadata", dict)):
            if key in data and not isinstance(data[key], kind):
                raise InstanceError(
                    f"{source}: field '{key}' must be a JSON "
                    f"{'string' if kind is str else 'object'}"
                )
        fmt = data.get("format", INSTANCE_FORMAT)
        if fmt != INSTANCE_FORMAT:
            raise InstanceError(
                f"{source}: field 'format' is {fmt!r}, expected {INSTANCE_FORMAT!r}"
            )
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
                cols[key].append(_int_field(r[key], source, f"request '{rid}'", key))
        return cls(
            memory=_int_field(data["memory"], source, "instance", "memory"),
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


def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


_INT_TEXT = re.compile(r"[+-]?[0-9]+")
_FLOAT_TEXT = re.compile(r"[+-]?([0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)([eE][+-]?[0-9]+)?")


def _int_field(value: Any, source: str, who: str, name: str, text_ok: bool = False) -> int:
    """Coerce one JSON number (or, with ``text_ok``, one CSV field) to int, or raise naming the
    source, request and field. Integer-valued floats (``812.0``) are accepted."""
    out: int | None = None
    if _is_int(value):
        out = int(value)
    elif isinstance(value, float) and math.isfinite(value) and value == int(value):
        out = int(value)
    elif isinstance(value, str) and text_ok:
        text = value.strip()
        if _INT_TEXT.fullmatch(text):
            out = int(text)
        elif _FLOAT_TEXT.fullmatch(text):
            f = float(text)
            if math.isfinite(f) and f == int(f):
                out = int(f)
    if out is None:
        raise InstanceError(f"{source}: {who}: field '{name}' must be an integer, got {value!r}")
    if abs(out) > MAX_VALUE:
        raise InstanceError(f"{source}: {who}: field '{name}' is too large, got {value!r}")
    return out


def read_instance(path: str | os.PathLike[str]) -> Instance:
    """Read an instance JSON file (SPEC section 9).

    Parameters
    ----------
    path : path-like
        The instance file (a trace CSV has no memory budget: see :func:`read_trace_csv` and
        :func:`lpsched.workloads.from_traces`).

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
    return Instance.from_dict(load_json(text, p), source=str(p))


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
    data = instance.to_dict()
    reqs = data.pop("requests")
    head = json.dumps(data, indent=1)[:-2]
    lines = ",\n  ".join(json.dumps(r) for r in reqs)
    Path(path).write_text(f'{head},\n "requests": [\n  {lines}\n ]\n}}\n', encoding="utf-8")


TRACE_PREFILL = "num_prefill_tokens"
TRACE_DECODE = "num_decode_tokens"
TRACE_ARRIVAL = "arrived_at"


def read_trace_csv(
    path: str | os.PathLike[str], *, with_lines: bool = False
) -> tuple[np.ndarray, ...]:
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
                sv = _int_field(row[ci_s], str(p), who, TRACE_PREFILL, text_ok=True)
                ov = _int_field(row[ci_o], str(p), who, TRACE_DECODE, text_ok=True)
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
