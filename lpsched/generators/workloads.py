"""Workload generators: length distributions from real traces and published statistics,
mixtures, arrival processes.

Two kinds of component law (:func:`component`):

* an empirical joint law of the prefill length ``s_i`` and the decode length ``o_i`` derived from
  a public serving trace by ``scripts/derive_length_tables.py`` (the traces themselves are not
  shipped): the quantiles of ``s`` at 1,001 levels, and for each of 50 bins of prefill rank (2%
  of the trace each) the quantiles of ``o`` at 101 levels. A request is drawn by two uniforms
  ``u, v``: ``s = Q_s(u)`` and ``o = Q_{o | bin(u)}(v)``, both interpolated linearly between
  levels and rounded to integers. The conditional tables keep how decode depends on prefill
  (the arXiv trace, for instance, caps ``s + o`` at 4,096);
* a lognormal law fitted to published LMSYS-Chat-1M statistics (:mod:`.lmsys`), whose shape
  is a parameter of the spec: ``lmsys-turn[prefill_sigma=1.2;decode_sigma=0.9]``.

Every instance is reproducible from its seed.

Named workloads (``WORKLOADS``):

==========================  ===================================================================
``lmsys-turn``              LMSYS-Chat-1M per-turn means, lognormal (:mod:`.lmsys`)
``lmsys-subset``            the 10k LMSYS subset of Jaillet et al. (median and mean fit)
``lmsys-conversation``      LMSYS conversations of the Vidur trace (median and p90 fit)
``conversation``            Azure LLM inference trace 2023, conversation service (19,366 rows)
``sharegpt``                ShareGPT conversations, context up to 8k (30,731)
``summarization``           arXiv long-document summarization, up to 4k tokens (28,257)
``code``                    Azure LLM inference trace 2023, code completion (8,819)
``translation``             Bilingual web-book translation (33,768)
``paper-mix``               80% ``lmsys-turn``, 20% ``summarization``: the paper's mix, default
``paper-mix-subset``        80% ``lmsys-subset``, 20% ``summarization``
``paper-mix-conversation``  80% ``lmsys-conversation``, 20% ``summarization``
``mix-80-20``               80% ``conversation`` (Azure), 20% ``summarization``
==========================  ===================================================================

A mixture can also be written inline: ``"lmsys-turn:0.8,summarization:0.2"``.

Source: the paper's workload (arXiv 2508.06133, section 6) mixes LMSYS-Chat-1M conversations
with arXiv summarization, 80/20; the LMSYS readings and why ``paper-mix`` takes
``lmsys-turn`` are in :mod:`.lmsys` and ``instances/README.md``. ``mix-80-20`` takes its short
requests from the Azure conversation trace instead (prompt median 1,020 tokens against
LMSYS' per-turn mean of 69.5): the contrast workload. The binned conditional-quantile
construction is ours.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import numpy as np

from ..instance import MAX_VALUE, Instance, InstanceError, quote
from ..io import read_trace_csv
from .arrivals import poisson_arrival_seconds, poisson_arrivals, trace_arrival_rounds
from .lmsys import LMSYS_READINGS, LognormalWorkload, with_parameters

__all__ = [
    "LengthTable",
    "WORKLOADS",
    "MIXTURES",
    "PAPER_WORKLOAD",
    "PAPER_N",
    "PAPER_MEMORY",
    "PAPER_HEADLINE_RATIOS",
    "headline_ratios",
    "component",
    "describe",
    "length_table",
    "parse_mixture",
    "sample_lengths",
    "generate",
    "from_traces",
    "check_size",
    "MAX_REQUESTS",
    "check_fits",
]

MIXTURES: dict[str, dict[str, float]] = {
    "paper-mix": {"lmsys-turn": 0.8, "summarization": 0.2},
    "paper-mix-subset": {"lmsys-subset": 0.8, "summarization": 0.2},
    "paper-mix-conversation": {"lmsys-conversation": 0.8, "summarization": 0.2},
    "mix-80-20": {"conversation": 0.8, "summarization": 0.2},
}
#: The paper's setting (arXiv 2508.06133, section 6): its workload as lpsched reads it, the
#: number of requests and the KV-cache budget M (tokens), all arriving at round 0.
PAPER_WORKLOAD = "paper-mix"
PAPER_N = 2000
PAPER_MEMORY = 16492
#: What the paper reports there: (label, numerator policy, denominator policy, ratio of mean
#: latencies).
PAPER_HEADLINE_RATIOS: tuple[tuple[str, str, str, float], ...] = (
    ("FCFS / Sorted-F", "fcfs", "sorted-f", 4.87),
    ("MC-SF / Sorted-F", "mcsf", "sorted-f", 2.09),
)


def headline_ratios(tel: Mapping[str, int]) -> list[dict[str, Any]]:
    """The paper's headline ratios measured on one instance, beside the paper's figures.

    Parameters
    ----------
    tel : mapping of str to int
        TEL (rounds) by policy name, all on the same instance.

    Returns
    -------
    list of dict
        ``{"ratio", "value", "paper"}`` for each ratio of :data:`PAPER_HEADLINE_RATIOS` whose two
        policies are in ``tel`` (TEL ratio = ratio of mean latencies on one instance).

    Notes
    -----
    Source: the paper's figures (arXiv 2508.06133, section 6); the comparison is ours.
    """
    return [
        {"ratio": label, "value": tel[num] / tel[den], "paper": paper}
        for label, num, den, paper in PAPER_HEADLINE_RATIOS
        if num in tel and den in tel and tel[den] > 0
    ]


@dataclass(frozen=True)
class LengthTable:
    """Empirical joint law of ``(s_i, o_i)`` of one trace.

    Attributes
    ----------
    name : str
        Workload name.
    source : str
        The trace it was derived from (dataset, paper, processed copy).
    rows : int
        Number of trace rows behind the table.
    prefill : ndarray of int64, shape (L,)
        Quantiles of ``s`` at levels ``0, 1/(L-1), ..., 1`` (tokens); L = 1001 shipped.
    decode_given_prefill : ndarray of int64, shape (B, K)
        Row ``b``: quantiles of ``o`` at ``K`` levels among the requests whose prefill rank lies
        in ``[b/B, (b+1)/B)`` (tokens); B = 50, K = 101 shipped.
    """

    name: str
    source: str
    rows: int
    prefill: np.ndarray
    decode_given_prefill: np.ndarray

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Draw ``n`` requests: ``(prefill, decode)``, each ndarray of int64 shape (n,), tokens."""
        u, v = rng.random(n), rng.random(n)
        s = np.rint(np.interp(u, np.linspace(0.0, 1.0, self.prefill.size), self.prefill))
        bins, k = self.decode_given_prefill.shape
        row = np.minimum((u * bins).astype(np.int64), bins - 1)
        pos = v * (k - 1)
        lo = np.minimum(pos.astype(np.int64), k - 2)
        table = self.decode_given_prefill
        o = table[row, lo] + (pos - lo) * (table[row, lo + 1] - table[row, lo])
        return s.astype(np.int64), np.maximum(np.rint(o).astype(np.int64), 1)


@cache
def _tables() -> dict[str, LengthTable]:
    doc = json.loads(resources.files("lpsched").joinpath("data/length_tables.json").read_text())
    return {
        name: LengthTable(
            name=name,
            source=t["source"],
            rows=t["rows"],
            prefill=np.asarray(t["prefill"], dtype=np.int64),
            decode_given_prefill=np.asarray(t["decode_given_prefill"], dtype=np.int64),
        )
        for name, t in doc["tables"].items()
    }


def length_table(name: str) -> LengthTable:
    """The shipped :class:`LengthTable` of a single workload.

    Raises
    ------
    KeyError
        Unknown name (the message lists the known ones).
    """
    tables = _tables()
    if name not in tables:
        raise KeyError(
            f"unknown workload {name!r}; known: {', '.join(WORKLOADS)} (and, for exact "
            "solving, paper-scaled, scaled-mix, uniform-small and jaillet-synthetic, which do "
            "not mix)"
        )
    return tables[name]


_COMPONENT = re.compile(r"^([A-Za-z0-9_-]+)(?:\[(.*)\])?$")


def component(name: str) -> LengthTable | LognormalWorkload:
    """The law of one mixture component: a trace table or a parametrised LMSYS reading.

    Parameters
    ----------
    name : str
        A trace workload (``"summarization"``), or an LMSYS reading with optional parameters
        in brackets, ``;``-separated: ``"lmsys-turn[prefill_sigma=1.2;decode_sigma=0.9]"``
        (:data:`~lpsched.generators.lmsys.LMSYS_PARAMETERS`).

    Returns
    -------
    LengthTable or LognormalWorkload
        Both have ``name``, ``source`` and ``sample(n, rng) -> (prefill, decode)``.

    Raises
    ------
    ValueError
        Unknown name, parameters on a trace workload, or a bad parameter (the message names
        the spec and the key).
    """
    m = _COMPONENT.match(name.strip()) if isinstance(name, str) else None
    if m is None:
        raise ValueError(f"workload component {name!r} is not NAME or NAME[key=value;...]")
    base, params = m.group(1), m.group(2)
    if base in LMSYS_READINGS:
        pairs: dict[str, str] = {}
        for item in (params or "").split(";"):
            if not item.strip():
                continue
            key, eq, value = item.partition("=")
            if not eq:
                raise ValueError(f"workload {name!r}: parameter {item!r} is not key=value")
            key = key.strip()
            if key in pairs:
                raise ValueError(f"workload {name!r}: parameter {key!r} given twice")
            pairs[key] = value.strip()
        return with_parameters(base, pairs, name)
    if base in MIXTURES:
        raise ValueError(
            f"workload {name!r}: {base} is a mixture, not a component; write its parts "
            f"({', '.join(f'{k}:{w:g}' for k, w in MIXTURES[base].items())})"
        )
    if params is not None:
        raise ValueError(
            f"workload {name!r}: {base} is a trace table and takes no parameters "
            f"(only {', '.join(LMSYS_READINGS)} do)"
        )
    try:
        return length_table(base)
    except KeyError as exc:
        raise ValueError(str(exc.args[0])) from None


WORKLOADS: tuple[str, ...] = (
    *LMSYS_READINGS,
    "conversation",
    "sharegpt",
    "summarization",
    "code",
    "translation",
    *MIXTURES,
)


def describe(name: str) -> str:
    """One line on a named workload of :data:`WORKLOADS`: its source, or a mixture's parts.

    Raises
    ------
    ValueError
        Unknown name.
    """
    if name in MIXTURES:
        parts = " + ".join(f"{w:.0%} {k}" for k, w in MIXTURES[name].items())
        notes = {
            PAPER_WORKLOAD: " (the paper's mix, the default)",
            "mix-80-20": " (Azure: the contrast)",
        }
        return parts + notes.get(name, "")
    return component(name).source


def parse_mixture(spec: str) -> dict[str, float]:
    """Weights of a workload spec: a name (``"code"``), a named mixture (``"paper-mix"``) or an
    inline mixture (``"lmsys-turn[prefill_sigma=1.2]:0.8,summarization:0.2"``).

    Returns
    -------
    dict
        Component name to weight; weights sum to 1.

    Raises
    ------
    ValueError
        Unknown component, a component named twice, non-positive or malformed weight.
    """
    if not isinstance(spec, str):
        raise ValueError(f"a workload is a name or 'name:weight,...', got {spec!r}")
    spec = spec.strip()
    if spec in MIXTURES:
        return dict(MIXTURES[spec])
    parts = [p.strip() for p in spec.split(",") if p.strip()]
    weights: dict[str, float] = {}
    for part in parts:
        name, _, w = part.partition(":")
        name = component(name.strip()).name  # canonical: lmsys-turn[] is lmsys-turn
        try:
            weight = float(w) if w else 1.0
        except ValueError:
            raise ValueError(
                f"workload {spec!r}: weight {w!r} of {name!r} is not a number"
            ) from None
        if not weight > 0 or not math.isfinite(weight):
            raise ValueError(f"workload {spec!r}: weight of {name!r} must be positive")
        if name in weights:
            raise ValueError(
                f"workload {quote(spec)}: component {quote(name)} appears twice; "
                "give each name once, with its whole weight"
            )
        weights[name] = weight
    if not weights:
        raise ValueError("empty workload spec")
    top = max(weights.values())  # so that the sum cannot overflow
    total = sum(v / top for v in weights.values())
    return {k: v / top / total for k, v in weights.items()}


def sample_lengths(
    spec: str, n: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Draw ``n`` requests from a workload spec (see :func:`parse_mixture`).

    Returns
    -------
    prefill, decode : ndarray of int64, shape (n,)
        Lengths in tokens.
    component : ndarray of int64, shape (n,)
        Index (in the spec's order) of the component each request came from.

    Notes
    -----
    The component of each request is drawn independently with the mixture weights (so an
    80/20 mix of 2,000 requests has about, not exactly, 400 summarization requests).
    """
    weights = parse_mixture(spec)
    names = list(weights)
    comp = rng.choice(len(names), size=n, p=np.array([weights[k] for k in names]))
    s = np.empty(n, dtype=np.int64)
    o = np.empty(n, dtype=np.int64)
    for c, name in enumerate(names):
        idx = np.flatnonzero(comp == c)
        s[idx], o[idx] = component(name).sample(idx.size, rng)
    return s, o, comp


#: Most requests a generator draws (ours: 24 bytes a request in memory and about 20 in a
#: file, so 10^7 is a few hundred MB, while n = 10^9 would fill a 24 GB machine).
MAX_REQUESTS = 10_000_000


def check_size(n: Any, memory: Any) -> None:
    """Raise ``ValueError`` unless ``n`` (requests) and ``memory`` (tokens) are positive ints,
    ``n`` at most :data:`MAX_REQUESTS` (checked before anything is drawn). Source: ours."""
    for name, value in (("n", n), ("memory", memory)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if n > MAX_REQUESTS:
        raise ValueError(
            f"n = {n:,} requests is more than the {MAX_REQUESTS:,} lpsched generates (an "
            "instance file of that size is a few hundred MB, and every policy holds it in memory)"
        )


def check_fits(s: np.ndarray, o: np.ndarray, memory: int, what: str) -> None:
    """Raise :class:`InstanceError` naming the first request with ``s_i + o_i > M`` (tokens).

    Generators refuse such draws instead of clipping them (SPEC section 1). Source: ours.
    """
    over = np.flatnonzero(s + o > memory)
    if over.size:
        i = int(over[0])
        raise InstanceError(
            f"{what}: request {i} has prefill {int(s[i])} + decode {int(o[i])} = "
            f"{int(s[i] + o[i])} tokens > memory M = {memory} ({over.size} such requests); "
            "choose a larger memory M"
        )


def generate(
    workload: str,
    n: int,
    memory: int,
    *,
    seed: int = 0,
    arrival_rate: float | None = None,
    name: str | None = None,
    arrival_rate_s: float | None = None,
) -> Instance:
    """A random instance from a named workload.

    ``n`` requests drawn by :func:`sample_lengths` (each from one of the workload's
    components), all at round 0 unless an arrival rate is given.

    Parameters
    ----------
    workload : str
        A name of :data:`WORKLOADS` or an inline mixture (:func:`parse_mixture`).
    n : int
        Number of requests, ``>= 1``.
    memory : int
        KV-cache budget ``M`` in tokens.
    seed : int
        Seed of ``numpy.random.default_rng``; the same arguments give the same instance.
    arrival_rate : float, optional
        Poisson arrivals with this many requests per round; ``None``: all arrive at round 0.
    name : str, optional
        Instance name; default ``"{workload}-n{n}-M{memory}-s{seed}"``.
    arrival_rate_s : float, optional
        Poisson arrivals in seconds (``arrival_s``, SPEC section 10) with this many requests
        per second, drawn as ``arrival_rate`` draws its rounds (the same exponential gaps of
        the same generator, unrounded; :func:`~.arrivals.poisson_arrival_seconds`); the
        arrival rounds stay 0. Not with ``arrival_rate``.

    Returns
    -------
    Instance
        With ``metadata`` recording the generator, workload, seed and table sources.

    Raises
    ------
    ValueError
        Unknown workload or ``n < 1``; both ``arrival_rate`` and ``arrival_rate_s``.
    InstanceError
        A drawn request has ``s_i + o_i > M`` (nothing is clipped: choose a larger ``M``).
    """
    check_size(n, memory)
    if arrival_rate is not None and arrival_rate_s is not None:
        raise ValueError("give arrival_rate (rounds) or arrival_rate_s (seconds), not both")
    rng = np.random.default_rng(seed)
    s, o, _ = sample_lengths(workload, n, rng)
    label = f"{workload}-n{n}-M{memory}-s{seed}" if name is None else name
    check_fits(s, o, memory, f"workload {workload!r}")
    arrival = None if arrival_rate is None else poisson_arrivals(n, arrival_rate, rng)
    seconds = None
    meta_s: dict[str, Any] = {}
    if arrival_rate_s is not None:
        seconds = poisson_arrival_seconds(n, arrival_rate_s, rng)
        meta_s = {"arrival_rate_s": arrival_rate_s}
    weights = parse_mixture(workload)
    return Instance.from_arrays(
        s,
        o,
        memory,
        arrival,
        name=label,
        metadata={
            "generator": "lpsched.generators.workloads.generate",
            "workload": workload,
            "weights": weights,
            "seed": seed,
            "arrival_rate": arrival_rate,
            **meta_s,
            "sources": {k: component(k).source for k in weights},
        },
        arrival_s=seconds,
    )


def from_traces(
    paths: Sequence[str | os.PathLike[str]],
    n: int,
    memory: int,
    *,
    weights: Sequence[float] | None = None,
    seed: int = 0,
    round_s: float | None = None,
    name: str | None = None,
    skip_oversized: bool = False,
    arrival_seconds: bool = False,
) -> Instance:
    """An instance of real trace rows: ``n`` rows drawn from one or more trace CSV files.

    Parameters
    ----------
    paths : sequence of path-like
        Trace CSVs (``num_prefill_tokens,num_decode_tokens[,arrived_at]``).
    n : int
        Number of requests.
    memory : int
        KV-cache budget ``M`` (tokens).
    weights : sequence of float, optional
        Share of the requests drawn from each file (default equal). The count from each file
        is fixed, ``round(n * w)``, adjusted so that the counts sum to ``n``.
    seed : int
        Seed; rows are drawn without replacement (a file with fewer rows than its share is an
        error: nothing is repeated silently), then the
        requests of all files are shuffled together (so that request order, which FCFS
        follows, does not group the files).
    round_s : float, optional
        Keep the trace's arrivals: every file needs an ``arrived_at`` column (seconds), and
        request ``i`` arrives at round ``floor((t_i - t_0) / round_s)``, ``t_0`` the earliest
        drawn time (:func:`lpsched.generators.arrivals.trace_arrival_rounds`). Drawing a subset
        of rows thins the arrival process. Default: all requests arrive at round 0.
    name : str, optional
        Instance name (default ``traces-n{n}-M{memory}-s{seed}``).
    skip_oversized : bool
        Leave out, before drawing, every row with ``s_i + o_i > M`` (a request that cannot run
        alone within the KV cache). Default ``False``: drawing such a row is an error. When no
        row is oversized the instance is the same either way.
    arrival_seconds : bool
        Keep the trace's arrivals in seconds as ``arrival_s`` (``t_i - t_0``, ``t_0`` the
        earliest drawn time; every file needs ``arrived_at``): the online policies admit by
        them under a time model (SPEC section 10). Independent of ``round_s``, which gives the
        arrival rounds (default all 0). The rows drawn are the same either way.

    Returns
    -------
    Instance
        ``metadata["rows"]`` lists ``[file, line]`` of every request, in request order; with
        ``skip_oversized``, ``metadata["skipped_oversized"]`` gives, per file, how many rows
        were left out; with ``arrival_seconds``, ``arrival_s`` holds the seconds.

    Raises
    ------
    InstanceError
        Bad file (see :func:`~lpsched.io.read_trace_csv`), a drawn row with
        ``s + o > M`` (named by file and line; not with ``skip_oversized``), or a file with
        fewer (fitting) rows than its share of ``n``.
    ValueError
        Bad weights.

    Notes
    -----
    Source: ours. Rows are drawn without replacement from the rows that are kept, so that
    skipping changes which rows can be drawn but never repeats one.
    """
    check_size(n, memory)
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    paths = [os.fspath(p) for p in paths]
    if not paths:
        raise ValueError("give at least one trace file")
    w = np.ones(len(paths)) if weights is None else np.asarray(weights, dtype=float)
    if w.shape != (len(paths),) or not np.all((w > 0) & np.isfinite(w)):
        raise ValueError(f"give one positive finite weight per trace file ({len(paths)} files)")
    counts = np.floor(n * w / w.sum()).astype(int)
    counts[np.argsort(-(n * w / w.sum() - counts), kind="stable")[: n - counts.sum()]] += 1
    rng = np.random.default_rng(seed)
    s_parts, o_parts, t_parts, rows, where, skipped = [], [], [], [], [], []
    for path, k in zip(paths, counts.tolist(), strict=True):
        s, o, t, line = read_trace_csv(path, with_lines=True)
        if (round_s is not None or arrival_seconds) and t is None:
            raise InstanceError(
                f"{path}: line 1: missing column 'arrived_at' (needed to keep the trace's arrivals)"
            )
        keep = np.flatnonzero(s + o <= memory) if skip_oversized else np.arange(s.size)
        skipped.append(s.size - keep.size)
        if k > keep.size:
            fitting = f" with s + o <= M = {memory}" if skip_oversized else ""
            raise InstanceError(
                f"{path}: has {keep.size} rows{fitting}, fewer than the {k} requests asked "
                "of it (rows are drawn without replacement)"
            )
        pick = keep[rng.choice(keep.size, size=k, replace=False)]
        for i in pick.tolist():
            if s[i] + o[i] > memory:
                raise InstanceError(
                    f"{path}: line {line[i]}: num_prefill_tokens {int(s[i])} + "
                    f"num_decode_tokens {int(o[i])} > memory M = {memory}; choose a larger M "
                    "or skip such rows (--skip-oversized)"
                )
        s_parts.append(s[pick])
        o_parts.append(o[pick])
        if round_s is not None or arrival_seconds:
            assert t is not None  # checked above: the arrivals need the 'arrived_at' column
            t_parts.append(t[pick])
        rows += [[os.path.basename(path), int(line[i])] for i in pick]
        where += [f"{path}: line {line[i]}" for i in pick]
    perm = rng.permutation(n)
    arrival = None
    if round_s is not None:
        arrival = trace_arrival_rounds(
            np.concatenate(t_parts)[perm], round_s, rows=[where[i] for i in perm.tolist()]
        )
        decode = np.concatenate(o_parts)
        if int(arrival.max()) + int(decode.sum()) > MAX_VALUE:
            last = int(np.argmax(arrival))
            raise InstanceError(
                f"{where[int(perm[last])]}: field 'arrived_at' gives round {int(arrival[last])}, "
                f"and with the {int(decode.sum())} decode rounds of the requests the horizon "
                "passes 2^40 rounds; use a longer round (--round-ms) or fewer rows"
            )
    seconds = None
    if arrival_seconds:
        t_all = np.concatenate(t_parts)[perm]
        bad = np.flatnonzero(~np.isfinite(t_all))
        if bad.size:
            raise InstanceError(
                f"{where[int(perm[bad[0]])]}: field 'arrived_at' must be a finite time in seconds, "
                f"got {t_all[bad[0]].item()!r}"
            )
        seconds = t_all - t_all.min()
    meta: Mapping[str, Any] = {
        "generator": "lpsched.generators.workloads.from_traces",
        "traces": [os.path.basename(p) for p in paths],
        "counts": counts.tolist(),
        "seed": seed,
        "round_s": round_s,
        "rows": [rows[i] for i in perm.tolist()],
    }
    if skip_oversized:
        meta = {**meta, "skipped_oversized": skipped}
    if arrival_seconds:
        meta = {**meta, "arrival_s": "arrived_at - earliest drawn arrived_at (seconds)"}
    return Instance.from_arrays(
        np.concatenate(s_parts)[perm],
        np.concatenate(o_parts)[perm],
        memory,
        arrival,
        name=f"traces-n{n}-M{memory}-s{seed}" if name is None else name,
        metadata=meta,
        arrival_s=seconds,
    )
