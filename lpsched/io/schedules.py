"""Schedule JSON (SPEC section 9; runs: SPEC section 6): the format's keys, the object of a
schedule, and the schedule file writer and reader (version 2, and version 1 still read)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from ..instance import MAX_VALUE, Instance, InstanceError, int_field, quote
from ..schedule import Schedule
from ..timing.model import TimeModel, TimeModelError
from ..timing.registry import time_model
from ..timing.seconds import ScheduleSeconds, to_seconds
from ._common import brief, unknown_keys
from .atomic import atomic_write_text
from .json_text import load_json, read_text

__all__ = [
    "SCHEDULE_KEYS",
    "SCHEDULE_REQUEST_KEYS",
    "SCHEDULE_KEYS_V1",
    "SECONDS_KEYS",
    "SCHEDULE_FORMAT",
    "SCHEDULE_VERSION",
    "schedule_to_dict",
    "schedule_summary_to_dict",
    "schedule_summary_line",
    "write_schedule",
    "read_schedule",
]

SCHEDULE_FORMAT = "lpsched/schedule"
SCHEDULE_VERSION = 2
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
    "time_model",
    "requests",
)
SCHEDULE_REQUEST_KEYS = (
    "id",
    "arrival",
    "start",
    "completion",
    "runs",
    "latency_s",
    "ttft_s",
    "tpot_s",
)
#: The per-request seconds a schedule file may record under its ``time_model`` (SPEC section 10).
SECONDS_KEYS = ("latency_s", "ttft_s", "tpot_s")
#: Relative tolerance of a recorded second against its recomputation (float64 sums may differ in
#: the last bits between machines).
SECONDS_RTOL = 1e-9
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


def schedule_to_dict(schedule: Schedule, seconds: ScheduleSeconds | None = None) -> dict[str, Any]:
    """The SPEC section 9 schedule JSON object (version 2) of ``schedule``.

    Parameters
    ----------
    schedule : Schedule
        Any schedule (feasible or not) of its instance.
    seconds : ScheduleSeconds, optional
        ``schedule`` read in seconds (:func:`lpsched.timing.seconds.to_seconds`): the object
        then records ``time_model`` (``{"name", "parameters"}``) and each request's
        ``latency_s``, ``ttft_s`` and ``tpot_s`` (seconds; ``tpot_s`` null for ``o_i = 1``),
        SPEC section 10.

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
        or a request has no run; or ``seconds`` of another number of requests.

    Notes
    -----
    Source: SPEC section 9 (runs: SPEC section 6).
    """
    inst = schedule.instance
    per_request = _request_runs(schedule)
    if seconds is not None and seconds.latency_s.shape != (inst.n,):
        raise ValueError(
            f"cannot write schedule {schedule.policy!r}: its seconds are of "
            f"{seconds.latency_s.size} requests, the instance has {inst.n}"
        )
    requests = []
    for i in range(inst.n):
        p, c = int(schedule.start[i]), int(schedule.completion[i])
        r: dict[str, Any] = {"id": inst.ids[i], "arrival": int(inst.arrival[i]), "start": p}
        r["completion"] = c
        if per_request is not None and per_request[i] != [[p, c, 1]]:
            r["runs"] = per_request[i]
        requests.append(r)
    if seconds is not None:
        tpot = seconds.tpot_s.tolist()
        for r, lat, ttft, tp in zip(
            requests, seconds.latency_s.tolist(), seconds.ttft_s.tolist(), tpot, strict=True
        ):
            r.update(latency_s=lat, ttft_s=ttft, tpot_s=None if tp != tp else tp)
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
    if seconds is not None:
        out["time_model"] = seconds.model.to_dict()
    out["requests"] = requests
    return out


def schedule_summary_to_dict(
    schedule: Schedule,
    policy: str,
    seconds: ScheduleSeconds | None = None,
    output: str | None = None,
) -> dict[str, Any]:
    """The summary of one policy's schedule that ``lpsched schedule --json`` prints.

    Parameters
    ----------
    schedule : Schedule
        The schedule ``policy`` made, with ``info["runtime_s"]``.
    policy : str
        The policy as named (``NAME`` or ``NAME+backfill``).
    seconds : ScheduleSeconds, optional
        ``schedule`` read in seconds: the summary then records the time model and the figures
        of :meth:`~lpsched.timing.seconds.ScheduleSeconds.stats`.
    output : str, optional
        The file the schedule was written to; without one the summary holds the schedule.

    Returns
    -------
    dict
        ``instance`` (its name), ``policy``, the figures of :meth:`lpsched.schedule.Schedule.
        summary` (``tel``, ``mean_latency``, ``makespan``, ``peak_memory``: rounds and tokens),
        ``evictions``, ``runtime_s`` (s), ``output``; with ``seconds`` also ``time_model`` and
        the figures in seconds; without ``output`` also ``schedule``
        (:func:`schedule_to_dict`).

    Notes
    -----
    Source: ours.
    """
    summary: dict[str, Any] = {"instance": schedule.instance.name, "policy": policy}
    summary.update(schedule.summary(), evictions=schedule.evictions)
    summary.update(runtime_s=schedule.info["runtime_s"], output=output)
    if seconds is not None:
        summary.update(time_model=seconds.model.to_dict(), **seconds.stats())
    if output is None:
        summary["schedule"] = schedule_to_dict(schedule, seconds)
    return summary


def schedule_summary_line(
    schedule: Schedule, policy: str, seconds: ScheduleSeconds | None, output: str
) -> str:
    """The line ``lpsched schedule -o FILE`` prints: ``policy``'s TEL (rounds) and mean latency
    (rounds; with ``seconds`` also in seconds, under its model), and the file written.
    Source: ours."""
    s = ""
    if seconds is not None:
        s = f" ({seconds.stats()['mean_latency_s']:.3f} s under {seconds.model.name})"
    return (
        f"{policy}: TEL {schedule.tel} rounds, mean latency {schedule.mean_latency:.1f}{s}; "
        f"wrote {output}"
    )


def write_schedule(
    schedule: Schedule,
    path: str | os.PathLike[str],
    seconds: ScheduleSeconds | None = None,
) -> None:
    """Write ``schedule`` as SPEC section 9 schedule JSON (version 2) to ``path``.

    One request per line, keys in a stable order (:func:`schedule_to_dict`; with
    ``seconds``, the time model and each request's seconds, SPEC section 10). The write is
    atomic (:func:`~.atomic.atomic_write_text`).

    Raises
    ------
    WriteError
        The file cannot be written; the message names the path (the previous file, if any,
        intact).
    ValueError
        The schedule cannot be written (see :func:`schedule_to_dict`), before anything is
        written.
    """
    data = schedule_to_dict(schedule, seconds)
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
        (``write_schedule`` lists a request's runs by start). When the file records a
        ``time_model`` (SPEC section 10), ``info["time_model"]`` is that model and
        ``info["seconds"]`` the schedule read in it (a
        :class:`~lpsched.timing.seconds.ScheduleSeconds`). With a ``time_model`` and an
        instance with ``arrival_s`` (arrivals in seconds), the schedule's instance has
        ``arrival`` = the admission rounds ``min {p : tau(p) >= alpha_i}`` on that clock, so
        that the check ``p_i >= a_i`` is the check in seconds.

    Raises
    ------
    InstanceError
        Missing or malformed file, wrong format or version, an unknown key, a missing or
        mistyped field, a request whose id or arrival is not the instance's (with a
        ``time_model`` and an instance with ``arrival_s``: not the round at which its
        ``arrival_s`` is reached on that clock, SPEC section 10), or a derived
        value (``completion``, ``tel``, ``makespan``, ``peak_memory``, ``evictions``,
        ``wasted_tokens``) that disagrees with the starts; a ``time_model`` that is not
        registered (a plug-in: import it first) or is malformed, or a recorded ``latency_s``,
        ``ttft_s`` or ``tpot_s`` that its recomputation does not give (to a relative
        :data:`SECONDS_RTOL`); with ``check``, an infeasible
        schedule (the message says where). Every message names the file, and the request and
        field when there is one.

    Notes
    -----
    Source: SPEC section 9 (runs: SPEC section 6).
    """
    p = Path(path)
    data = load_json(read_text(p, "a schedule file"), p)
    if not isinstance(data, dict) or data.get("format") != SCHEDULE_FORMAT:
        raise InstanceError(f"{p}: field 'format' must be {SCHEDULE_FORMAT!r}")
    version = data.get("version", 1)
    if version not in (1, 2) or isinstance(version, bool):
        raise InstanceError(f"{p}: field 'version' is {brief(version)}; this lpsched reads 1 and 2")
    unknown_keys(data, SCHEDULE_KEYS if version == 2 else SCHEDULE_KEYS_V1, str(p))
    if "instance" in data and data["instance"] != instance.name:
        raise InstanceError(
            f"{p}: field 'instance' is {quote(data['instance'])}, but the instance "
            f"given is {quote(instance.name)}"
        )
    policy = data.get("policy", "")
    if not isinstance(policy, str):
        raise InstanceError(f"{p}: field 'policy' must be a string, got {brief(policy)}")
    clocked = version == 2 and "time_model" in data and instance.arrival_s is not None
    if version == 1:
        start, runs = _v1_starts_and_runs(data, instance, str(p))
    else:
        start, runs = _v2_starts_and_runs(data, instance, str(p), arrivals=not clocked)
    sched = Schedule(instance, np.asarray(start, dtype=np.int64), policy=policy, runs=runs)
    if clocked:
        instance = _clock_arrivals(data, sched, str(p))
        sched = Schedule(instance, sched.start, policy=policy, runs=runs)
    derived: dict[str, Any] = {"tel": sched.tel}
    if version == 1:
        derived["completion"] = sched.completion.tolist()
    else:
        derived.update(makespan=sched.makespan, peak_memory=sched.peak_memory)
    derived.update(evictions=sched.evictions, wasted_tokens=sched.wasted_tokens)
    for key, value in derived.items():
        if key in data and not _same_ints(data[key], value):
            said = data[key]
            shown = "the list given" if isinstance(said, list) else _shown(said)
            raise InstanceError(
                f"{p}: field {key!r} is {shown}, but the starts"
                + (" and runs" if key in ("evictions", "wasted_tokens", "peak_memory") else "")
                + (" give start + decode length" if key == "completion" else f" give {value}")
            )
    if version == 2:
        seconds = _recorded_seconds(data, sched, str(p))
        if seconds is not None:
            sched.info.update(time_model=seconds.model, seconds=seconds)
    if check:
        bad = sched.violations(limit=3)
        if bad:
            raise InstanceError(f"{p}: infeasible schedule: " + "; ".join(bad))
    return sched


def _clock_arrivals(data: dict[str, Any], sched: Schedule, source: str) -> Instance:
    """The instance with ``arrival`` = the admission rounds of its ``arrival_s`` on the clock of
    the file's time model and starts (SPEC section 10: a schedule made with arrivals in
    seconds), each request's ``arrival`` field checked against them."""
    inst = sched.instance
    assert inst.arrival_s is not None  # only called then
    model = _recorded_model(data, source)
    try:
        rounds = to_seconds(sched, model).admission_rounds(inst.arrival_s)
    except (TimeModelError, ValueError) as exc:
        raise InstanceError(f"{source}: field 'time_model': {exc}") from None
    if rounds.size and int(rounds.max()) > MAX_VALUE:
        pos = int(np.argmax(rounds))
        raise InstanceError(
            f"{source}: request {quote(inst.ids[pos])}: its arrival_s "
            f"{float(inst.arrival_s[pos])!r} s is reached at round {int(rounds[pos])} on the "
            f"clock of time model {model.spec}, beyond the rounds of a schedule (2^40)"
        )
    for pos, r in enumerate(data["requests"]):
        if "arrival" in r and not _same_ints(r["arrival"], int(rounds[pos])):
            raise InstanceError(
                f"{source}: request {quote(inst.ids[pos])}: field 'arrival' is "
                f"{brief(r['arrival'])}, but its arrival_s {float(inst.arrival_s[pos])!r} s is "
                f"reached at round {int(rounds[pos])} on the clock of time model {model.spec} "
                "(a schedule with a time model and arrivals in seconds admits by the clock)"
            )
    return inst.replace(arrival=rounds)


def _recorded_model(data: dict[str, Any], source: str) -> TimeModel:
    """The file's ``time_model`` object as a model, or :class:`InstanceError` naming the file."""
    tm = data["time_model"]
    if not (
        isinstance(tm, dict)
        and set(tm) == {"name", "parameters"}
        and isinstance(tm["name"], str)
        and isinstance(tm["parameters"], dict)
    ):
        raise InstanceError(
            f'{source}: field \'time_model\' must be an object {{"name": ..., "parameters": '
            f"{{...}}}}, got {brief(tm)}"
        )
    try:
        return time_model(tm["name"], **tm["parameters"])
    except KeyError as exc:
        raise InstanceError(
            f"{source}: field 'time_model': {exc.args[0] if exc.args else exc}"
        ) from None
    except (TimeModelError, ValueError) as exc:
        raise InstanceError(f"{source}: field 'time_model': {exc}") from None


def _recorded_seconds(data: dict[str, Any], sched: Schedule, source: str) -> ScheduleSeconds | None:
    """The file's ``time_model`` and per-request seconds, recomputed from the starts and
    checked (SPEC section 10); None when the file records no time model."""
    inst = sched.instance
    reqs = data["requests"]
    if "time_model" not in data:
        for pos, r in enumerate(reqs):
            given = [k for k in SECONDS_KEYS if k in r]
            if given:
                raise InstanceError(
                    f"{source}: request {quote(inst.ids[pos])}: field {given[0]!r} needs the "
                    "file's 'time_model' (the model its seconds are read in)"
                )
        return None
    model = _recorded_model(data, source)
    try:
        seconds = to_seconds(sched, model)
    except (TimeModelError, ValueError) as exc:
        raise InstanceError(f"{source}: field 'time_model': {exc}") from None
    computed = {k: getattr(seconds, k).tolist() for k in SECONDS_KEYS}
    for pos, r in enumerate(reqs):
        for key in SECONDS_KEYS:
            if key not in r:
                continue
            said, value = r[key], computed[key][pos]
            if value != value:  # NaN: tpot_s of a request with o_i = 1
                ok = said is None
            else:
                ok = (
                    not isinstance(said, bool)
                    and isinstance(said, (int, float))
                    and abs(said - value) <= SECONDS_RTOL * max(1.0, abs(value))
                )
            if not ok:
                raise InstanceError(
                    f"{source}: request {quote(inst.ids[pos])}: field {key!r} is "
                    f"{brief(said)}, but time model {model.spec} gives "
                    f"{'null' if value != value else repr(value)} s"
                )
    return seconds


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
    data: dict[str, Any], instance: Instance, source: str, *, arrivals: bool = True
) -> tuple[list[int], np.ndarray | None]:
    """Version 2: one object per request (id, arrival, start, completion, runs), checked
    against the instance (the arrivals only with ``arrivals``: a schedule on the clock of its
    time model has them checked by :func:`_clock_arrivals`)."""
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
                f"integer, got {'nothing' if 'id' not in r else brief(rid)}"
            )
        if str(rid) != instance.ids[pos]:
            raise InstanceError(
                f"{source}: request at position {pos}: field 'id' is {quote(str(rid))}, but "
                f"the instance has {quote(instance.ids[pos])} there (requests are listed in "
                "instance order)"
            )
        who = f"request {quote(instance.ids[pos])}"
        unknown_keys(r, SCHEDULE_REQUEST_KEYS, source, who)
        if "start" not in r:
            raise InstanceError(f"{source}: {who}: missing field 'start'")
        p = _start_field(r["start"], source, who)
        o = int(instance.decode[pos])
        for key, value, why in (
            ("arrival", int(instance.arrival[pos]), "the instance says"),
            ("completion", p + o, f"start {p} + decode length {o} give"),
        ):
            if key == "arrival" and not arrivals:
                continue
            if key in r and not _same_ints(r[key], value):
                raise InstanceError(
                    f"{source}: {who}: field {key!r} is {brief(r[key])}, but {why} {value}"
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


def _shown(said: Any) -> str:
    """A JSON value for a message, with its kind when it is not a number (``the string
    '128'``), so that it never reads as the number it resembles."""
    if isinstance(said, (int, float)) and not isinstance(said, bool):
        return brief(said)
    kinds = {str: "the string", bool: "the boolean", type(None): "null", dict: "an object"}
    kind = kinds.get(type(said), type(said).__name__)
    return "null" if said is None else f"{kind} {brief(said)}"


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
