"""One instance from any source: what ``lpsched generate`` writes.

:func:`make_instance` draws from a shipped workload or an inline mixture
(:func:`~lpsched.generators.workloads.generate`), a small workload for exact solving
(:data:`~lpsched.generators.small.EXACT_WORKLOADS`) or trace files
(:func:`~lpsched.generators.workloads.from_traces`), and adds prediction intervals
(:func:`~lpsched.generators.intervals.from_spec`); arguments that do not go with the source
are refused before anything is drawn. :func:`describe_workloads` lists the workloads
(``lpsched generate --list``). Source: ours.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Sequence

from tabulate import tabulate

from ..instance import Instance, OptionError
from .intervals import from_spec
from .lmsys import LMSYS_PARAMETERS
from .small import EXACT_WORKLOADS
from .workloads import WORKLOADS, describe, from_traces, generate, parse_mixture

__all__ = ["describe_workloads", "generation_notes", "make_instance"]


def make_instance(
    n: int | None,
    memory: int | None,
    workload: str = "paper-mix",
    *,
    seed: int = 0,
    arrival_rate: float | None = None,
    arrival_rate_s: float | None = None,
    traces: Sequence[str | os.PathLike[str]] = (),
    weights: Sequence[float] | None = None,
    round_s: float | None = None,
    arrival_seconds: bool = False,
    skip_oversized: bool = False,
    intervals: str | None = None,
    name: str | None = None,
) -> Instance:
    """A random instance of ``n`` requests under a KV-cache budget of ``memory`` tokens.

    Parameters
    ----------
    n, memory : int or None
        Requests and ``M`` (tokens). None: the small workload's own (its generator's default:
        ``jaillet-synthetic`` draws both, ``scaled-mix`` has M = 50); the other sources need
        both.
    workload : str
        A name of :data:`~lpsched.generators.workloads.WORKLOADS`, an inline mixture
        (``name:weight,...``) or a name of :data:`~lpsched.generators.small.EXACT_WORKLOADS`;
        ignored with ``traces``.
    seed : int
    arrival_rate, arrival_rate_s : float, optional
        Poisson arrivals per round, or per second (``arrival_s``); not both, not with
        ``traces`` and not for the small workloads.
    traces : sequence of path-like
        Draw real rows from these trace CSVs instead of ``workload``.
    weights, round_s, arrival_seconds, skip_oversized
        Only with ``traces``: as :func:`~lpsched.generators.workloads.from_traces`.
    intervals : str, optional
        Decode-length prediction intervals (:func:`~lpsched.generators.intervals.from_spec`:
        ``exact``, ``multiplicative:EPS``, ``bins`` or ``none``).
    name : str, optional
        Instance name (default: the generator's).

    Returns
    -------
    Instance

    Raises
    ------
    lpsched.instance.OptionError
        Arguments that do not go with the source, an unknown workload or interval spec, ``n``
        or ``memory`` missing where the source has no default for it.
    ValueError
        What the generator refuses (a trace file that cannot be read, ``n`` rows too many).
    """
    rates = arrival_rate is not None or arrival_rate_s is not None
    small = not traces and workload in EXACT_WORKLOADS
    for option, value in (("-n", n), ("--memory", memory)):
        if value is None and not (small and _has_default(workload, option)):
            if not traces and not small:
                _check_mixture(workload)  # an unknown workload is named as such
            source = "--trace" if traces else f"workload {workload}"
            raise OptionError(f"Missing option '{option}' ({source} has no default for it).")
    if traces:
        assert n is not None and memory is not None  # checked above
        if rates:
            raise OptionError(
                "--arrival-rate and --arrival-rate-s apply to --workload, not to --trace "
                "(use --round-ms or --arrival-seconds to keep the trace's arrivals)"
            )
        inst = from_traces(
            traces,
            n,
            memory,
            weights=weights,
            seed=seed,
            round_s=round_s,
            name=name,
            skip_oversized=skip_oversized,
            arrival_seconds=arrival_seconds,
        )
    else:
        for flag, given in (
            ("--skip-oversized", skip_oversized),
            ("--weights", weights is not None),
            ("--round-ms", round_s is not None),
            ("--arrival-seconds", arrival_seconds),
        ):
            if given:
                how = "; for workloads write name:weight" if flag == "--weights" else ""
                raise OptionError(f"{flag} goes with --trace{how}")
        if arrival_rate is not None and arrival_rate_s is not None:
            raise OptionError(
                "give --arrival-rate (rounds) or --arrival-rate-s (seconds), not both"
            )
        if workload in EXACT_WORKLOADS:
            if rates:
                raise OptionError(f"--arrival-rate does not apply to {workload}")
            sizes = {k: v for k, v in (("n", n), ("memory", memory)) if v is not None}
            inst = EXACT_WORKLOADS[workload](seed=seed, **sizes)
            inst = inst if name is None else inst.replace(name=name)
        else:
            assert n is not None and memory is not None  # checked above
            _check_mixture(workload)
            inst = generate(
                workload,
                n,
                memory,
                seed=seed,
                arrival_rate=arrival_rate,
                name=name,
                arrival_rate_s=arrival_rate_s,
            )
    if intervals is None:
        return inst
    try:
        return from_spec(inst, intervals, seed=seed)
    except ValueError as exc:
        raise OptionError(str(exc), "--intervals") from None


def _check_mixture(workload: str) -> None:
    """:class:`~lpsched.instance.OptionError` naming ``--workload`` unless ``workload`` is a
    workload or an inline mixture (:func:`~lpsched.generators.workloads.parse_mixture`)."""
    try:
        parse_mixture(workload)
    except ValueError as exc:
        raise OptionError(str(exc), "--workload") from None


def _has_default(workload: str, option: str) -> bool:
    """Whether the generator of small workload ``workload`` has a default for ``option``
    (``-n``: its parameter ``n``, ``--memory``: ``memory``)."""
    param = inspect.signature(EXACT_WORKLOADS[workload]).parameters[
        "n" if option == "-n" else "memory"
    ]
    return param.default is not inspect.Parameter.empty


def generation_notes(
    instance: Instance, traces: Sequence[str | os.PathLike[str]] = ()
) -> list[str]:
    """What :func:`make_instance` left out or changed, recorded in ``instance.metadata``, one
    sentence each (``lpsched generate`` prints them on standard error).

    Parameters
    ----------
    instance : Instance
        As :func:`make_instance` returned it.
    traces : sequence of path-like
        The trace files it was drawn from (named beside their skipped rows).

    Returns
    -------
    list of str
        The rows with ``s + o > M`` skipped per trace file (``skipped_oversized``) and the
        interval upper bounds capped at ``M - s`` (``intervals.capped``); empty when neither.

    Notes
    -----
    Source: ours.
    """
    notes = []
    skipped = instance.metadata.get("skipped_oversized")
    if skipped is not None:
        per_file = ", ".join(f"{k} in {p}" for k, p in zip(skipped, traces, strict=True))
        notes.append(
            f"skipped {sum(skipped)} rows with s + o > M = {instance.memory} ({per_file}; "
            "recorded in metadata.skipped_oversized)"
        )
    capped = instance.metadata.get("intervals", {}).get("capped", 0)
    if capped:
        notes.append(
            f"note: {capped} upper bounds decode_hi were capped at M - prefill "
            "(recorded in metadata.intervals.capped)"
        )
    return notes


def describe_workloads() -> str:
    """The workloads of :func:`make_instance` with their sources, as a table, and how to mix
    them and set the LMSYS readings' parameters (``lpsched generate --list``)."""
    rows = [[name, describe(name)] for name in WORKLOADS]
    rows += [
        [name, (EXACT_WORKLOADS[name].__doc__ or "").strip().splitlines()[0].replace("``", "")]
        for name in EXACT_WORKLOADS
    ]
    table = tabulate(
        rows, headers=["workload", "source"], disable_numparse=True, maxcolwidths=[None, 76]
    )
    return (
        f"{table}\n\nMix them inline: 'lmsys-turn:0.8,summarization:0.2'. The LMSYS readings "
        "take parameters: 'lmsys-turn[prefill_sigma=1.2;decode_sigma=0.9;max_total=4096]' "
        f"({', '.join(LMSYS_PARAMETERS)}). The last {len(EXACT_WORKLOADS)} are small "
        "instances for exact solving and do not mix."
    )
