"""The families reproduction: every policy on every adversarial family instance."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")


from lpsched.experiments.families import family_sweep  # noqa: E402
from lpsched.experiments.families import run as reproduce_families  # noqa: E402


def test_family_sweep_and_reproduction(tmp_path):
    rows = family_sweep(tmp_path / "f", memories=(16, 100), progress=False)
    assert len(rows) == 3 * 2 * 4
    byk = {(r["family"], r["memory"], r["policy"]): r for r in rows}
    assert byk[("fcfs", "100", "fcfs")]["tel"] == "120"
    assert byk[("fcfs", "100", "fcfs")]["good_tel"] == "21"
    assert all(float(r["ratio"]) == 1.0 for r in rows if r["policy"] == "sorted-f")
    text = reproduce_families(tmp_path / "out", memories=(16, 64), progress=False)
    assert "fcfs" in text and (tmp_path / "out" / "families.png").stat().st_size > 10_000
    assert (tmp_path / "out" / "families.md").read_text() == text
