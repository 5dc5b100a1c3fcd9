"""Experiment sweeps: tasks -> rows with provenance, resumable, local processes or Dask.

* :mod:`.engine` -- :class:`~.engine.Sweep` and :func:`~.engine.run_sweep`: each finished row
  is written at once, an interrupted sweep resumes, rows of other parameters are never mixed;
* :mod:`.provenance` -- what a row was computed under (parameters, version, commit, solvers);
* :mod:`.workers` -- how many processes a sweep runs and how many solver threads each gets;
* :mod:`.tables` -- Markdown tables and report files.
"""
