"""Longest prefill first: a plug-in list policy for lpsched (the tests' example plug-in).

Installed, it is the policy ``lpf`` through the entry point ``lpf`` of the group
``lpsched.policies`` (``pyproject.toml``); ``lpsched run INSTANCE --policies lpf`` then runs it.
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
