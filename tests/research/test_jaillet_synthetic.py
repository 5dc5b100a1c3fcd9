"""The jaillet-synthetic reproduction on a tiny scale (2 trials, n = 4, a 1 s solve): rows in
both conventions, resume, the table's wording, the command line. Nothing here depends on the
machine's speed: a status may differ, the inequalities between TELs and bounds may not."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from click.testing import CliRunner

from lpsched.certify import certify as real_certify
from lpsched.cli import main
from lpsched.generators.jaillet import jaillet_reading, jaillet_synthetic
from lpsched.policies.registry import run_policy
from lpsched.research.reproductions import jaillet_synthetic as js

TINY = {"trials": 2, "sizes": [4], "time_limit": 1.0, "progress": False}


def _rows(folder: Path) -> list[dict[str, str]]:
    with (folder / "jaillet-synthetic.csv").open() as fh:
        return list(csv.DictReader(fh))


@pytest.fixture
def counted(monkeypatch):
    """The real certify, its calls counted."""
    calls: list[str] = []

    def certify(instance, *args, **kwargs):
        calls.append(instance.name)
        return real_certify(instance, *args, **kwargs)

    monkeypatch.setattr(js, "certify", certify)
    return calls


def test_rows_in_both_conventions(tmp_path, counted):
    text = js.run(tmp_path, **TINY)
    rows = _rows(tmp_path)
    assert len(rows) == 4 and len(counted) == 4  # 2 trials x 2 conventions, one solve each
    assert {(r["trial"], r["convention"]) for r in rows} == {
        (t, c) for t in ("0", "1") for c in ("lpsched", "jaillet")
    }
    for r in rows:
        n, tel, best = int(r["n"]), int(r["tel"]), int(r["best_tel"])
        inst = jaillet_synthetic(4, int(r["trial"]))
        assert n == 4 and int(r["memory"]) == inst.memory and r["policy"] == "mcsf"
        assert float(r["ratio"]) >= 1 - 1e-9 and abs(float(r["ratio"]) - tel / best) < 1e-9
        assert float(r["bound"]) <= best + 1e-6 and best <= int(r["solve_tel"])
        assert r["status"] in ("optimal", "gap") and 0 <= float(r["gap"]) < 1
        if r["convention"] == "lpsched":
            assert r["shift"] == "0" and tel == run_policy(inst, "mcsf").tel
        else:  # the TEL in Jaillet's reading: lpsched's on (s - 1, o + 1), minus n
            assert r["shift"] == str(n)
            assert tel == run_policy(jaillet_reading(inst), "mcsf").tel - n
    proven = all(r["status"] == "optimal" for r in rows)
    header = text.splitlines()[0]
    assert ("TEL / OPT" in header) == proven and ("TEL / best found" in header) != proven
    assert "| paper (Jaillet et al.)" in text and "1.005 / - / 1.074" in text
    assert "114/200" in text and "## Per trial" in text
    assert (tmp_path / "jaillet-synthetic.md").read_text().startswith(text.splitlines()[0])


def test_a_rerun_resumes_and_a_policy_added_recomputes_the_tasks(tmp_path, counted):
    js.run(tmp_path, **TINY)
    assert len(counted) == 4
    js.run(tmp_path, **TINY)
    assert len(counted) == 4  # every row reused
    text = js.run(tmp_path, **TINY, policies=("mcsf", "fcfs"))
    assert len(counted) == 8  # each task's rows come from one solve: computed again, whole
    rows = [r for r in _rows(tmp_path) if r["policy"] == "fcfs"]
    assert len(rows) == 4 and all(float(r["ratio"]) >= 1 - 1e-9 for r in rows)
    assert "| fcfs" in text and "| mcsf" in text
    js.run(tmp_path, **{**TINY, "trials": 1})  # a one-trial rerun draws on the same rows
    assert len(counted) == 8


def _row(trial: int, status: str, tel: int = 12, best: int = 10) -> dict[str, str]:
    gap = "0.0" if status == "optimal" else "0.2"
    return {
        "trial": str(trial),
        "size": "drawn",
        "convention": "lpsched",
        "policy": "mcsf",
        "n": "40",
        "memory": "30",
        "tel": str(tel),
        "best_tel": str(best),
        "best_method": "lns",
        "ratio": repr(tel / best),
        "bound": "10.0" if status == "optimal" else "8.0",
        "status": status,
        "gap": gap,
        "solve_s": "1.0",
    }


def test_the_table_says_opt_only_when_every_trial_is_proven():
    proven = [_row(0, "optimal"), _row(1, "optimal", tel=10)]
    text = js.summary_table(proven)
    assert "TEL / OPT: mean / best / worst" in text and "= OPT" in text
    assert "1.100 / 1.000 / 1.200" in text and "1/2" in text and "2/2" in text
    mixed = [_row(0, "optimal"), _row(1, "gap", tel=10)]
    text = js.summary_table(mixed)
    assert "TEL / best found" in text and "| = OPT" not in text
    assert "10.0% / 20.0%" in text and "1/2" in text
    assert "not to OPT" in text
    assert "| 0 " in js.trial_table(mixed) and "12 (1.200)" in js.trial_table(mixed)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"trials": 0}, "trials must be a positive integer"),
        ({"time_limit": 0}, "must be None"),
        ({"sizes": [0]}, "sizes must be numbers of requests >= 1"),
    ],
)
def test_bad_options_are_refused(tmp_path, kwargs, message):
    with pytest.raises(ValueError, match=message):
        js.run(tmp_path, **{**TINY, **kwargs})
    assert not (tmp_path / "jaillet-synthetic.csv").exists()


def test_the_command_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = ["reproduce", "jaillet-synthetic", "--trials", "1", "--sizes", "3"]
    r = CliRunner().invoke(main, [*args, "--time-limit", "1", "--workers", "1", "--out", "o"])
    assert r.exit_code == 0, r.output
    assert len(_rows(tmp_path / "o")) == 2 and "paper (Jaillet et al.)" in r.stdout
    r = CliRunner().invoke(main, ["reproduce", "optimality-gaps", "--trials", "3"])
    assert r.exit_code == 2 and "'optimality-gaps' has no trials" in r.stderr
    r = CliRunner().invoke(main, ["reproduce", "headline", "--time-limit", "3"])
    assert r.exit_code == 2 and "no single time limit" in r.stderr
    assert "jaillet-synthetic" in r.stderr
