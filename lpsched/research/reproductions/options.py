"""A reproduction's options from text: what ``lpsched reproduce NAME`` passes to its ``run``
(``--seeds``, ``--sizes``, ``--time-limits`` and the rest).

:func:`study_options` parses each option given, checks that the reproduction takes it
(:func:`~lpsched.research.reproductions.registry.accepts`), and returns the keyword arguments
of its ``run``; an option it does not take is an :class:`~lpsched.instance.OptionError` (the
command line's usage error, exit code 2), before any row is computed. Source: ours.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Mapping, Sequence
from typing import Any

from ...generators.workloads import MAX_REQUESTS
from ...instance import OptionError
from ...policies.selection import parse_policy_list
from ...timing.model import TimeModel
from .registry import REPRODUCTIONS, accepts

__all__ = ["parse_integers", "parse_time_limits", "study_options", "taking"]


def parse_integers(text: str, option: str, least: int, most: int | None = None) -> list[int]:
    """The comma-separated integers ``>= least`` (and ``<= most``, if given) of ``text``, each
    once, in order.

    Raises
    ------
    lpsched.instance.OptionError
        Naming ``option``: not integers, or one outside ``least..most``.
    """
    try:
        values = [int(s) for s in text.split(",")]
    except ValueError:
        values = []
    if not values or min(values) < least:
        raise OptionError(f"expected comma-separated integers >= {least}, got {text!r}", option)
    if most is not None and max(values) > most:
        raise OptionError(f"{max(values):,} is more than {most:,}, the most allowed", option)
    return list(dict.fromkeys(values))


def parse_time_limits(text: str) -> float | dict[int, float]:
    """Solver seconds per instance: one number for every size (``60``), or ``N=S,N=S`` per
    size (``30=60,2000=600``).

    Returns
    -------
    float or dict of int to float
        Seconds, or seconds by number of requests ``n``.

    Raises
    ------
    lpsched.instance.OptionError
        Naming ``--time-limits``: not numbers, a limit that is not a finite number of seconds
        > 0, or a size given twice.
    """

    def bad(why: str) -> OptionError:
        return OptionError(
            f"{why}; expected seconds (e.g. 60) or comma-separated N=SECONDS (e.g. "
            f"30=60,2000=600), got {text!r}",
            "--time-limits",
        )

    pairs: list[tuple[int | None, float]]
    try:
        if "=" not in text:
            pairs = [(None, float(text))]
        else:
            pairs = [(int(n), float(t)) for n, t in (part.split("=") for part in text.split(","))]
    except ValueError:
        raise bad("not a number of seconds") from None
    if any(not (math.isfinite(t) and t > 0) for _, t in pairs):
        raise bad("a time limit must be a finite number of seconds > 0")
    if pairs[0][0] is None:
        return pairs[0][1]
    limits = {int(n): t for n, t in pairs if n is not None}
    if len(limits) < len(pairs):
        raise bad("a size is given twice")
    return limits


def taking(option: str) -> str:
    """The names of the reproductions whose ``run`` takes the keyword ``option``,
    comma-separated."""
    return ", ".join(name for name, r in REPRODUCTIONS.items() if accepts(r, option))


def study_options(
    name: str,
    *,
    seeds: str | None = None,
    sizes: str | None = None,
    time_limits: str | None = None,
    time_limit: float | None = None,
    work_limit: float | None = None,
    trials: int | None = None,
    trace_dir: str | None = None,
    policies: str | None = None,
    policy_options: Mapping[str, Any] | None = None,
    time_model: TimeModel | None = None,
    workloads: Sequence[str] = (),
) -> dict[str, Any]:
    """The keyword arguments of reproduction ``name``'s ``run`` from the options given.

    Parameters
    ----------
    name : str
        A name of :data:`~lpsched.research.reproductions.registry.REPRODUCTIONS`.
    seeds, sizes : str, optional
        Comma-separated integers (:func:`parse_integers`), each once.
    time_limits : str, optional
        :func:`parse_time_limits`.
    time_limit : float, optional
        Seconds of every solve, for the reproductions with one limit (checked by their
        ``run``).
    work_limit : float, optional
        The solver's deterministic work of every solve, for the reproductions that take one
        (checked by their ``run``).
    trials : int, optional
        Number of trials, for the reproductions that count them.
    trace_dir : str, optional
        Folder of the public traces.
    policies : str, optional
        ``a,b,...`` or ``+a,+b`` (added to the study's own list, the default of its ``run``'s
        ``policies``; :func:`lpsched.policies.selection.parse_policy_list`).
    policy_options : mapping, optional
        Options of the policies.
    time_model : TimeModel, optional
    workloads : sequence of str
        Workloads of the study, each once (one, for a study with a single ``workload``).

    Returns
    -------
    dict
        Only the options given (empty ones left out).

    Raises
    ------
    lpsched.instance.OptionError
        An option the reproduction does not take (checked in the order of the parameters),
        or one that cannot be parsed (naming it).
    """
    repro = REPRODUCTIONS[name]

    def take(key: str, lacks: str) -> None:
        """Refuse ``key`` unless the reproduction takes it."""
        if not accepts(repro, key):
            raise OptionError(f"'{name}' {lacks}")

    opts: dict[str, Any] = {}
    if seeds is not None:
        take("seeds", "has no seeds; drop --seeds")
        opts["seeds"] = parse_integers(seeds, "--seeds", 0)
    if sizes is not None:
        take("sizes", "has no sizes; drop --sizes")
        opts["sizes"] = parse_integers(sizes, "--sizes", 1, MAX_REQUESTS)  # the generators'
    if time_limits is not None:
        take("time_limits", "has no time limits; drop --time-limits")
        opts["time_limits"] = parse_time_limits(time_limits)
    if time_limit is not None:
        take(
            "time_limit",
            f"has no single time limit; drop --time-limit (it takes one: {taking('time_limit')})",
        )
        opts["time_limit"] = time_limit
    if work_limit is not None:
        take(
            "work_limit",
            f"has no work limit; drop --work-limit (it takes one: {taking('work_limit')})",
        )
        opts["work_limit"] = work_limit
    if trials is not None:
        take("trials", f"has no trials; drop --trials (trials: {taking('trials')})")
        opts["trials"] = trials
    if trace_dir is not None:
        take("trace_dir", "does not read traces; drop --trace-dir")
        opts["trace_dir"] = trace_dir
    per_policy = f"(per-policy tables: {taking('policies')})"
    if policies is not None:
        take("policies", f"has a fixed set of policies; drop --policies {per_policy}")
        default = inspect.signature(repro.run).parameters["policies"].default
        opts["policies"] = parse_policy_list(policies, "--policies", list(default))
    if policy_options:
        take("policy_options", f"takes no policy options; drop --option {per_policy}")
        opts["policy_options"] = policy_options
    if time_model is not None:
        timed = taking("time_model") or "none"
        take(
            "time_model",
            f"takes no time model; drop --time-model (reproductions that take one: {timed})",
        )
        opts["time_model"] = time_model
    if workloads:
        chosen = list(dict.fromkeys(workloads))
        if accepts(repro, "workloads"):
            opts["workloads"] = chosen
        elif not accepts(repro, "workload"):
            raise OptionError(f"'{name}' has no workload option; drop --workload")
        elif len(chosen) > 1:
            raise OptionError(f"'{name}' takes one --workload, got {len(chosen)}")
        else:
            opts["workload"] = chosen[0]
    return opts
