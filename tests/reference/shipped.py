"""Where the shipped instances are, and the proven optima the tests rely on.

One place for the paths that tests used to rebuild from ``Path(__file__).parents[k]``; the
optima are those of ``instances/README.md`` (proven by HiGHS and CP-SAT; ``tests/
test_shipped_instances.py`` checks the catalogue against the files).
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
INSTANCES = ROOT / "instances"
EXACT = INSTANCES / "exact"
ADVERSARIAL = INSTANCES / "adversarial"
DEFAULT_FILE = INSTANCES / "default.json"
#: The instance most tests solve: n = 10, proven optimal TEL 74 (rounds), horizon T = 23.
MIX10 = EXACT / "mix10-s1.json"
MIX10_OPT = 74
