"""The models/ files load in Pyomo's own command line (convert and solve) and give the values of
lpsched's builder on the shipped instance."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import highspy
import pytest
from reference.shipped import MIX10

ROOT = Path(__file__).resolve().parents[2]
PYOMO = Path(sys.executable).parent / "pyomo"
INSTANCE = MIX10
OPTIMUM, LP_VALUE = 74, 69.541863  # proven optimum and LP bound (tight horizon) of mix10-s1

pytestmark = pytest.mark.skipif(not PYOMO.exists(), reason="pyomo command not installed")


def _pyomo(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, LPSCHED_INSTANCE=str(INSTANCE))
    return subprocess.run(
        [str(PYOMO), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def _solve_file(path: Path) -> float:
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.readModel(str(path))
    h.run()
    return h.getInfo().objective_function_value


@pytest.mark.slow
@pytest.mark.parametrize(
    ("model", "value"), [("time_indexed.py", OPTIMUM), ("time_indexed_lp.py", LP_VALUE)]
)
@pytest.mark.parametrize("fmt", ["lp", "mps"])
def test_pyomo_convert(tmp_path, model, value, fmt):
    out = tmp_path / f"model.{fmt}"
    proc = _pyomo(
        "convert",
        "--symbolic-solver-labels",
        "--output",
        str(out),
        str(ROOT / "models" / model),
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    if fmt == "lp":
        text = out.read_text()
        assert "memory(" in text and "assign(" in text and "x(0_0)" in text
    assert _solve_file(out) == pytest.approx(value, abs=1e-5)


def test_pyomo_solve_with_highs(tmp_path):
    proc = _pyomo("solve", "--solver=highs", str(ROOT / "models" / "time_indexed.py"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = (tmp_path / "results.yml").read_text()
    assert "Termination condition: optimal" in results
    assert f"Lower bound: {OPTIMUM}.0" in results and f"Upper bound: {OPTIMUM}.0" in results
