"""Research code behind a wall: the paper reproductions and the studies around them.

Only the command line imports this package (an import-linter contract in ``pyproject.toml``):
the product layers below never depend on a reproduction, a search for bad instances or a
research-only relaxation.

* :mod:`.reproductions` -- the registry of ``lpsched reproduce NAME`` and one module each;
* :mod:`.adversarial` -- the search for instances on which a policy does badly;
* :mod:`.figures` -- the figures of the docs' results pages
  (``python -m lpsched.research.figures``);
* :mod:`.window_configuration` -- the window-configuration relaxation (a "no go" result,
  used by its benchmark);
* :mod:`.cache` -- exact optima of small instances, memoised for the ratio studies.
"""
