"""The two-point instance of Feng, Yang, Zhang (arXiv 2601.22996): a few long requests ahead of many
one-token ones, all with one prompt length.

With ``s = 96``, ``M = 256``: 6 requests with ``o = 160`` arrive first (lowest indices), then 194
with ``o = 1``; all at round 0. Any long request holds at least ``s + 1 = 97`` tokens, so two long
ones fill the cache for 160 rounds; a policy that admits in arrival order and never kills (FCFS,
the vLLM-style queue, A_min with wide intervals) keeps the short ones waiting behind them, while
one that knew the lengths would run the short ones first. A blind policy that kills on purpose
(GSA's geometric slices) should come close to the clairvoyant one without knowing any ``o_i``.
The paper's experiment (1) uses it; the paper's text was not available, so the order (the long
requests first in the queue) is our reading.

Source: Feng, Yang, Zhang, arXiv 2601.22996 (section on experiments, as summarised in
``../shared/research/algorithms-2026.md``); the request order is our reading.
"""

from __future__ import annotations

import numpy as np

from ..instance import Instance

__all__ = ["two_point"]


def two_point(
    *,
    prefill: int = 96,
    memory: int = 256,
    n_long: int = 6,
    long_decode: int = 160,
    n_short: int = 194,
    short_decode: int = 1,
) -> Instance:
    """The two-point instance: ``n_long`` requests of decode ``long_decode`` (indices first),
    then ``n_short`` of decode ``short_decode``, all with prefill ``prefill`` and arrival 0.

    Parameters
    ----------
    prefill : int, default 96
        The common prompt length ``s`` (tokens).
    memory : int, default 256
        KV-cache budget ``M`` (tokens).
    n_long, n_short : int, default 6 and 194
        How many long and short requests (each >= 0, together >= 1).
    long_decode, short_decode : int, default 160 and 1
        Their decode lengths ``o`` (tokens, >= 1, ``s + o <= M``).

    Returns
    -------
    Instance
        Ids ``long-0, ...`` then ``short-0, ...``; ``metadata`` records the parameters and the
        source. Defaults: ``fcfs`` and ``vllm`` give TEL 185,892 rounds, ``mcsf`` 13,448.

    Raises
    ------
    ValueError
        A count below 0 or no request at all, a decode length below 1, ``s + o > M``
        (:class:`~lpsched.instance.InstanceError` from the instance's own checks).

    Notes
    -----
    Source: arXiv 2601.22996 (experiment 1, via its summary); the order is our reading.
    """
    for name, count in (("n_long", n_long), ("n_short", n_short)):
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 0:
            raise ValueError(f"{name} must be an integer >= 0, got {count!r}")
    if n_long + n_short < 1:
        raise ValueError("the two-point instance needs at least one request")
    decode = [long_decode] * n_long + [short_decode] * n_short
    ids = [f"long-{k}" for k in range(n_long)] + [f"short-{k}" for k in range(n_short)]
    meta = {
        "generator": "two-point",
        "source": "Feng, Yang, Zhang, arXiv 2601.22996 (experiment 1)",
        "prefill": prefill,
        "n_long": n_long,
        "long_decode": long_decode,
        "n_short": n_short,
        "short_decode": short_decode,
    }
    return Instance.from_arrays(
        [prefill] * len(decode), decode, memory, ids=ids, name="two-point", metadata=meta
    )
