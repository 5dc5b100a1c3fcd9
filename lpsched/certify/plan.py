"""The plans of :func:`lpsched.certify.certify`, as data: size class -> methods and shares.

A plan is a tuple of ``(method, share)``: names of :data:`lpsched.certify.methods.METHODS`, run
in that order, each with its share of the time left when it starts (shares of the methods still
to run renormalised, so time a method does not use passes on). :func:`certify_plan` chooses the
size class from the time-indexed model's size at the tight horizon of the first schedule, and
leaves out a method above its size limit (:data:`LEAVE_OUT_ABOVE_NONZEROS`); certify skips a
method whose budget is below its minimum (:data:`MIN_BUDGET_S`).

* ``small`` (the MIP fits in :data:`SMALL_MAX_NONZEROS`): the LP lifted by overlap cuts
  (SPEC section 3.1), HiGHS on the full MIP with those cuts (``mip-overlap``, half of the
  budget: it is what proves), the large-neighbourhood search, partial integrality and CP-SAT
  on the interval model;
* ``medium`` (the LP fits in :data:`~lpsched.solvers.options.AUTO_LP_MAX_NONZEROS`): the LP
  over aggregated rounds (its bound and the schedule listed by its completion times), the LP
  lifted by overlap cuts, the large-neighbourhood search from the better schedule, then
  partial integrality;
* ``large``: the LP over aggregated rounds and the large-neighbourhood search (at
  n = 2000 the LP's list gives schedules 6-8% below Sorted-F's, which the search improves).

Shares and limits measured in ``benchmarks/bench_certify.py``; the overlap-cut methods where
a few requests fill the KV cache (``jaillet-synthetic``: at n = 30 certify's bound was 2,023,
below the LP's 2,138.5, where ``lp-overlap`` alone reaches 2,369.4 in 27 s; where no pair of
requests is limited it finds no cut and passes its time on after one LP;
``docs/results/memory-bound.md``). Source: ours.
"""

from __future__ import annotations

from typing import Any

from ..formulations.horizon import tight_horizon
from ..formulations.time_indexed import matrix_size
from ..instance import Instance
from ..schedule import Schedule
from ..solvers.options import AUTO_LP_MAX_NONZEROS, MAX_HORIZON
from .methods import METHODS

__all__ = [
    "PLANS",
    "certify_plan",
    "SMALL_MAX_NONZEROS",
    "PARTIAL_MAX_NONZEROS",
    "PARTIAL_MIN_SECONDS",
    "LP_OVERLAP_MAX_NONZEROS",
    "LEAVE_OUT_ABOVE_NONZEROS",
    "MIN_BUDGET_S",
]

#: Largest full time-indexed MIP (constraint non-zeros at the tight horizon) that the ``small``
#: plan hands to HiGHS and CP-SAT (``benchmarks/bench_certify.py``).
SMALL_MAX_NONZEROS = 400_000
#: Largest model partial integrality runs on: above it HiGHS' root LP alone takes most of a
#: few minutes' budget and overruns the time limit (it is not interruptible), while the column
#: generation gives the same LP value in about a second (n = 200 of the scaled mix: 2.1 M
#: non-zeros, the root LP over 45 s; ``benchmarks/bench_certify.py``).
PARTIAL_MAX_NONZEROS = 1_000_000
#: Smallest budget (seconds) partial integrality is started with: HiGHS' first LP, during
#: which it cannot be stopped, takes seconds at n = 100 (measured: 5 s on a 0.5 s limit), and a
#: shorter run only repeats the LP the other methods give.
PARTIAL_MIN_SECONDS = 10.0
#: Largest model ``lp-overlap`` runs on in a plan: it solves the whole LP first, which at
#: n = 200 of the scaled mix (2.1 M non-zeros) takes 24-29 s, while ``jaillet-synthetic`` at
#: n = 60 (1.4 M) solves in seconds (``docs/results/memory-bound.md``).
LP_OVERLAP_MAX_NONZEROS = 1_500_000
#: Methods left out of a plan above a model size (constraint non-zeros at the tight horizon).
LEAVE_OUT_ABOVE_NONZEROS: dict[str, int] = {
    "partial-integrality": PARTIAL_MAX_NONZEROS,
    "lp-overlap": LP_OVERLAP_MAX_NONZEROS,
}
#: Methods skipped when their budget (seconds) is below a minimum.
MIN_BUDGET_S: dict[str, float] = {"partial-integrality": PARTIAL_MIN_SECONDS}

#: The plans: size class -> (method, share of the budget). A method gets its share of the
#: time left when it starts (shares of the methods still to run renormalised), so time a
#: method does not use passes on. Shares measured in ``benchmarks/bench_certify.py``.
PLANS: dict[str, tuple[tuple[str, float], ...]] = {
    "small": (
        ("local-search", 0.05),
        ("lp-overlap", 0.1),
        ("mip-overlap", 0.5),
        ("lns", 0.15),
        ("partial-integrality", 0.1),
        ("cpsat-intervals", 0.1),
    ),
    "medium": (
        ("local-search", 0.05),
        ("lp-aggregated", 0.1),
        ("lp-overlap", 0.3),
        ("lns", 0.35),
        ("partial-integrality", 0.2),
    ),
    "large": (
        ("local-search", 0.03),
        ("lp-aggregated", 0.4),
        ("lns", 0.57),
    ),
}


def certify_plan(instance: Instance, schedule: Schedule) -> dict[str, Any]:
    """The size class and the methods :func:`certify` runs on ``instance``.

    Parameters
    ----------
    instance : Instance
        Arrivals shifted to start at round 0.
    schedule : Schedule
        A feasible schedule (its TEL fixes the tight horizon, hence the model size).

    Returns
    -------
    dict
        ``size`` (``small``, ``medium`` or ``large``), ``nonzeros`` of the time-indexed model
        at the tight horizon, ``methods`` (names, in order) and ``reason``.

    Notes
    -----
    Source: ours. The thresholds are :data:`SMALL_MAX_NONZEROS` (above it HiGHS and CP-SAT
    on the full MIP rarely move either side within minutes),
    :data:`~lpsched.solvers.options.AUTO_LP_MAX_NONZEROS` (above it even the LP is not built
    whole) and :data:`PARTIAL_MAX_NONZEROS` (above it partial integrality is left out; it
    is also skipped with a budget under :data:`PARTIAL_MIN_SECONDS`): the tables
    :data:`LEAVE_OUT_ABOVE_NONZEROS` and :data:`MIN_BUDGET_S`. ``lp-aggregated`` is left out
    when the tight horizon exceeds :data:`~lpsched.solvers.options.MAX_HORIZON` (its master
    would refuse it, after its list policies' seeds: 17 s of a 5 s limit at n = 20,000).

    Raises
    ------
    ValueError
        A plan names a method that is not in :data:`~lpsched.certify.methods.METHODS`.
    """
    hz = tight_horizon(instance, schedule)
    _, nnz = matrix_size(instance, hz.T, hz.slack)
    if nnz <= SMALL_MAX_NONZEROS:
        size, reason = "small", f"full MIP {nnz:,} non-zeros <= {SMALL_MAX_NONZEROS:,}"
    elif nnz <= AUTO_LP_MAX_NONZEROS:
        size, reason = "medium", f"full LP {nnz:,} non-zeros <= {AUTO_LP_MAX_NONZEROS:,}"
    else:
        size, reason = "large", f"full LP {nnz:,} non-zeros > {AUTO_LP_MAX_NONZEROS:,}"
    methods = [name for name, _ in PLANS[size]]
    for name in list(methods):
        limit = LEAVE_OUT_ABOVE_NONZEROS.get(name)
        if limit is not None and nnz > limit:
            methods.remove(name)
            reason += f"; {name} left out above {limit:,} non-zeros"
    if hz.T > MAX_HORIZON and "lp-aggregated" in methods:  # its master has a row per round
        methods.remove("lp-aggregated")
        reason += f"; lp-aggregated left out: horizon {hz.T:,} > {MAX_HORIZON:,} rounds"
    unknown = [name for name in methods if name not in METHODS]
    if unknown:
        raise ValueError(f"plan {size!r} names unknown certify methods: {', '.join(unknown)}")
    return {"size": size, "nonzeros": nnz, "methods": methods, "reason": reason}
