"""Small random instances for exact studies: the optimality-gap workloads and the ratio workloads.

* :data:`EXACT_WORKLOADS` -- ``paper-scaled`` (the paper's mix divided by a factor),
  ``scaled-mix`` (the stress workload where the LP is weak), ``uniform-small`` and
  ``jaillet-synthetic`` (the predecessor paper's synthetic experiment,
  :mod:`lpsched.generators.jaillet`): ``(n, seed, memory)`` -> instance, sized for the exact
  MIP (the optimality-gap and certified-gap tables);
* :func:`small_instance` with :data:`RATIO_WORKLOADS` -- ``uniform``, ``mix``,
  ``heavy-prefill``, ``heavy-decode`` at ``n <= 10``, for the empirical ratios against 48;
* :data:`ASSUMPTION_WORKLOADS` -- ``small-peaks``, ``common-prompt``, ``identical``: small
  instances that meet the assumptions of the later algorithms' theorems (SVF: every peak
  ``s_i + o_i <= M / 2``; GBA: one prompt length; SPS: one prompt and one decode length), so
  that each algorithm's empirical ratio can be set beside its own proven constant;
  :func:`small_instance` draws them too;
* :data:`REGIME_WORKLOADS` -- ``large-prompts``, ``prompt-heavy``, ``response-heavy``: the
  three regimes of arXiv 2607.09248 (``s_i > M/4``; ``s_i <= M/4`` with ``o_i <= s_i``; with
  ``o_i > s_i``), whose instances meet Rect's and Response's theorems.

Source: ours (scaled versions of the seed paper's workloads, arXiv 2508.06133, section 6).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from ..instance import MAX_VALUE, Instance
from .jaillet import jaillet_synthetic
from .workloads import (
    PAPER_MEMORY,
    PAPER_WORKLOAD,
    check_fits,
    check_size,
    generate,
    sample_lengths,
)

__all__ = [
    "EXACT_WORKLOADS",
    "RATIO_WORKLOADS",
    "ASSUMPTION_WORKLOADS",
    "REGIME_WORKLOADS",
    "PAPER_SCALE",
    "scale_down",
    "paper_scaled",
    "scaled_mix",
    "uniform_small",
    "small_peaks",
    "common_prompt",
    "identical_requests",
    "REGIMES",
    "regime_instance",
    "large_prompts",
    "prompt_heavy",
    "response_heavy",
    "small_instance",
]

#: Workloads of :func:`small_instance`.
RATIO_WORKLOADS = ("uniform", "mix", "heavy-prefill", "heavy-decode")
#: Mean footprint ``s + o`` of the paper's mix in tokens (``paper-mix``, 200,000 draws).
_MIX_MEAN_SIZE = 799.0
#: The factor by which :func:`paper_scaled` divides the paper's lengths and M.
PAPER_SCALE = 20


def scale_down(instance: Instance, factor: int) -> Instance:
    """Divide every length and the KV-cache budget by ``factor``, rounding up.

    ``s_i' = ceil(s_i / f)``, ``o_i' = ceil(o_i / f)``, ``M' = ceil(M / f)`` (tokens; a
    round still emits one token, so decode lengths shrink in rounds too); prediction intervals
    ``l_i, u_i`` are divided the same way (rounding up keeps ``l_i' <= o_i' <= u_i'``); ids and
    arrivals are kept.

    Parameters
    ----------
    instance : Instance
        An instance with ``s_i + o_i`` below ``M``; rounding up can make ``s_i' + o_i'`` one
        more than ``ceil((s_i + o_i) / f)``, so a request right at ``M`` may no longer fit.
    factor : int
        ``1 <= factor <= 2^40``.

    Returns
    -------
    Instance
        Named ``{name}-div{factor}``; the instance's metadata, with ``metadata["scaled_from"]``
        (its name) and ``["factor"]`` (this call's factor) set.

    Raises
    ------
    ValueError
        ``factor`` is not an integer in ``[1, 2^40]``.
    InstanceError
        A scaled request no longer fits: ``s_i' + o_i' > M'`` (named).

    Notes
    -----
    Source: ours (the issue's tractable copies of the paper's mix).
    """
    if (
        isinstance(factor, bool)
        or not isinstance(factor, (int, np.integer))
        or not 1 <= factor <= MAX_VALUE
    ):
        raise ValueError(f"factor must be an integer in [1, 2^40], got {factor!r}")
    f = int(factor)

    def up(x: np.ndarray | None) -> np.ndarray | None:
        return None if x is None else -(-x // f)

    s, o = up(instance.prefill), up(instance.decode)
    assert s is not None and o is not None
    memory = -(-instance.memory // f)
    check_fits(s, o, memory, f"{instance.name} divided by {f}")
    return Instance.from_arrays(
        s,
        o,
        memory,
        None if instance.offline else instance.arrival,
        ids=instance.ids,
        decode_lo=up(instance.decode_lo),
        decode_hi=up(instance.decode_hi),
        name=f"{instance.name}-div{f}",
        metadata={**dict(instance.metadata), "scaled_from": instance.name, "factor": f},
    )


def paper_scaled(n: int, seed: int = 0, memory: int | None = None) -> Instance:
    """The paper's mix with lengths and M divided by 20: the tractable copy for exact tables.

    Draws ``n`` requests of ``paper-mix`` at the paper's ``M`` = 16,492 tokens (seed ``seed``)
    and divides lengths and ``M`` by 20, rounding up (:func:`scale_down`): ``M' = 825``. The
    short requests keep a decode length of 6 rounds at the median (mean 11), the arXiv ones 9
    (mean 15); about 20 average requests fit in ``M'``, so memory binds from ``n`` of about 30.

    Parameters
    ----------
    n : int
        Number of requests.
    seed : int
        Seed of the paper-mix draw.
    memory : int, optional
        The scaled budget ``M'`` (tokens); default ``ceil(16492 / 20) = 825``.

    Returns
    -------
    Instance
        Named ``paper{n}-s{seed}`` (``paper{n}-s{seed}-M{memory}`` with another ``memory``).

    Raises
    ------
    InstanceError
        A request does not fit a ``memory`` smaller than the default.

    Notes
    -----
    Source: ours. Why 20: the smallest factor of the range 20-40 at which HiGHS proves
    n = 60 within 60 s on most seeds; a larger one shortens the decode lengths further
    (``instances/README.md``).
    """
    check_size(n, 1 if memory is None else memory)
    full = generate(PAPER_WORKLOAD, n, PAPER_MEMORY, seed=seed)
    small = scale_down(full, PAPER_SCALE)
    if memory is None:
        memory = small.memory
    check_fits(small.prefill, small.decode, memory, "paper-scaled")
    label = f"paper{n}-s{seed}" + ("" if memory == small.memory else f"-M{memory}")
    return Instance.from_arrays(
        small.prefill,
        small.decode,
        memory,
        name=label,
        metadata={
            "generator": "lpsched.generators.small.paper_scaled",
            "workload": PAPER_WORKLOAD,
            "n": n,
            "seed": seed,
            "factor": PAPER_SCALE,
            "memory_before_scaling": PAPER_MEMORY,
        },
    )


def scaled_mix(n: int, seed: int = 0, memory: int = 50) -> Instance:
    """The stress workload: a bimodal 80/20 mix at M = 50 where the LP relaxation is weak.

    ``s_i`` uniform in 1..6 with probability 0.8 (conversation-like) or in 15..30 with
    probability 0.2 (summarization-like), ``o_i`` uniform in 1..12, all arriving at round 0.

    Parameters
    ----------
    n : int
        Number of requests.
    seed : int
        Seed of ``numpy.random.default_rng``.
    memory : int, default 50
        KV-cache budget ``M`` in tokens (``>= 42`` so that every request fits).

    Returns
    -------
    Instance
        Named ``mix{n}-s{seed}``. Source: ours (a scaled version of the seed paper's mix).
    """
    check_size(n, memory)
    rng = np.random.default_rng(seed)
    long = rng.random(n) < 0.2
    s = np.where(long, rng.integers(15, 31, n), rng.integers(1, 7, n))
    o = rng.integers(1, 13, n)
    check_fits(s, o, memory, "scaled-mix")
    return Instance.from_arrays(
        s,
        o,
        memory,
        name=f"mix{n}-s{seed}",
        metadata={"generator": "lpsched.generators.small.scaled_mix", "n": n, "seed": seed},
    )


def uniform_small(
    n: int, seed: int = 0, memory: int = 30, prefill: int = 10, decode: int = 10
) -> Instance:
    """A homogeneous small workload: ``s_i`` uniform in 0..prefill, ``o_i`` in 1..decode.

    Parameters
    ----------
    n, seed
        As for :func:`scaled_mix`.
    memory : int, default 30
        KV-cache budget ``M`` in tokens (``>= prefill + decode``).
    prefill, decode : int
        Largest prefill and decode length (tokens).

    Returns
    -------
    Instance
        Named ``uniform{n}-s{seed}``. Source: ours.
    """
    check_size(n, memory)
    rng = np.random.default_rng(seed)
    s = rng.integers(0, prefill + 1, n)
    o = rng.integers(1, decode + 1, n)
    check_fits(s, o, memory, "uniform-small")
    return Instance.from_arrays(
        s,
        o,
        memory,
        name=f"uniform{n}-s{seed}",
        metadata={
            "generator": "lpsched.generators.small.uniform_small",
            "n": n,
            "seed": seed,
            "prefill_max": prefill,
            "decode_max": decode,
        },
    )


def _small_instance_of(
    workload: str, s: np.ndarray, o: np.ndarray, memory: int, n: int, seed: int
) -> Instance:
    """The instance of :func:`small_instance` for ``workload`` (named and described by it)."""
    check_fits(s, o, memory, workload)
    return Instance.from_arrays(
        s,
        o,
        memory,
        name=f"small-{workload}-n{n}-M{memory}-s{seed}",
        metadata={
            "source": "lpsched.generators.small.small_instance",
            "workload": workload,
            "seed": seed,
        },
    )


def small_peaks(n: int, seed: int = 0, memory: int = 32) -> Instance:
    """Small random requests whose peaks are at most half the memory: SVF's theorem at 1/2.

    ``o_i`` uniform on ``1..max(1, floor(M/4))`` and then ``s_i`` uniform on
    ``0..floor(M/2) - o_i``, all arriving at round 0; so every peak ``s_i + o_i <=
    floor(M/2) <= M / 2``, the assumption of SVF's theorem with ``alpha = 1/2``
    (``TEL <= (1 + 2 / (1 - alpha)) OPT = 5 OPT``; the instance's own ``alpha``, its largest
    peak over ``M``, is at most 1/2 and gives a constant of at most 5).

    Parameters
    ----------
    n : int
        Number of requests, ``>= 1``.
    seed : int
        Seed of ``numpy.random.default_rng``; the same ``(n, seed, memory)`` gives the same
        instance.
    memory : int, default 32
        KV-cache budget ``M`` in tokens, ``>= 2`` (so that ``floor(M/2) >= 1 >= o_i``).

    Returns
    -------
    Instance
        Named ``small-small-peaks-n{n}-M{M}-s{seed}``; ``metadata`` records the workload and
        the seed.

    Raises
    ------
    ValueError
        ``n < 1`` or ``memory < 2``.

    Notes
    -----
    Source: ours; the assumption is that of SVF's theorem (arXiv 2606.22327, as summarised in
    ``algorithms-2026``: every peak ``s_i + o_i <= alpha M``, all at round 0).
    """
    _check_small(n, memory)
    rng = np.random.default_rng(seed)
    half = memory // 2
    o = rng.integers(1, max(1, memory // 4) + 1, size=n)
    s = rng.integers(0, half - o + 1)  # one draw per request, 0..half - o_i
    return _small_instance_of("small-peaks", s, o, memory, n, seed)


def common_prompt(n: int, seed: int = 0, memory: int = 32) -> Instance:
    """One prompt length for every request, random decode lengths: GBA's setting.

    One ``s`` uniform on ``0..floor(M/2)`` shared by all requests, ``o_i`` uniform on
    ``1..max(1, floor(M/2))`` (so ``s + o_i <= M``), all arriving at round 0: the setting of
    the staggered-pipeline paper's GBA and GBA-D (arXiv 2601.22996), whose constant 10.67
    needs one common prompt length and allows any decode lengths.

    Parameters
    ----------
    n, seed, memory
        As for :func:`small_peaks`.

    Returns
    -------
    Instance
        Named ``small-common-prompt-n{n}-M{M}-s{seed}``; ``metadata`` as for
        :func:`small_peaks`.

    Raises
    ------
    ValueError
        As :func:`small_peaks`.

    Notes
    -----
    Source: ours; the assumption is that of arXiv 2601.22996 (one common prompt length).
    """
    return _one_prompt("common-prompt", n, seed, memory, one_decode=False)


def identical_requests(n: int, seed: int = 0, memory: int = 32) -> Instance:
    """``n`` copies of one request: one prompt length and one decode length, SPS's setting.

    One ``s`` uniform on ``0..floor(M/2)`` and one ``o`` uniform on ``1..max(1, floor(M/2))``
    shared by all requests (so ``s + o <= M``), all arriving at round 0: the setting of the
    staggered pipeline SPS (arXiv 2601.22996), a 2-approximation for requests of one length
    with one prompt length. Such an instance meets GBA's assumption too.

    Parameters
    ----------
    n : int
        Number of copies, ``>= 1``.
    seed, memory
        As for :func:`small_peaks`.

    Returns
    -------
    Instance
        Named ``small-identical-n{n}-M{M}-s{seed}``; ``metadata`` as for :func:`small_peaks`.

    Raises
    ------
    ValueError
        ``n < 1`` or ``memory < 2`` (as :func:`small_peaks`).

    Notes
    -----
    Source: ours; the assumption is that of SPS in arXiv 2601.22996 (one prompt length, one
    decode length).
    """
    return _one_prompt("identical", n, seed, memory, one_decode=True)


#: The three regimes of arXiv 2607.09248 (``Lambda = M / 4``): name -> (least ``M``, what its
#: requests are, the paper's constant there).
REGIMES = {
    "large-prompts": (2, "large: s_i > M/4", "Rect, 36"),
    "prompt-heavy": (4, "small prompt-heavy: s_i <= M/4 and o_i <= s_i", "Rect, 36"),
    "response-heavy": (2, "small response-heavy: s_i <= M/4 < ... o_i > s_i", "Response, 236/3"),
}


def regime_instance(regime: str, n: int, seed: int = 0, memory: int = 32) -> Instance:
    """Small random requests of one regime of arXiv 2607.09248, all arriving at round 0.

    ``large-prompts``: ``s_i`` uniform on ``floor(M/4) + 1..M - 1``, then ``o_i`` on
    ``1..M - s_i``. ``prompt-heavy``: ``s_i`` on ``1..floor(M/4)``, then ``o_i`` on ``1..s_i``.
    ``response-heavy``: ``s_i`` on ``0..floor(M/4)``, then ``o_i`` on ``s_i + 1..M - s_i``.
    Rect is proven 36-competitive on instances of either of the first two regimes, Response
    236/3-competitive (about 78.67) on the third (:data:`REGIMES`).

    Parameters
    ----------
    regime : str
        A name of :data:`REGIMES`.
    n, seed
        As for :func:`small_peaks`.
    memory : int, default 32
        KV-cache budget ``M`` in tokens, at least the regime's least (``prompt-heavy``: 4,
        since ``1 <= o_i <= s_i <= M/4``; the others: 2).

    Returns
    -------
    Instance
        Named ``small-{regime}-n{n}-M{M}-s{seed}``; ``metadata`` as for :func:`small_peaks`.

    Raises
    ------
    ValueError
        An unknown regime, ``n < 1`` or ``memory`` below the regime's least.

    Notes
    -----
    Source: ours; the regimes are those of arXiv 2607.09248 (as summarised in
    ``algorithms-2026``, with ``Lambda = M / 4``).
    """
    if regime not in REGIMES:
        raise ValueError(f"unknown regime {regime!r}; choose from {', '.join(REGIMES)}")
    _check_small(n, memory)
    least = REGIMES[regime][0]
    if memory < least:
        raise ValueError(f"a {regime} request needs M >= {least} tokens, got {memory}")
    rng = np.random.default_rng(seed)
    quarter = memory // 4
    if regime == "large-prompts":
        s = rng.integers(quarter + 1, memory, size=n)
        o = rng.integers(1, memory - s + 1)  # one draw per request, 1..M - s_i
    elif regime == "prompt-heavy":
        s = rng.integers(1, quarter + 1, size=n)
        o = rng.integers(1, s + 1)  # 1..s_i
    else:
        s = rng.integers(0, quarter + 1, size=n)
        o = rng.integers(s + 1, memory - s + 1)  # s_i + 1..M - s_i
    return _small_instance_of(regime, s, o, memory, n, seed)


#: Generators ``(n, seed=0, memory=32)`` of each regime (:func:`regime_instance`).
large_prompts = functools.partial(regime_instance, "large-prompts")
prompt_heavy = functools.partial(regime_instance, "prompt-heavy")
response_heavy = functools.partial(regime_instance, "response-heavy")


def _one_prompt(workload: str, n: int, seed: int, memory: int, *, one_decode: bool) -> Instance:
    """One prompt length ``s`` uniform on ``0..floor(M/2)`` for every request, and decode
    lengths uniform on ``1..max(1, floor(M/2))``: one for all (``one_decode``) or one each."""
    _check_small(n, memory)
    rng = np.random.default_rng(seed)
    half = memory // 2
    s = np.full(n, int(rng.integers(0, half + 1)), dtype=np.int64)
    if one_decode:
        o = np.full(n, int(rng.integers(1, max(1, half) + 1)), dtype=np.int64)
    else:
        o = rng.integers(1, max(1, half) + 1, size=n)
    return _small_instance_of(workload, s, o, memory, n, seed)


def _check_small(n: int, memory: int) -> None:
    """``ValueError`` unless ``n >= 1`` and ``memory >= 2`` are integers (as
    :func:`small_instance`)."""
    check_size(n, memory)
    if memory < 2:
        raise ValueError(f"memory M must be >= 2 tokens, got {memory}")


#: Small workloads whose instances meet a later algorithm's theorem (arXiv 2606.22327,
#: 2601.22996): name -> generator ``(n, seed, memory)``; :func:`small_instance` draws them too.
ASSUMPTION_WORKLOADS: dict[str, Callable[..., Instance]] = {
    "small-peaks": small_peaks,
    "common-prompt": common_prompt,
    "identical": identical_requests,
}


#: Small workloads of the three regimes of arXiv 2607.09248 (``Lambda = M / 4``), whose
#: instances meet Rect's theorem (``large-prompts``, ``prompt-heavy``) or Response's
#: (``response-heavy``): name -> generator ``(n, seed, memory)``; :func:`small_instance` draws
#: them too. ``prompt-heavy`` needs ``M >= 4``.
REGIME_WORKLOADS: dict[str, Callable[..., Instance]] = {
    "large-prompts": large_prompts,
    "prompt-heavy": prompt_heavy,
    "response-heavy": response_heavy,
}


#: Small synthetic workloads for exact solving: name -> generator ``(n, seed, memory)``. A
#: generator whose ``n`` or ``memory`` has a default may be called without it (``lpsched
#: generate`` then leaves out ``-n`` or ``--memory``); ``jaillet-synthetic`` draws both.
EXACT_WORKLOADS: dict[str, Callable[..., Instance]] = {
    "paper-scaled": paper_scaled,
    "scaled-mix": scaled_mix,
    "uniform-small": uniform_small,
    "jaillet-synthetic": jaillet_synthetic,
}


def small_instance(workload: str, n: int, memory: int, *, seed: int = 0) -> Instance:
    """A small random offline instance for exact ratio studies.

    Parameters
    ----------
    workload : str
        A name of :data:`RATIO_WORKLOADS` or :data:`ASSUMPTION_WORKLOADS`:
        ``uniform``: ``o_i`` uniform on ``1..max(1, M/4)``, ``s_i`` on ``0..M/2``.
        ``mix``: ``(s_i, o_i)`` drawn from the paper's mix (``paper-mix`` of
        :mod:`lpsched.generators.workloads`), both scaled by ``c = M / (4 * 799)`` (the mix's
        mean footprint is 799 tokens, so about four average requests fit in ``M``; the ratio
        ``s_i / o_i`` of the real mix is kept, hence mostly ``o_i`` in ``1..3``).
        ``heavy-prefill``: ``s_i`` on ``M/4..3M/4``, ``o_i`` on ``1..max(1, M/8)``.
        ``heavy-decode``: ``s_i`` on ``0..M/8``, ``o_i`` on ``M/4..M/2``.
        ``small-peaks``, ``common-prompt``, ``identical``: the theorem-assumption workloads
        of :data:`ASSUMPTION_WORKLOADS` (:func:`small_peaks`, :func:`common_prompt`,
        :func:`identical_requests`); ``large-prompts``, ``prompt-heavy``,
        ``response-heavy``: the regimes of :data:`REGIME_WORKLOADS` (:func:`regime_instance`).
    n : int
        Number of requests, ``>= 1``.
    memory : int
        KV-cache budget ``M`` in tokens, ``>= 2``.
    seed : int
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    Instance
        Lengths rounded to integers, ``o_i >= 1``, and ``s_i`` cut to ``M - o_i`` where needed
        (so ``s_i + o_i <= M``); ``metadata`` records workload and seed.

    Raises
    ------
    ValueError
        Unknown workload, ``n < 1`` or ``memory < 2`` (``< 4`` for ``prompt-heavy``).

    Notes
    -----
    Source: ours (the 80/20 mix is the paper's headline workload, section 6).
    """
    named = {**ASSUMPTION_WORKLOADS, **REGIME_WORKLOADS}
    if workload not in RATIO_WORKLOADS and workload not in named:
        names = (*RATIO_WORKLOADS, *named)
        raise ValueError(f"unknown small workload {workload!r}; choose from {', '.join(names)}")
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    if memory < 2:
        raise ValueError(f"memory M must be >= 2 tokens, got {memory}")
    if workload in named:
        return named[workload](n, seed=seed, memory=memory)
    rng = np.random.default_rng(seed)
    M = int(memory)
    if workload == "uniform":
        o = rng.integers(1, max(1, M // 4) + 1, size=n)
        s = rng.integers(0, M // 2 + 1, size=n)
    elif workload == "heavy-prefill":
        o = rng.integers(1, max(1, M // 8) + 1, size=n)
        s = rng.integers(M // 4, 3 * M // 4 + 1, size=n)
    elif workload == "heavy-decode":
        o = rng.integers(max(1, M // 4), max(1, M // 2) + 1, size=n)
        s = rng.integers(0, M // 8 + 1, size=n)
    else:
        s_big, o_big, _ = sample_lengths(PAPER_WORKLOAD, n, rng)
        c = M / (4 * _MIX_MEAN_SIZE)
        o = np.maximum(1, np.rint(o_big * c)).astype(np.int64)
        o = np.minimum(o, M)
        s = np.rint(s_big * c).astype(np.int64)
    o = np.asarray(o, dtype=np.int64)
    s = np.minimum(np.asarray(s, dtype=np.int64), M - o)
    return _small_instance_of(workload, s, o, M, n, seed)
