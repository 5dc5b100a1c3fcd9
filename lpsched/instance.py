"""Problem data: requests and instances, validated once (file formats: :mod:`lpsched.io`).

An instance (SPEC section 1) is one worker with a KV-cache budget of ``M`` tokens and ``n``
requests; request ``i`` has a prefill length ``s_i >= 0``, a decode length ``o_i >= 1``, an
arrival round ``a_i >= 0``, optionally a prediction interval ``l_i <= o_i <= u_i`` and
optionally an arrival time ``alpha_i >= 0`` in seconds (``arrival_s``, SPEC section 10). Every
value but ``alpha_i`` is an integer and ``s_i + o_i <= M`` must hold, or no schedule exists.

The data are stored as read-only numpy arrays (structure of arrays, as PyVRP does), so that the
executor and the formulations can work on a million requests without per-request objects.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, cast

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    # An integer column as the constructor takes it: anything array-like, validated and frozen
    # into a read-only int64 array (entries that are None or not integers raise InstanceError).
    _Column = ArrayLike | Sequence[int | None]

MAX_VALUE = 2**40  # tokens or rounds; larger is a data error, and it keeps every sum in int64

__all__ = [
    "MAX_VALUE",
    "InstanceError",
    "Request",
    "Instance",
    "int_field",
    "is_int",
    "quote",
    "one_line",
    "OptionError",
    "read_only_int64",
]


def quote(text: Any) -> str:
    """``text`` quoted for an error message, with ``repr``-style escapes.

    Every message that echoes user text (a request id, a name, a key or a value read from a
    file) quotes it with this helper, so that a newline, a terminal escape sequence or any other
    non-printable character in the input prints as ``\\n``, ``\\x1b`` ... and a message stays
    one line that cannot drive the terminal.

    Parameters
    ----------
    text : object
        The text (anything else is converted with ``str``).

    Returns
    -------
    str
        ``repr(str(text))``: ``'r1'`` for ``r1``, ``'a\\nb'`` for a newline, ``"it's"`` for a quote.

    Notes
    -----
    Source: ours.
    """
    return repr(str(text))


def one_line(text: str) -> str:
    """``text`` with every non-printable character escaped (``\\n``, ``\\x1b``, ...), so that a
    message or a table cell prints as one line and cannot send terminal escape sequences.

    Text quoted with :func:`quote` is already escaped and passes unchanged. Source: ours.
    """
    return "".join(
        c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text
    )


class InstanceError(ValueError):
    """Bad instance data: the message names the file, the request (or row) and the field.

    Raised by every reader and by :class:`Instance` validation. It is a ``ValueError``, so
    callers that catch ``ValueError`` see it too. Source: ours.
    """


class OptionError(ValueError):
    """Arguments that do not go together, or a value refused before any work is done.

    The message names the arguments as the command line's options (``--trace``); the command
    line reports it as a usage error (exit code 2), naming :attr:`option` when it is set.
    Source: ours.

    Parameters
    ----------
    message : str
    option : str, optional
        The one option at fault (``"--workload"``), if there is one.
    """

    def __init__(self, message: str, option: str | None = None) -> None:
        super().__init__(message)
        self.option = option


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
    arrival_s : float or None
        Arrival time ``alpha_i >= 0`` in seconds, read by the online executors under a time
        model (SPEC section 10); None when the instance has no arrivals in seconds.

    Notes
    -----
    Source: SPEC section 1 (the seed paper, arXiv 2508.06133, section 2); ``arrival_s``: SPEC
    section 10.
    """

    id: str
    prefill: int
    decode: int
    arrival: int = 0
    decode_lo: int | None = None
    decode_hi: int | None = None
    arrival_s: float | None = None

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
                int_field(v, where, f"request at position {i}", name)
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
                f"got {arr[i].item()!r}"
            )
    elif arr.dtype.kind not in "iu" and arr.size:
        raise InstanceError(f"{where}: field '{name}' must hold integers, got dtype {arr.dtype}")
    if arr.size and np.abs(arr).max() > MAX_VALUE:
        i = int(np.argmax(np.abs(arr)))
        raise InstanceError(
            f"{where}: request at position {i}: field '{name}' is too large "
            f"(> 2^40), got {arr[i].item()!r}"
        )
    return read_only_int64(arr)


def read_only_int64(values: np.ndarray) -> np.ndarray:
    """A read-only int64 copy of ``values`` (checked integers: the arrays of an instance, the
    starts and runs of a schedule).

    Parameters
    ----------
    values : ndarray
        Integer values that fit in int64 (checked by the caller).

    Returns
    -------
    ndarray of int64
        Same shape, not writeable. Source: ours.
    """
    out = values.astype(np.int64, copy=True)
    out.setflags(write=False)
    return out


def _seconds(values: Any, n: int, ids: Sequence[str], where: str) -> np.ndarray:
    """Arrival times ``alpha_i`` (seconds) as a read-only float64 array of shape (n,), each
    finite, ``>= 0`` and at most ``MAX_VALUE``; else :class:`InstanceError` naming the source,
    the request and the field ``arrival_s``. A value that is not a real number (a string such as
    ``"0.5"``, a boolean, a complex number, None) is refused, as the file reader refuses it, not
    converted. Source: ours (SPEC section 10)."""
    try:
        raw = np.asarray(values)
    except (TypeError, ValueError):  # ragged
        raw = None
    if raw is not None and raw.ndim == 1 and raw.shape[0] == n and raw.dtype.kind not in "iuf":
        for i, x in enumerate(raw.tolist()):
            if isinstance(x, bool) or not isinstance(x, (int, float)):
                raise InstanceError(
                    f"{where}: request {quote(ids[i])}: field 'arrival_s' must be a number of "
                    f"seconds, got {x!r}"
                )
    try:
        arr = np.array(values, dtype=np.float64)
    except (TypeError, ValueError):
        arr = None
    if arr is None or arr.ndim != 1:
        raise InstanceError(
            f"{where}: field 'arrival_s' must be a one-dimensional sequence of numbers "
            "(seconds), one a request"
        )
    if arr.shape[0] != n:
        raise InstanceError(
            f"{where}: field 'arrival_s' has {arr.shape[0]} values for {n} requests"
        )
    with np.errstate(invalid="ignore"):
        bad = ~(np.isfinite(arr) & (arr >= 0) & (arr <= MAX_VALUE))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InstanceError(
            f"{where}: request {quote(ids[i])}: field 'arrival_s' must be a finite number of "
            f"seconds in [0, 2^40], got {arr[i].item()!r}"
        )
    arr.setflags(write=False)
    return arr


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
    arrival_s : array_like of float, shape (n,), optional
        Arrival times ``alpha_i`` in seconds (finite, ``>= 0``) on the clock of a time model
        (``tau(0) = 0``, SPEC section 10). Without a time model every policy admits by the
        arrival rounds ``a_i``; under one the online executors (``online-*``, ``vllm``,
        ``vllm-sf``) admit by ``alpha_i`` instead (:mod:`lpsched.policies.online`). None
        (default): no arrivals in seconds.

    Raises
    ------
    InstanceError
        If a value is negative, not an integer, NaN, a decode length is 0, an id repeats,
        the interval is inconsistent, ``s_i + o_i > M`` for some request, or an ``arrival_s``
        is negative, NaN or infinite. The message names the source, the request id and the
        field.

    Notes
    -----
    Source: SPEC section 1 (``arrival_s``: section 10); the arrays-of-structure layout is ours
    (speed at n = 10^6).
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
    arrival_s: np.ndarray | None = None

    if TYPE_CHECKING:
        # The generated constructor: it takes array-likes, __post_init__ freezes them.
        def __init__(
            self,
            memory: int,
            prefill: _Column,
            decode: _Column,
            arrival: _Column,
            ids: Iterable[str],
            decode_lo: _Column | None = None,
            decode_hi: _Column | None = None,
            name: str = "instance",
            metadata: Mapping[str, Any] = ...,
            source: str = "<memory>",
            arrival_s: ArrayLike | None = None,
        ) -> None: ...

    def __post_init__(self) -> None:
        where = self.source
        set_ = object.__setattr__
        if not is_int(self.memory):
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
            for dup in ids:  # the first id seen before
                if dup in seen:
                    break
                seen.add(dup)
            raise InstanceError(f"{where}: request {quote(dup)}: field 'id' is not unique")
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
                    f"{where}: request {quote(ids[i])}: field '{name}' {what}, got {int(value)}"
                    + (f" (prefill {int(self.prefill[i])})" if "prefill" in what else "")
                )
        over = np.flatnonzero(self.prefill + self.decode > self.memory)
        if over.size:
            i = int(over[0])
            raise InstanceError(
                f"{where}: request {quote(ids[i])}: fields 'prefill' + 'decode' = "
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
        if self.arrival_s is not None:
            set_(self, "arrival_s", _seconds(self.arrival_s, n, ids, where))

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
        arrival_s: Sequence[float] | np.ndarray | None = None,
    ) -> Instance:
        """Build an instance from length arrays (shape (n,), tokens; arrivals in rounds, and
        optionally ``arrival_s`` in seconds).

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
            arrival_s=arrival_s,
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
        has_seconds = any(r.arrival_s is not None for r in reqs)
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
            arrival_s=[cast(float, r.arrival_s) for r in reqs] if has_seconds else None,
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
            arrival_s=None if self.arrival_s is None else float(self.arrival_s[i]),
        )

    def __iter__(self):
        return (self[i] for i in range(self.n))

    def __repr__(self) -> str:
        return f"Instance(name={self.name!r}, n={self.n}, memory={self.memory})"

    def replace(self, **changes: Any) -> Instance:
        """A validated copy with some fields changed (e.g. ``memory=...``, ``arrival=...``,
        ``arrival_s=None``)."""
        return replace(self, **changes)  # __post_init__ validates again and copies metadata

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
            arrival_s=pick(self.arrival_s),
        )


def is_int(value: Any) -> bool:
    """Whether ``value`` is an integer, Python's or numpy's; a boolean is not (ours: the one
    integer test of the option and field checks, so ``True`` is never a count)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


_NUMBER_TEXT = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?")


def _text_int(text: str) -> int | None:
    """The integer a decimal text such as ``812``, ``812.0`` or ``8.12e2`` denotes exactly; None
    if it is not a number or not an integer (``812.5``, ``1.0000000000000000001``). Exact (no
    float rounding) and cheap for any length; a value beyond ``10^13`` comes back as
    ``MAX_VALUE + 1`` (too large, whatever it is)."""
    match = _NUMBER_TEXT.fullmatch(text)
    if match is None or not (match[2] or match[3]):
        return None
    sign, whole, frac, exp = match[1], match[2], match[3] or "", match[4] or "0"
    digits = (whole + frac).lstrip("0")
    core = digits.rstrip("0")
    if not core:
        return 0
    e = int(exp) if len(exp.lstrip("+-")) <= 7 else (10**7 if exp[0] != "-" else -(10**7))
    shift = e - len(frac) + (len(digits) - len(core))  # value = core * 10^shift
    if shift < 0:
        return None
    if len(core) + shift > 13:
        return MAX_VALUE + 1
    value = int(core) * 10**shift
    return -value if sign == "-" else value


def int_field(value: Any, source: str, who: str, name: str, text_ok: bool = False) -> int:
    """Coerce one value read from a file to an integer, or raise naming source, request, field.

    Parameters
    ----------
    value : object
        A JSON number, or with ``text_ok`` a CSV field (text). Integer-valued floats (``812.0``,
        ``"8.12e2"``) are accepted; booleans, NaN, infinities and fractions are not. Text is
        read exactly (``"812.0000000000000001"`` is a fraction, not 812).
    source : str
        The file (or ``"<memory>"``) named in the error.
    who : str
        The request or row named in the error (``"request 'r3'"``, ``"line 7"``).
    name : str
        The field named in the error.
    text_ok : bool, default False
        Accept text (CSV fields).

    Returns
    -------
    int
        The value, ``|value| <= MAX_VALUE`` (2^40 tokens or rounds).

    Raises
    ------
    InstanceError
        Not an integer, or too large.

    Notes
    -----
    Source: ours (one coercion rule for every reader, so every error reads alike).
    """
    out: int | None = None
    if is_int(value):
        out = int(value)
    elif isinstance(value, float) and math.isfinite(value) and value == int(value):
        out = int(value)
    elif isinstance(value, str) and text_ok:
        out = _text_int(value.strip())
    shown = repr(value)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    if out is None:
        raise InstanceError(f"{source}: {who}: field '{name}' must be an integer, got {shown}")
    if abs(out) > MAX_VALUE:
        raise InstanceError(f"{source}: {who}: field '{name}' is too large, got {shown}")
    return out
