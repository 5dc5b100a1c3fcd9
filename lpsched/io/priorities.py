"""Priority lists for a serving engine: each request's position in a list, as JSON Lines."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence

import numpy as np

from ..instance import Instance
from .atomic import atomic_write_text

__all__ = ["write_priorities"]


def write_priorities(
    instance: Instance, order: Sequence[int] | np.ndarray, path: str | os.PathLike[str]
) -> None:
    """Write each request's position in a priority list as JSON Lines, for a serving engine.

    Parameters
    ----------
    instance : Instance
        The instance the list orders (its request ids are written).
    order : sequence of int, shape (n,)
        The priority list: request indices, first to run first (a permutation of ``range(n)``).
    path : path-like
        The file to write (whole or not at all, :func:`~.atomic.atomic_write_text`).

    Raises
    ------
    ValueError
        ``order`` is not a permutation of ``range(n)``.
    WriteError
        The file cannot be written.

    Notes
    -----
    One line per request, in instance order: ``{"id": ..., "priority": k}`` with ``k`` the
    request's position in ``order`` (0 first), so lower runs first, as vLLM's ``priority``
    scheduling policy takes a request's ``priority`` field. Source: ours.
    """
    lst = np.asarray(order)
    n = instance.n
    if (
        lst.shape != (n,)
        or lst.dtype.kind not in "iu"
        or not np.array_equal(np.sort(lst), np.arange(n))
    ):
        raise ValueError(f"a priority list must name each of the {n} request indices once")
    position = np.empty(n, dtype=np.int64)
    position[lst] = np.arange(n)
    lines = (
        json.dumps({"id": rid, "priority": int(k)})
        for rid, k in zip(instance.ids, position.tolist(), strict=True)
    )
    atomic_write_text(path, "".join(line + "\n" for line in lines))
