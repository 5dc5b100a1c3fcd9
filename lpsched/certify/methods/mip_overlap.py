"""Certify method ``mip-overlap``: the time-indexed MIP strengthened by overlap clique cuts.

The model of SPEC section 3 with the cuts of SPEC section 3.1
(:mod:`lpsched.formulations.overlap`: at most one request of a set that can run together for at
most ``L`` rounds has run more than ``L`` rounds in any round) separated on the LP in up to
:data:`OVERLAP_ROUNDS` rounds, then HiGHS branch and cut from the best schedule. The cuts are
valid for every schedule, so the dual bound is a lower bound on the optimal TEL and
``optimal`` means proven. Where a few requests fill the KV cache (``jaillet-synthetic``) the
cuts lift the LP by a quarter to a half of its distance to the optimum, and the MIP closes
sooner; where many small requests share the cache no pair is bounded and no cut is found
(measured: ``benchmarks/bench_overlap_cuts.py``, ``docs/guide/exact.md``).

Source: ours (SPEC section 3.1).
"""

from __future__ import annotations

from typing import Any

from ...instance import Instance
from ...schedule import Schedule
from ...solvers.options import SolveOptions
from ...solvers.progress import Observer
from ..method import Method
from .mip import run_mip

__all__ = ["METHOD", "OVERLAP_ROUNDS"]

#: Rounds of the cut loop that separate overlap cuts before the MIP (each round re-solves the
#: LP from its last basis; the loop also stops when the LP rises by less than 1e-4).
OVERLAP_ROUNDS = 30


def run(
    instance: Instance, schedule: Schedule, options: SolveOptions, observer: Observer
) -> dict[str, Any]:
    """:func:`~lpsched.certify.methods.mip.run_mip` with ``overlap_cuts`` =
    :data:`OVERLAP_ROUNDS` (``options.method_options["mip-overlap"]`` may change it); the
    contract is :class:`~lpsched.certify.method.Method`."""
    return run_mip(
        instance, schedule, options, observer, "mip-overlap", {"overlap_cuts": OVERLAP_ROUNDS}
    )


METHOD = Method(
    "mip-overlap",
    "both",
    "HiGHS on the full time-indexed MIP with overlap clique cuts (SPEC section 3.1): its "
    "incumbent and dual bound",
    run,
)
