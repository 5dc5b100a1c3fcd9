"""Policies: priority lists for the executor (SPEC sections 4-6), one module per family.

* :mod:`.baselines` -- FCFS, MC-SF and size-based priority;
* :mod:`.sorted_f` -- Sorted-F Phase 1 (``dp``, ``swap``, ``quantile``);
* :mod:`.sorted_f_seconds` -- Sorted-F whose Phase 1 weighs each batch by its seconds per round
  under a time model (ours);
* :mod:`.sorted_lp` -- Sorted-LP, ordered by the LP relaxation (it uses :mod:`lpsched.solvers`);
* :mod:`.planners`, :mod:`.online`, :mod:`.amin` -- re-planning, online arrivals, unknown
  decode lengths (A_max, A_min, Sorted-F+Amin);
* :mod:`.vllm` -- the production-style baselines ``vllm`` and ``vllm-sf`` (admission by current
  memory, recompute preemption);
* :mod:`.local_search` -- the best list policy and a local search over priority lists, the
  upper bound and MIP start of the exact solvers;
* :mod:`.registry` -- names to policies: :func:`~.registry.run_policy`,
  :func:`~.registry.register_policy`.

This file imports nothing, so that the solvers can use the list policies below the registry
while Sorted-LP, in the registry, uses the solvers (``docs/architecture.md``).
"""
