"""The reproductions: the registry and one module per reproduction.

* :mod:`.registry` -- :data:`~.registry.REPRODUCTIONS` for ``lpsched reproduce NAME``;
* :mod:`.headline`, :mod:`.sensitivity`, :mod:`.optimality_gaps`, :mod:`.certified_gaps`,
  :mod:`.ratios`, :mod:`.families`, :mod:`.intervals`, :mod:`.online_load`,
  :mod:`.algorithms`, :mod:`.jaillet_synthetic` -- the reproductions; :mod:`.burst` -- SVF's
  burst, a part of ``algorithms``; :mod:`.theorems` -- the proven constants ``ratios``
  measures against;
* :mod:`.choices` -- a study's workloads checked before any row (a usage error on the
  command line).

Each runs its rows through the sweep engine (:mod:`lpsched.sweeps.engine`): written at once,
resumed, never mixed across parameters.
"""
