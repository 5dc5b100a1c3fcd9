"""Certified optimality gaps: the best schedule, the best valid lower bound and the gap.

* :mod:`.run` -- :func:`certify` (``lpsched certify``): anytime, any size;
* :mod:`.plan` -- the plans as data: size class -> methods and their shares of the budget;
* :mod:`.methods` -- one module per method and the registry :data:`~.methods.METHODS`;
* :mod:`.method` -- the contract of a method (:class:`~.method.Method`);
* :mod:`.pricing` -- the pricing problem shared by the LP's column generations;
* :mod:`.bound` -- :func:`best_bound` (``lpsched bound``): one lower bound in a time limit.

``import lpsched`` re-exports :func:`certify` as ``lpsched.certify``, the function (the
package's modules stay importable by their full names, ``from lpsched.certify.methods import
METHODS``). Source: ours.
"""

from .bound import best_bound, bound_choices
from .method import Method
from .methods import METHODS, register_method
from .plan import PLANS, certify_plan
from .run import CertifyEvent, CertifyInterrupted, CertifyResult, certify

__all__ = [
    "certify",
    "CertifyResult",
    "CertifyEvent",
    "CertifyInterrupted",
    "certify_plan",
    "PLANS",
    "Method",
    "METHODS",
    "register_method",
    "best_bound",
    "bound_choices",
]
