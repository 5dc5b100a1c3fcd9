"""The families reproduction: every policy on every adversarial family instance."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")


from lpsched.research.reproductions.families import family_sweep  # noqa: E402
from lpsched.research.reproductions.families import run as reproduce_families  # noqa: E402


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


def test_an_impossible_family_row_is_recomputed(tmp_path):
    family_sweep(tmp_path, memories=(16,), progress=False)
    path = tmp_path / "families.csv"
    lines = path.read_text().splitlines(keepends=True)
    cells = lines[1].split(",")  # fcfs family, M = 16, policy fcfs: its own policy
    assert cells[:4] == ["fcfs", "16", cells[2], "fcfs"]
    cells[4], cells[6] = "1", "0.111111"
    lines[1] = ",".join(cells)
    path.write_text("".join(lines))
    messages = []
    rows = family_sweep(tmp_path, memories=(16,), progress=False, report=messages.append)
    own = [r for r in rows if r["family"] == "fcfs" and r["policy"] == "fcfs"][0]
    assert own["tel"] == own["closed_form"] != "1"
    assert any("line 2:" in m and "below the good schedule" in m for m in messages)
