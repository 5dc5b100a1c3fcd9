"""Baseline priority lists: FCFS, MC-SF and size-based priority (SPEC section 4).

Each function maps an :class:`~lpsched.instance.Instance` to a priority list (a permutation of
``range(n)``, shape (n,)) that the executor runs. Ties are broken by the next key and finally by
request index, through a stable lexicographic sort.
"""

from __future__ import annotations

import numpy as np

from ..instance import Instance

__all__ = ["fcfs_order", "mcsf_order", "size_order"]


def fcfs_order(instance: Instance) -> np.ndarray:
    """First come, first served: by arrival round ``a_i``, then index.

    Returns
    -------
    ndarray of int64, shape (n,)
        The priority list. Source: SPEC section 4 (FCFS of arXiv 2508.06133 section 3).
    """
    return np.argsort(instance.arrival, kind="stable")


def mcsf_order(instance: Instance) -> np.ndarray:
    """Memory-constrained shortest first: by decode length ``o_i`` ascending, then index.

    Returns
    -------
    ndarray of int64, shape (n,)
        The priority list. Source: MC-SF of Jaillet et al., arXiv 2502.07115, section 4.
    """
    return np.argsort(instance.decode, kind="stable")


def size_order(instance: Instance) -> np.ndarray:
    """Size-based priority: by total size ``s_i + o_i`` ascending, then index.

    Returns
    -------
    ndarray of int64, shape (n,)
        The priority list. Source: arXiv 2508.06133, section 3 (size-based priority).
    """
    return np.argsort(instance.size, kind="stable")
