"""The registry of paper reproductions run by ``lpsched reproduce NAME``.

Each reproduction is one module of this package with ``NAME``, ``DESCRIPTION`` and
``run(out_dir, **options) -> str``: it declares its sweeps (:mod:`.engine`), draws its table and
figures from the rows, writes ``NAME.csv``, ``NAME.md`` (and PNGs for some) into ``out_dir``
and returns the Markdown. A new reproduction is one module plus its name in the tuple
:data:`MODULES` (no other list names it: ``pyproject.toml``'s import contracts take the package
whole); the command line's choices come from :data:`REPRODUCTIONS` (a
:class:`~lpsched.plugins.Registry`). Options the command line can pass: ``seeds``, ``sizes``,
``time_limits``, ``time_limit`` (one for every solve), ``work_limit`` (the solver's
deterministic work of every solve), ``trials``, ``trace_dir``,
``workloads`` / ``workload``, ``policies`` (a per-policy table: its default is the study's
list, which ``+NAME`` extends) and ``policy_options``, to the reproductions whose ``run``
takes them.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

from ...plugins import Registry, module_entries

__all__ = ["Reproduction", "MODULES", "REPRODUCTIONS", "register_reproduction", "accepts"]


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


#: The reproduction modules of this package, in the order of ``lpsched reproduce --help``: a new
#: reproduction is its module and its name in this tuple.
MODULES = (
    "headline",
    "sensitivity",
    "optimality_gaps",
    "certified_gaps",
    "ratios",
    "families",
    "intervals",
    "online_load",
    "algorithms",
    "jaillet_synthetic",
)

#: Every reproduction by name, from the ``NAME``, ``DESCRIPTION`` and ``run`` of each module of
#: :data:`MODULES`, then those added by :func:`register_reproduction`.
REPRODUCTIONS: Registry[Reproduction] = Registry(
    "reproduction", module_entries(__package__, MODULES, Reproduction.from_module)
)


def register_reproduction(reproduction: Reproduction) -> Reproduction:
    """Add a reproduction at run time (e.g. from a plug-in); returns it.

    Raises
    ------
    ValueError
        A malformed name, or one already registered (:meth:`~lpsched.plugins.Registry.register`).
        Source: ours.
    """
    return REPRODUCTIONS.register(reproduction)
