"""The solve driver and certified optimality gaps: the best schedule, the best valid lower
bound and the gap.

* :mod:`.driver` -- :func:`solve`, the one driver: the opening steps, then a plan of methods;
* :mod:`.shortcuts` -- :func:`solve_exact` (``lpsched exact``), :func:`certify` (``lpsched
  certify``), :func:`best_bound` (``lpsched bound``), :func:`lp_bound`, and the model at the
  best heuristic schedule's horizon (:func:`exact_horizon`, :func:`solve_lp`,
  :func:`export_model`);
* :mod:`.plan` -- the automatic plans as data: size class -> methods and their shares;
* :mod:`.methods` -- one module per method and the registry :data:`~.methods.METHODS`;
* :mod:`.method` -- the contract of a method (:class:`~.method.Method`).

Every call returns one :class:`~lpsched.solvers.result.Result`. ``import lpsched`` re-exports
:func:`certify` as ``lpsched.certify``, the function (the package's modules stay importable by
their full names, ``from lpsched.certify.methods import METHODS``). Source: ours.
"""

from .driver import solve
from .method import Method
from .methods import METHODS, register_method
from .plan import PLANS, certify_plan
from .shortcuts import (
    best_bound,
    bound_choices,
    certify,
    exact_horizon,
    export_model,
    lp_bound,
    solve_exact,
    solve_lp,
)

__all__ = [  # sorted
    "best_bound",
    "bound_choices",
    "certify",
    "certify_plan",
    "exact_horizon",
    "export_model",
    "lp_bound",
    "Method",
    "METHODS",
    "PLANS",
    "register_method",
    "solve",
    "solve_exact",
    "solve_lp",
]
