"""The certify methods, one module each, and their registry :data:`METHODS`.

Each module defines ``METHOD``, a :class:`~lpsched.certify.method.Method` (the contract: the
side it improves and ``run(instance, schedule, options, observer)``). :data:`METHODS` is read by
the plans (:mod:`lpsched.certify.plan`), by ``lpsched bound --method`` (every ``lower`` and
``both`` method) and by the docs. A new method is one module here and its module name in the
tuple :data:`MODULES` (``docs/architecture.md``, "A bound method"); :func:`register_method`
adds one at run time.

=======================  =====  ==========================================================
method                   side   module
=======================  =====  ==========================================================
``trivial``              lower  :mod:`.trivial`
``combinatorial``        lower  :mod:`.combinatorial` (SPEC section 7)
``lp``                   lower  :mod:`.lp` (the whole LP relaxation, HiGHS)
``lp-colgen``            lower  :mod:`.colgen` (the LP by column generation)
``lp-overlap``           lower  :mod:`.lp_overlap` (the LP with rounds of overlap cuts)
``lp-aggregated``        both   :mod:`.aggregated` (the LP over windows of rounds, refined;
                                the schedule listed by its completion times)
``partial-integrality``  lower  :mod:`.partial_integrality`
``cpsat-intervals``      both   :mod:`.cpsat_intervals`
``mip``                  both   :mod:`.mip` (HiGHS on the full MIP)
``mip-overlap``          both   :mod:`.mip_overlap` (the MIP with overlap clique cuts)
``local-search``         upper  :mod:`.local_search`
``lns``                  upper  :mod:`.lns`
=======================  =====  ==========================================================

Source: ours.
"""

from __future__ import annotations

from operator import attrgetter

from ...plugins import Registry, module_entries
from ..method import Method

__all__ = ["METHODS", "MODULES", "register_method", "bound_methods"]

#: The method modules of this package, in the order of ``lpsched bound --method`` and the docs:
#: a new method is its module here and its name in this tuple.
MODULES = (
    "trivial",
    "combinatorial",
    "lp",
    "lp_overlap",
    "colgen",
    "aggregated",
    "partial_integrality",
    "cpsat_intervals",
    "mip",
    "mip_overlap",
    "local_search",
    "lns",
)

#: Every certify method by name, from the ``METHOD`` of each module of :data:`MODULES` (a
#: :class:`~lpsched.plugins.Registry`: those are its built-ins), then those added by
#: :func:`register_method`.
METHODS: Registry[Method] = Registry(
    "certify method",
    module_entries(__name__, MODULES, attrgetter("METHOD")),
    taken="a {kind} named {name!r} exists already",
)


def register_method(method: Method) -> None:
    """Add ``method`` to :data:`METHODS` (a plug-in's method, or a test's toy).

    Raises
    ------
    ValueError
        ``method`` is not a :class:`~lpsched.certify.method.Method`, or its name is malformed,
        built in or taken (:meth:`~lpsched.plugins.Registry.register`).
    """
    if not isinstance(method, Method):
        raise ValueError(f"register_method needs a Method, got {type(method).__name__}")
    METHODS.register(method)


def bound_methods() -> list[str]:
    """Names of the methods that prove lower bounds (``lower`` or ``both``), in order."""
    return [name for name, m in METHODS.items() if m.bounds]
