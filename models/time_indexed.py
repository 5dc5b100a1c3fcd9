"""Pyomo command-line entry point: the time-indexed MIP (models/README.md, SPEC section 3).

Built by lpsched's own builder (:func:`lpsched.formulations.build_model`), so there is no second
copy of a constraint here. The instance is ``instances/exact/mix10-s1.json`` unless the
environment variable ``LPSCHED_INSTANCE`` names another instance JSON file; the horizon is
``min(T1, T2)`` with the start windows (``LPSCHED_HORIZON=T`` sets an integer horizon instead).

    pyomo convert --output time_indexed.lp models/time_indexed.py
    pyomo convert --output time_indexed.mps models/time_indexed.py
    pyomo solve --solver=highs models/time_indexed.py

(``pyomo solve`` needs the solver name ``highs``: ``appsi_highs`` has no ``config_block`` for
the command line in Pyomo 6.10 and stops with an ``AttributeError``.)
"""

from __future__ import annotations

import os
from pathlib import Path

from lpsched.certify import exact_horizon
from lpsched.formulations import build_model
from lpsched.io import read_instance

DEFAULT_INSTANCE = Path(__file__).resolve().parent.parent / "instances" / "exact" / "mix10-s1.json"
RELAX = False


def pyomo_create_model(options=None, model_options=None):
    """The Pyomo model for the ``pyomo`` command (MIP here, LP relaxation in
    ``time_indexed_lp.py``). Raises ``InstanceError`` for a bad instance file."""
    instance = read_instance(os.environ.get("LPSCHED_INSTANCE", DEFAULT_INSTANCE))
    horizon = os.environ.get("LPSCHED_HORIZON")
    return build_model(instance, int(horizon) if horizon else exact_horizon(instance), relax=RELAX)
