"""The registry of paper reproductions run by ``lpsched reproduce NAME``.

Each reproduction is one module of this package with ``NAME``, ``DESCRIPTION`` and
``run(out_dir, **options) -> str``: it declares its sweeps (:mod:`.engine`), draws its table and
figures from the rows, writes ``NAME.csv``, ``NAME.md`` (and PNGs for some) into ``out_dir``
and returns the Markdown. A new reproduction is one module plus one line in
:data:`REPRODUCTIONS`; the command line's choices come from here. Options the command line can
pass: ``seeds``, ``sizes``, ``time_limits``, ``trace_dir``, ``workloads`` / ``workload``,
``policies`` (a per-policy table: its default is the study's list, which ``+NAME`` extends) and
``policy_options``, to the reproductions whose ``run`` takes them.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

from . import (
    algorithms,
    certified_gaps,
    families,
    headline,
    intervals,
    online_load,
    optimality_gaps,
    ratios,
    sensitivity,
)

__all__ = ["Reproduction", "REPRODUCTIONS", "register_reproduction", "accepts"]


@dataclass(frozen=True)
class Reproduction:
    """A named reproduction: ``run(out_dir, **options) -> Markdown text``.

    Attributes
    ----------
    name : str
    description : str
        One line for ``lpsched reproduce --help``.
    run : callable
        ``run(out_dir, **options) -> str``.
    """

    name: str
    description: str
    run: Callable[..., str]

    @classmethod
    def from_module(cls, module: ModuleType) -> Reproduction:
        """The reproduction a module declares through ``NAME``, ``DESCRIPTION`` and ``run``."""
        return cls(module.NAME, module.DESCRIPTION, module.run)


def accepts(reproduction: Reproduction, option: str) -> bool:
    """Whether the reproduction's function takes the keyword ``option``."""
    return option in inspect.signature(reproduction.run).parameters


REPRODUCTIONS: dict[str, Reproduction] = {
    r.name: r
    for r in map(
        Reproduction.from_module,
        (
            headline,
            sensitivity,
            optimality_gaps,
            certified_gaps,
            ratios,
            families,
            intervals,
            online_load,
            algorithms,
        ),
    )
}


def register_reproduction(reproduction: Reproduction) -> Reproduction:
    """Add a reproduction at run time (e.g. from a plug-in); returns it.

    Raises
    ------
    ValueError
        The name is already registered. Source: ours.
    """
    if reproduction.name in REPRODUCTIONS:
        raise ValueError(f"reproduction {reproduction.name!r} is already registered")
    REPRODUCTIONS[reproduction.name] = reproduction
    return reproduction
