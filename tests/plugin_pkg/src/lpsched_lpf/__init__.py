"""Longest prefill first: a plug-in list policy for lpsched (the tests' example plug-in).

Installed, it is the policy ``lpf`` through the entry point ``lpf`` of the group
``lpsched.policies`` (``pyproject.toml``); ``lpsched run INSTANCE --policies lpf`` then runs it.
It also brings a time model, ``fixed-round`` (group ``lpsched.time_models``).
"""

from __future__ import annotations

import numpy as np


def longest_prefill_first(instance) -> np.ndarray:
    """Longest prefill first: requests by prefill length s_i, longest first, ties by index.

    Parameters
    ----------
    instance : lpsched.Instance

    Returns
    -------
    ndarray of int, shape (n,)
        The priority list (a permutation of ``range(n)``) the executor runs.

    Notes
    -----
    Source: ours (a plug-in example, not a good policy).
    """
    return np.argsort(-instance.prefill, kind="stable")


def fixed_round(prefill_tokens, decoding, kv_tokens, round_s=0.02):
    """A fixed round: every round lasts round_s seconds, whatever its load.

    Installed, it is the time model ``fixed-round`` through the entry point of the group
    ``lpsched.time_models`` (``pyproject.toml``): ``lpsched run INSTANCE --time-model
    fixed-round:round_s=0.05``.

    Parameters
    ----------
    prefill_tokens, decoding, kv_tokens : ndarray of int, shape (T,)
        The loads of the rounds (SPEC section 10; ignored).
    round_s : float, default 0.02
        Seconds of every round.

    Returns
    -------
    ndarray of float, shape (T,)
        Seconds.
    """
    return np.full(np.shape(prefill_tokens), float(round_s))
