"""Instance generators: workloads from real traces, arrivals, prediction intervals, small
instances for exact studies, the 3-Partition gadget and the adversarial families.

* :mod:`.workloads` -- length tables derived from public traces, mixtures (the paper's
  ``paper-mix`` first), :func:`generate`, :func:`from_traces` (SPEC section 1; the seed
  paper's workloads, section 6);
* :mod:`.lmsys` -- LMSYS-style conversations from published length statistics, lognormal with
  the shape as a parameter (the paper's short requests);
* :mod:`.arrivals` -- Poisson and trace arrivals, the nominal load scale (SPEC section 5);
* :mod:`.intervals` -- decode-length prediction intervals (SPEC section 6);
* :mod:`.small` -- small random instances for the exact solvers and the ratio studies, and
  the tractable copies of the paper's mix (:func:`~.small.paper_scaled`);
* :mod:`.three_partition` -- the NP-hardness gadget (SPEC section 8);
* :mod:`.families` -- adversarial families that defeat FCFS, MC-SF and size priority.
"""
