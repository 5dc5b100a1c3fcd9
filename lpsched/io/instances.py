"""Instance JSON (SPEC section 9): the format's keys, the object of an instance and back, and
the instance file reader and writer."""

from __future__ import annotations

import json
import os
from importlib import resources
from pathlib import Path
from typing import Any

from ..instance import Instance, InstanceError, OptionError, int_field, quote
from ._common import brief, unknown_keys
from .atomic import atomic_write_text
from .json_text import first_nonfinite, load_json, read_text

__all__ = [
    "INSTANCE_KEYS",
    "REQUEST_KEYS",
    "INSTANCE_FORMAT",
    "INSTANCE_VERSION",
    "instance_to_dict",
    "instance_from_dict",
    "read_instance",
    "write_instance",
    "default_instance",
    "DEFAULT_INSTANCE_SPEC",
    "check_output",
]

#: The generator call of the shipped default instance (``lpsched/data/default.json``, copied to
#: ``instances/default.json`` for reading): the paper's setting (arXiv 2508.06133, section 6).
DEFAULT_INSTANCE_SPEC: dict[str, Any] = {
    "workload": "paper-mix",
    "n": 2000,
    "memory": 16492,
    "seed": 0,
}

INSTANCE_FORMAT = "lpsched/instance"
INSTANCE_VERSION = 1
#: The keys of an instance JSON object and of one request (SPEC section 9); any other key is an
#: error, except under ``metadata`` (free-form).
INSTANCE_KEYS = ("format", "version", "name", "memory", "requests", "metadata")
REQUEST_KEYS = ("id", "prefill", "decode", "arrival", "decode_lo", "decode_hi", "arrival_s")


def instance_to_dict(instance: Instance) -> dict[str, Any]:
    """The SPEC section 9 instance JSON object of ``instance`` (``arrival`` always written;
    ``arrival_s``, seconds, when the instance has arrivals in seconds, SPEC section 10).

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
        if instance.arrival_s is not None:
            r["arrival_s"] = float(instance.arrival_s[i])
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
        Validated; its ``source`` is ``source``.

    Raises
    ------
    InstanceError
        Wrong format or version, a missing or mistyped field, an ``arrival_s`` that is not a
        finite number of seconds ``>= 0`` or that some requests give and others do not; names
        source, request, field.
    """
    if not isinstance(data, dict):
        raise InstanceError(f"{source}: expected a JSON object with 'memory' and 'requests'")
    unknown_keys(data, INSTANCE_KEYS, source)
    for key, kind in (("name", str), ("metadata", dict)):
        if key in data and not isinstance(data[key], kind):
            raise InstanceError(
                f"{source}: field '{key}' must be a JSON {'string' if kind is str else 'object'}"
            )
    nonfinite = first_nonfinite(data.get("metadata"), "metadata")
    if nonfinite is not None:
        raise InstanceError(
            f"{source}: field {quote(nonfinite[0])} is {nonfinite[1]!r}, not a JSON number "
            "(NaN and infinities cannot be written back)"
        )
    fmt = data.get("format", INSTANCE_FORMAT)
    if fmt != INSTANCE_FORMAT:
        raise InstanceError(
            f"{source}: field 'format' is {brief(fmt)}, expected {INSTANCE_FORMAT!r}"
        )
    version = data.get("version", INSTANCE_VERSION)
    if version != INSTANCE_VERSION or isinstance(version, bool):
        raise InstanceError(f"{source}: field 'version' is {brief(version)}; this lpsched reads 1")
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
    with_seconds = any(isinstance(r, dict) and "arrival_s" in r for r in requests)
    seconds: list[float] = []
    for pos, r in enumerate(requests):
        if not isinstance(r, dict):
            raise InstanceError(f"{source}: request at position {pos} is not an object")
        rid = r.get("id", f"r{pos}")
        if isinstance(rid, bool) or not isinstance(rid, (str, int)):
            raise InstanceError(
                f"{source}: request at position {pos}: field 'id' must be a "
                f"string or an integer, got {brief(rid)}"
            )
        rid = str(rid)
        ids.append(rid)
        who = f"request {quote(rid)}"
        unknown_keys(r, REQUEST_KEYS, source, who)
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
        if with_seconds:
            seconds.append(_seconds_field(r, source, who))
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
        arrival_s=seconds if with_seconds else None,
    )


def _seconds_field(r: dict[str, Any], source: str, who: str) -> float:
    """The request's ``arrival_s`` (seconds) as a float: a JSON number, finite and ``>= 0`` (the
    range is checked by :class:`~lpsched.instance.Instance`); else :class:`InstanceError` naming
    the source, the request and the field. Source: ours (SPEC sections 9-10)."""
    if "arrival_s" not in r:
        raise InstanceError(
            f"{source}: {who}: missing field 'arrival_s' (other requests give one: give it for "
            "every request or for none)"
        )
    value = r["arrival_s"]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InstanceError(
            f"{source}: {who}: field 'arrival_s' must be a number of seconds, got {brief(value)}"
        )
    out = float(value)
    if not (out >= 0 and out <= 2**40):  # NaN fails both
        raise InstanceError(
            f"{source}: {who}: field 'arrival_s' must be a finite number of seconds in "
            f"[0, 2^40], got {value!r}"
        )
    return out


def read_instance(path: str | os.PathLike[str]) -> Instance:
    """Read an instance JSON file (SPEC section 9).

    Parameters
    ----------
    path : path-like
        The instance file (a trace CSV has no memory budget: see :func:`~.traces.read_trace_csv` and
        :func:`lpsched.generators.workloads.from_traces`).

    Returns
    -------
    Instance
        As :func:`instance_from_dict`, with the path as ``source``.

    Raises
    ------
    InstanceError
        Missing file, empty file, malformed JSON, or invalid data; the message names the file,
        the request and the field. A trace CSV (a name ending in ``.csv``), with the command
        that makes an instance of it.
    """
    p = Path(path)
    if str(path).lower().endswith(".csv"):
        raise InstanceError(
            f"{path}: a trace CSV has no memory budget; make an instance first with "
            f"'lpsched generate --trace {path} -n N --memory M -o instance.json'"
        )
    text = read_text(p, "an instance file")
    if not text.strip():
        raise InstanceError(f"{p}: the file is empty")
    return instance_from_dict(load_json(text, p), source=str(p))


def write_instance(instance: Instance, path: str | os.PathLike[str]) -> None:
    """Write ``instance`` as SPEC section 9 JSON (one request per line, stable key order).

    The write is atomic (:func:`~.atomic.atomic_write_text`). Raises
    :class:`~.atomic.WriteError` naming the path when it cannot be written (the previous file,
    if any, intact) and ``ValueError`` for metadata that is not JSON (NaN, infinity, objects
    JSON cannot hold), before anything is written.
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


#: The shipped default instance's file (package data; a ``Traversable``, a path when the
#: package is installed as files).
DEFAULT_INSTANCE_FILE = resources.files("lpsched").joinpath("data/default.json")


def default_instance() -> Instance:
    """The shipped default instance, the paper's setting (package data: works from a wheel).

    ``paper-mix`` (80% LMSYS-style conversation turns, 20% arXiv summarizations), n = 2000
    requests, M = 16,492 tokens, seed 0, all arriving at round 0: :data:`DEFAULT_INSTANCE_SPEC`,
    drawn by :func:`lpsched.generators.workloads.generate` (the test suite checks that the file
    is that draw, and that ``instances/default.json`` is the same file).

    Returns
    -------
    Instance
        Named ``default``, read from ``lpsched/data/default.json``.

    Notes
    -----
    Source: ours (the paper's setting, shipped as package data).
    """
    return instance_from_dict(
        json.loads(DEFAULT_INSTANCE_FILE.read_text(encoding="utf-8")),
        source=str(DEFAULT_INSTANCE_FILE),
    )


def check_output(output: str | None, *inputs: str | None, writable: bool = False) -> None:
    """Refuse an ``-o`` file that is one of the command's input files (the same path, or the
    same file through a link; an input None is the shipped default instance), or that names a
    folder (a trailing ``/``, or an existing directory), before any work: the run would
    overwrite what it reads. With ``writable`` (a run of minutes), also one whose folder does
    not exist or cannot be written.

    Raises
    ------
    lpsched.instance.OptionError
        Naming the option ``-o`` and both paths, or the path that cannot be written (the
        command line's exit code 2).

    Notes
    -----
    Source: ours.
    """
    if output is None:
        return
    if output.endswith(("/", os.sep)) or os.path.isdir(output):
        raise OptionError(
            f"{output} names a folder; give a file name (such as {output.rstrip('/' + os.sep)}"
            f"{os.sep}out.json)",
            "-o",
        )
    for given in inputs:
        path = str(DEFAULT_INSTANCE_FILE) if given is None else given
        if os.path.exists(output) and os.path.exists(path) and os.path.samefile(output, path):
            what = "the shipped default instance" if given is None else "the input file"
            raise OptionError(
                f"{output} is {what} {path}: the run would overwrite it; write elsewhere", "-o"
            )
    folder = os.path.dirname(os.path.abspath(output))
    if writable and not (os.path.isdir(folder) and os.access(folder, os.W_OK)):
        raise OptionError(f"{output}: cannot write there", "-o")
