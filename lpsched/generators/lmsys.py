"""LMSYS-style short conversations from published length statistics (no trace file).

The seed paper's short requests are LMSYS-Chat-1M conversations (arXiv 2508.06133, section 6);
no LMSYS length trace is available offline, so lpsched builds them from the figures that the
papers publish. Each reading is a pair of independent lognormal laws, one for the prefill
length ``s_i`` and one for the decode length ``o_i`` (tokens), conditioned on
``s_i + o_i <= max_total``:

``lmsys-turn`` (the default reading)
    Per-turn means of LMSYS-Chat-1M, Llama-2 tokenizer: 69.5 prompt and 214.5 response tokens
    (Zheng et al., *LMSYS-Chat-1M*, arXiv 2309.11998, Table 1). Table 1 gives no spread, so
    the shape ``sigma`` comes from the subset reading below (1.616 for prompts, 1.131 for
    outputs): a lognormal's ``sigma`` does not change when lengths are rescaled (words to
    tokens), and the subset, like a turn, counts one request.
``lmsys-subset``
    The 10,000-conversation subset of LMSYS-Chat-1M used by Jaillet et al. (arXiv 2502.07115,
    section on numerical experiments; words stood in for tokens): prompt median 11, mean
    40.62; output median 45, mean 85.32. ``sigma = sqrt(2 ln(mean / median))``, the
    median-and-mean fit of a lognormal.
``lmsys-conversation``
    The published percentiles of LMSYS-Chat-1M conversations in the 4k-filtered length trace of
    the Vidur simulator (microsoft/vidur, ``data/processed_traces``; Llama-2 tokens, as
    summarised beside the public traces in ``../shared/traces/README.md``): prefill mean 686,
    median 417, p90 1,678; decode mean 197, median 139, p90 484. ``sigma = ln(p90 / median) /
    z_0.9`` (1.086 and 0.974), the quantile fit.

In every reading ``mu`` is then chosen so that the *conditioned* law (after the cut at
``max_total``) has the published mean, and lengths are rounded to the nearest integer, at
least 1. ``max_total`` is 4,096 tokens: the context window of the Llama-2 models behind the
Llama-2 token counts, and the filter of the arXiv trace that makes up the other 20% of the
paper's mix. The cut removes under 0.5% of the draws. Prefill and decode are drawn
independently: no source publishes their correlation.

:func:`common_prompt_instance` builds the identical-prompt instances of arXiv 2601.22996's
experiments from the decode law of one reading: every request has the same prefill ``s``
(79 tokens there) and an LMSYS-style decode length.

Source: the readings and figures as cited above; the lognormal family, the conditioning and
the mean calibration are ours.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cache

import numpy as np

from ..instance import Instance

__all__ = [
    "COMMON_PROMPT",
    "COMMON_PROMPT_MEMORIES",
    "common_prompt_instance",
    "Lognormal",
    "LognormalWorkload",
    "LMSYS_READINGS",
    "LMSYS_PARAMETERS",
    "MAX_TOTAL",
    "MIN_KEPT",
    "SIGMA_RANGE",
    "lmsys_workload",
    "with_parameters",
]

#: Standard normal quantile at 0.9.
Z90 = 1.2815515655446004
#: Default cut ``s_i + o_i <= max_total`` (tokens).
MAX_TOTAL = 4096
#: The largest number of redraw passes of :meth:`LognormalWorkload.sample`.
_MAX_PASSES = 200
#: The shapes a reading takes: at sigma = 4 the median length is already 1 token, and the
#: published means hold only through the tail (the calibration cannot go further).
SIGMA_RANGE = (0.01, 4.0)


@dataclass(frozen=True)
class Lognormal:
    """A lognormal law of a length in tokens: ``exp(mu + sigma Z)``, ``Z`` standard normal.

    Attributes
    ----------
    mu : float
        Location (log tokens).
    sigma : float
        Shape, ``> 0``: the standard deviation of the log length.
    """

    mu: float
    sigma: float

    def __post_init__(self) -> None:
        if not (math.isfinite(self.mu) and math.isfinite(self.sigma) and self.sigma > 0):
            raise ValueError(
                f"a lognormal law needs a finite mu and a positive finite sigma, got "
                f"mu = {self.mu!r}, sigma = {self.sigma!r}"
            )

    @classmethod
    def from_mean(cls, mean: float, sigma: float) -> Lognormal:
        """The law with this mean (tokens) and shape: ``mu = ln(mean) - sigma^2 / 2``.

        Raises
        ------
        ValueError
            ``mean <= 0`` or ``sigma <= 0`` (or not finite).
        """
        _positive("mean", mean)
        _positive("sigma", sigma)
        return cls(math.log(mean) - sigma * sigma / 2, sigma)

    @classmethod
    def from_median_mean(cls, median: float, mean: float) -> Lognormal:
        """The median-and-mean fit: ``mu = ln(median)``, ``sigma = sqrt(2 ln(mean / median))``.

        Raises
        ------
        ValueError
            Non-positive values, or ``mean <= median`` (no lognormal has it).
        """
        _positive("median", median)
        _positive("mean", mean)
        if not mean > median:
            raise ValueError(f"a lognormal has mean > median; got median {median}, mean {mean}")
        return cls(math.log(median), math.sqrt(2 * math.log(mean / median)))

    @classmethod
    def from_median_p90(cls, median: float, p90: float) -> Lognormal:
        """The quantile fit: ``mu = ln(median)``, ``sigma = ln(p90 / median) / z_0.9``.

        Raises
        ------
        ValueError
            Non-positive values, or ``p90 <= median``.
        """
        _positive("median", median)
        _positive("p90", p90)
        if not p90 > median:
            raise ValueError(f"need p90 > median; got median {median}, p90 {p90}")
        return cls(math.log(median), math.log(p90 / median) / Z90)

    @property
    def mean(self) -> float:
        """Mean in tokens, ``exp(mu + sigma^2 / 2)`` (before any cut or rounding)."""
        return math.exp(self.mu + self.sigma * self.sigma / 2)

    @property
    def median(self) -> float:
        """Median in tokens, ``exp(mu)`` (before any cut or rounding)."""
        return math.exp(self.mu)


def _positive(name: str, value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be positive and finite, got {value!r}")


@dataclass(frozen=True)
class LognormalWorkload:
    """Independent lognormal prefill and decode lengths conditioned on ``s_i + o_i <= max_total``.

    Attributes
    ----------
    name : str
        Workload name (with its parameters, e.g. ``"lmsys-turn[prefill_sigma=1]"``).
    source : str
        Where the figures come from.
    prefill, decode : Lognormal
        The laws of ``s_i`` and ``o_i`` before the cut (tokens).
    max_total : int
        The cut: every drawn request has ``s_i + o_i <= max_total`` (tokens, ``>= 2``).
    """

    name: str
    source: str
    prefill: Lognormal
    decode: Lognormal
    max_total: int = MAX_TOTAL

    def __post_init__(self) -> None:
        _check_max_total(self.max_total)

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Draw ``n`` requests: ``(prefill, decode)``, each ndarray of int64 shape (n,), tokens.

        Each length is ``max(1, rint(exp(mu + sigma Z)))``; a pair with ``s + o >
        max_total`` is drawn again (rejection: the conditioned law, nothing clipped).

        Raises
        ------
        ValueError
            The cut keeps so little of the law that 200 redraw passes did not fill ``n``.
        """
        s = np.empty(n, dtype=np.int64)
        o = np.empty(n, dtype=np.int64)
        todo = np.arange(n)
        for _ in range(_MAX_PASSES):
            if todo.size == 0:
                return s, o
            k = todo.size
            s[todo] = _lengths(self.prefill, rng.standard_normal(k), self.max_total)
            o[todo] = _lengths(self.decode, rng.standard_normal(k), self.max_total)
            todo = todo[s[todo] + o[todo] > self.max_total]
        if todo.size == 0:
            return s, o
        raise ValueError(
            f"workload {self.name!r}: the cut s + o <= max_total = {self.max_total} keeps too "
            "little of the law (redraws did not converge); raise max_total or lower the means"
        )


def _check_max_total(max_total: object) -> None:
    if isinstance(max_total, bool) or not isinstance(max_total, int) or max_total < 2:
        raise ValueError(f"max_total must be an integer >= 2 tokens, got {max_total!r}")


def _lengths(law: Lognormal, z: np.ndarray, cap: int) -> np.ndarray:
    """``max(1, rint(exp(mu + sigma z)))`` with values above ``cap`` held at ``cap`` (they are
    redrawn by the caller anyway, since the other length is at least 1)."""
    x = np.minimum(np.exp(np.minimum(law.mu + law.sigma * z, math.log(cap) + 1)), cap)
    return np.maximum(np.rint(x), 1).astype(np.int64)


@dataclass(frozen=True)
class _Reading:
    """One published reading: target means (tokens), default shapes and the source."""

    prefill_mean: float
    decode_mean: float
    prefill_sigma: float
    decode_sigma: float
    source: str


_SUBSET_PREFILL = Lognormal.from_median_mean(11, 40.62)
_SUBSET_DECODE = Lognormal.from_median_mean(45, 85.32)
_CONV_PREFILL = Lognormal.from_median_p90(417, 1678)
_CONV_DECODE = Lognormal.from_median_p90(139, 484)

#: The three readings of LMSYS-Chat-1M lengths (see the module docstring).
LMSYS_READINGS: dict[str, _Reading] = {
    "lmsys-turn": _Reading(
        69.5,
        214.5,
        _SUBSET_PREFILL.sigma,
        _SUBSET_DECODE.sigma,
        "LMSYS-Chat-1M per-turn means, Llama-2 tokens: prompt 69.5, response 214.5 "
        "(Zheng et al., arXiv 2309.11998, Table 1); lognormal shape from the subset of "
        "Jaillet et al. (arXiv 2502.07115)",
    ),
    "lmsys-subset": _Reading(
        40.62,
        85.32,
        _SUBSET_PREFILL.sigma,
        _SUBSET_DECODE.sigma,
        "10k-conversation subset of LMSYS-Chat-1M, words as tokens: prompt median 11, mean "
        "40.62; output median 45, mean 85.32 (Jaillet et al., arXiv 2502.07115)",
    ),
    "lmsys-conversation": _Reading(
        686.0,
        197.0,
        _CONV_PREFILL.sigma,
        _CONV_DECODE.sigma,
        "LMSYS-Chat-1M conversations, 4k-filtered Vidur trace, Llama-2 tokens: prefill mean "
        "686, median 417, p90 1,678; decode mean 197, median 139, p90 484 (microsoft/vidur, "
        "data/processed_traces)",
    ),
}

#: How a parameter value is written in a spec (ASCII digits; no ``_`` separators).
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|[+-]?(inf|nan)", re.I | re.A)
_INTEGER = re.compile(r"[+-]?\d+", re.A)
#: Parameters a reading takes in a workload spec, e.g. ``lmsys-turn[prefill_sigma=1.2]``.
LMSYS_PARAMETERS = ("prefill_sigma", "decode_sigma", "max_total")


def lmsys_workload(
    reading: str,
    *,
    prefill_sigma: float | None = None,
    decode_sigma: float | None = None,
    max_total: int = MAX_TOTAL,
) -> LognormalWorkload:
    """The lognormal workload of one LMSYS reading, with the published means.

    Parameters
    ----------
    reading : {"lmsys-turn", "lmsys-subset", "lmsys-conversation"}
        See the module docstring.
    prefill_sigma, decode_sigma : float, optional
        Shapes of the two laws (the standard deviations of the log lengths), in
        :data:`SIGMA_RANGE` = [0.01, 4]; default the reading's (module docstring). ``mu``
        follows from the published mean whatever the shape, so these move the spread, not the
        mean.
    max_total : int
        The cut ``s_i + o_i <= max_total`` (tokens); default 4,096.

    Returns
    -------
    LognormalWorkload
        Whose conditioned law has the published means (to about 1e-6 relative, by a
        fixed-point iteration on ``mu`` over a quadrature of the closed forms; before integer
        rounding, which moves the means by well under 1%).

    Raises
    ------
    ValueError
        Unknown reading, a shape outside :data:`SIGMA_RANGE`, ``max_total < 2``, a
        ``max_total`` at or below the published means (no law can have them), or a cut that
        keeps less than :data:`MIN_KEPT` = 50% of the law.
    """
    if reading not in LMSYS_READINGS:
        raise ValueError(f"unknown reading {reading!r}; known: {', '.join(LMSYS_READINGS)}")
    r = LMSYS_READINGS[reading]
    ps = r.prefill_sigma if prefill_sigma is None else prefill_sigma
    ds = r.decode_sigma if decode_sigma is None else decode_sigma
    lo, hi = SIGMA_RANGE
    for key, value in (("prefill_sigma", ps), ("decode_sigma", ds)):
        _positive(key, value)
        if not lo <= value <= hi:
            raise ValueError(f"{key} must lie in [{lo:g}, {hi:g}], got {value!r}")
    _check_max_total(max_total)
    if max_total <= r.prefill_mean + r.decode_mean:
        raise ValueError(
            f"max_total = {max_total} must exceed the reading's mean s + o = "
            f"{r.prefill_mean + r.decode_mean:g} tokens"
        )
    mu_s, mu_o = _calibrate(r.prefill_mean, r.decode_mean, float(ps), float(ds), max_total)
    params = {"prefill_sigma": prefill_sigma, "decode_sigma": decode_sigma}
    given = [f"{k}={float(v)!r}" for k, v in params.items() if v is not None]
    if max_total != MAX_TOTAL:
        given.append(f"max_total={max_total}")
    name = reading + (f"[{';'.join(given)}]" if given else "")
    return LognormalWorkload(
        name, r.source, Lognormal(mu_s, float(ps)), Lognormal(mu_o, float(ds)), max_total
    )


#: The least share of the law that the cut ``s + o <= max_total`` may keep: below it the
#: conditioned law is mostly the cut, not the published figures.
MIN_KEPT = 0.5


def _normal_cdf(x: np.ndarray) -> np.ndarray:
    """The standard normal CDF, elementwise (``math.erf``: numpy has no erf)."""
    return 0.5 * (1.0 + np.asarray(_ERF(x / math.sqrt(2.0)), dtype=float))


_ERF = np.frompyfunc(math.erf, 1, 1)


def _conditioned_means(
    mu_s: float, sigma_s: float, mu_o: float, sigma_o: float, c: int
) -> tuple[float, float, float]:
    """``(P, E[s | s + o <= c], E[o | s + o <= c])`` for independent lognormal ``s`` and
    ``o``: one integral over ``z`` (``s = exp(mu_s + sigma_s z)``) of the lognormal's closed
    forms ``P(o <= x) = Phi((ln x - mu) / sigma)`` and ``E[o; o <= x] = e^{mu + sigma^2/2}
    Phi((ln x - mu - sigma^2) / sigma)``, by the trapezoid rule on 4,001 points of ``z`` up to
    ``s = c`` (where the integrand vanishes)."""
    z_cut = (math.log(c) - mu_s) / sigma_s
    z = np.linspace(-12.0, min(12.0, z_cut), 4001)
    s = np.exp(mu_s + sigma_s * z)
    room = np.log(np.maximum(c - s, 1e-300))
    density = np.exp(-z * z / 2) / math.sqrt(2 * math.pi)
    fits = _normal_cdf((room - mu_o) / sigma_o) * density
    o_part = math.exp(mu_o + sigma_o * sigma_o / 2) * _normal_cdf(
        (room - mu_o - sigma_o * sigma_o) / sigma_o
    )
    p = float(np.trapezoid(fits, z))
    if not p > 1e-300:
        return 0.0, 0.0, 0.0
    return (
        p,
        float(np.trapezoid(fits * s, z)) / p,
        float(np.trapezoid(o_part * density, z)) / p,
    )


@cache
def _calibrate(
    mean_s: float, mean_o: float, sigma_s: float, sigma_o: float, max_total: int
) -> tuple[float, float]:
    """``(mu_s, mu_o)`` such that the laws conditioned on ``s + o <= max_total`` have the
    means ``mean_s``, ``mean_o`` (:func:`_conditioned_means`): fixed point ``mu <- mu +
    ln(target / current)``, which converges because each conditioned mean grows with its mu.

    Raises
    ------
    ValueError
        The cut keeps less than :data:`MIN_KEPT` of the calibrated law, or no fixed point.
    """
    mu_s, mu_o = Lognormal.from_mean(mean_s, sigma_s).mu, Lognormal.from_mean(mean_o, sigma_o).mu
    for _ in range(200):
        p, cur_s, cur_o = _conditioned_means(mu_s, sigma_s, mu_o, sigma_o, max_total)
        if not p >= MIN_KEPT:
            raise ValueError(
                f"the cut s + o <= max_total = {max_total} keeps only {p:.1%} of a law with "
                f"these means (at least {MIN_KEPT:.0%} needed); raise max_total or lower sigma"
            )
        step_s, step_o = math.log(mean_s / cur_s), math.log(mean_o / cur_o)
        mu_s, mu_o = mu_s + step_s, mu_o + step_o
        if abs(step_s) < 1e-10 and abs(step_o) < 1e-10:
            return mu_s, mu_o
    raise ValueError(
        f"cannot match the means {mean_s:g} and {mean_o:g} under s + o <= {max_total} "
        f"with sigma {sigma_s:g} / {sigma_o:g}; raise max_total or lower sigma"
    )


def with_parameters(reading: str, params: dict[str, str], spec: str) -> LognormalWorkload:
    """The workload of ``reading[k=v;...]`` in a spec string; errors name the spec and key.

    Raises
    ------
    ValueError
        Unknown parameter or a value that is not a number (integer for ``max_total``).
    """
    kwargs: dict[str, float | int] = {}
    for key, text in params.items():
        if key not in LMSYS_PARAMETERS:
            raise ValueError(
                f"workload {spec!r}: unknown parameter {key!r} of {reading}; known: "
                f"{', '.join(LMSYS_PARAMETERS)}"
            )
        integer = key == "max_total"
        if not (_INTEGER if integer else _NUMBER).fullmatch(text):
            kind = "an integer" if integer else "a number"
            raise ValueError(f"workload {spec!r}: {key} = {text!r} is not {kind}")
        kwargs[key] = int(text) if integer else float(text)
    try:
        return lmsys_workload(reading, **kwargs)  # type: ignore[arg-type]
    except ValueError as exc:
        raise ValueError(f"workload {spec!r}: {exc}") from None


#: The common prompt length ``s`` of arXiv 2601.22996's experiments on LMSYS-Chat-1M (tokens).
COMMON_PROMPT = 79
#: The KV-cache budgets ``M`` of those experiments (tokens).
COMMON_PROMPT_MEMORIES = (4096, 8192)


def common_prompt_instance(
    n: int,
    memory: int,
    *,
    seed: int = 0,
    prompt: int = COMMON_PROMPT,
    reading: str = "lmsys-turn",
    name: str | None = None,
) -> Instance:
    """Identical prompts, LMSYS-style decode lengths: the setting of arXiv 2601.22996.

    Every request has the prefill ``s_i = prompt`` (tokens) and a decode length ``o_i`` drawn
    from the decode law of an LMSYS reading (:func:`lmsys_workload`), capped so that
    ``s_i + o_i <= M``; all arrive at round 0.

    Parameters
    ----------
    n : int
        Number of requests, ``>= 1``.
    memory : int
        KV-cache budget ``M`` in tokens, ``> prompt``.
    seed : int
        Seed of ``numpy.random.default_rng``: the same arguments give the same instance, and
        two budgets with one seed the same draws (only the cap differs).
    prompt : int, default 79
        The common prompt length ``s`` (tokens, ``>= 0``).
    reading : str, default "lmsys-turn"
        The reading of :data:`LMSYS_READINGS` whose decode law gives ``o_i``.
    name : str, optional
        Default ``"common-prompt-n{n}-M{memory}-s{seed}"``.

    Returns
    -------
    Instance
        ``metadata``: the generator, reading, prompt, seed, the number of capped requests
        (``capped``) and the reading's source.

    Raises
    ------
    ValueError
        ``n < 1``, ``memory <= prompt``, a negative ``prompt``, an unknown reading.

    Notes
    -----
    Source: the setting of Feng, Yang and Zhang, *Competitive Non-Clairvoyant KV-Cache
    Scheduling for LLM Inference*, arXiv 2601.22996 (experiments: LMSYS-Chat-1M replies as
    decode lengths, one prompt length s = 79, M = 4,096 and 8,192, n = 100 to 1,000), as
    third-party summaries give it; their trace is not available here. Our reading:

    * the decode lengths are the decode half of the reading's draws (:meth:`LognormalWorkload.
      sample`, lognormal conditioned on the reading's own cut ``s + o <= 4096`` with its own
      prompt draw, which is then discarded), so their mean is the reading's published one
      (214.5 tokens for ``lmsys-turn``, the per-turn response mean);
    * then **capped** at ``M - prompt`` (not redrawn), so that ``s_i + o_i <= M``; at
      ``M = 4,096`` the cap is 4,017 and touches almost no draw (``metadata["capped"]``).
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if isinstance(prompt, bool) or not isinstance(prompt, (int, np.integer)) or prompt < 0:
        raise ValueError(f"prompt must be an integer >= 0 tokens, got {prompt!r}")
    if isinstance(memory, bool) or not isinstance(memory, (int, np.integer)) or memory <= prompt:
        raise ValueError(
            f"memory M must be an integer above the prompt length {prompt}, got {memory!r}"
        )
    workload = lmsys_workload(reading)
    _, o = workload.sample(int(n), np.random.default_rng(seed))
    cap = int(memory) - int(prompt)
    capped = int(np.count_nonzero(o > cap))
    o = np.minimum(o, cap)
    return Instance.from_arrays(
        np.full(int(n), int(prompt), dtype=np.int64),
        o,
        int(memory),
        name=f"common-prompt-n{n}-M{memory}-s{seed}" if name is None else name,
        metadata={
            "generator": "lpsched.generators.lmsys.common_prompt_instance",
            "reading": reading,
            "prompt": int(prompt),
            "seed": seed,
            "capped": capped,
            "sources": {
                reading: workload.source,
                "setting": "arXiv 2601.22996 (one prompt length, LMSYS-Chat-1M replies)",
            },
        },
    )
