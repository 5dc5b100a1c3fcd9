"""The solver back ends of the time-indexed MIP (SPEC section 3), one module each.

Each builds its model, runs its solver and maps the solver's own status to the neutral
:class:`~lpsched.solvers.result.Answer`, through one signature (``solve_mip``):

* :mod:`.highs` -- HiGHS on the matrix model (the MIP, the LP relaxation and the model files);
* :mod:`.cpsat` -- OR-Tools CP-SAT on the same rows;
* :mod:`.pyomo` -- the reference Pyomo model solved by HiGHS.
"""
