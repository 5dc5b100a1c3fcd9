"""Pyomo command-line entry point: the LP relaxation of the time-indexed MIP (``relax=True``).

Same model, instance and environment variables as ``time_indexed.py``; only ``x`` is in
``[0, 1]``. Its optimum is the LP lower bound on the optimal TEL.

    pyomo convert --output time_indexed_lp.lp models/time_indexed_lp.py
    pyomo solve --solver=highs models/time_indexed_lp.py
"""

from __future__ import annotations

import os

from lpsched.certify import exact_horizon
from lpsched.formulations import build_model
from lpsched.io import read_instance

try:  # loaded by the pyomo command as a plain file, or imported as models.time_indexed_lp
    from time_indexed import DEFAULT_INSTANCE
except ImportError:  # pragma: no cover
    from models.time_indexed import DEFAULT_INSTANCE


def pyomo_create_model(options=None, model_options=None):
    """The LP relaxation for the ``pyomo`` command. Raises ``InstanceError`` for a bad file."""
    instance = read_instance(os.environ.get("LPSCHED_INSTANCE", DEFAULT_INSTANCE))
    horizon = os.environ.get("LPSCHED_HORIZON")
    return build_model(instance, int(horizon) if horizon else exact_horizon(instance), relax=True)
