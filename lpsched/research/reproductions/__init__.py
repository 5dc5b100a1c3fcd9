"""Experiments: one sweep engine, the registry of reproductions, one module per reproduction.

* :mod:`.engine` -- tasks -> CSV rows, written at once, resumed, never mixed across parameters;
* :mod:`.tables` -- Markdown tables and report files;
* :mod:`.registry` -- :data:`~.registry.REPRODUCTIONS` for ``lpsched reproduce NAME``;
* :mod:`.headline`, :mod:`.sensitivity`, :mod:`.optimality_gaps`, :mod:`.ratios`,
  :mod:`.families`, :mod:`.intervals`, :mod:`.online_load` -- the reproductions;
* :mod:`.adversarial` -- the search for bad instances; :mod:`.figures` -- the README figures.
"""
