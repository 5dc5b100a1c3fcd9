"""Instance generators: workloads from real traces, arrivals, prediction intervals, small
instances for exact studies, the 3-Partition gadget and the adversarial families.

* :mod:`.workloads` -- length tables derived from public traces, mixtures, :func:`generate`,
  :func:`from_traces` (SPEC section 1; the seed paper's workloads, section 6);
* :mod:`.arrivals` -- Poisson and trace arrivals, the nominal load scale (SPEC section 5);
* :mod:`.intervals` -- decode-length prediction intervals (SPEC section 6);
* :mod:`.small` -- small random instances for the exact solvers and the ratio studies;
* :mod:`.three_partition` -- the NP-hardness gadget (SPEC section 8);
* :mod:`.families` -- adversarial families that defeat FCFS, MC-SF and size priority.
"""
