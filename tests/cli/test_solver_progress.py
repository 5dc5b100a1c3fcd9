"""The solver commands' progress, limits and JSON: ``exact -v``, ``--max-nonzeros``, ``export``'s
horizon, ``schedule --json``, ``policies --json``."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from click.testing import CliRunner
from reference.shipped import MIX10

from lpsched.cli import main
from lpsched.io import read_instance, read_schedule
from lpsched.policies.registry import POLICIES
from lpsched.solvers.backends.highs import new_highs

EXACT = MIX10  # optimal TEL 74, T = 23
UPDATE = re.compile(r"^exact +[\d.]+ s  \S+  incumbent \S+  bound \S+  gap \S+$")


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def lpsched(*args, timeout=300):
    return subprocess.run(
        [sys.executable, "-m", "lpsched.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.mark.parametrize(
    ("solver", "log_line"), [("highs", "Presolving model"), ("cpsat", "#Bound")]
)
def test_exact_verbose_streams_the_solver_log_and_updates(solver, log_line):
    proc = lpsched("exact", EXACT, "--solver", solver, "-v", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["objective"] == 74  # standard output: only the JSON
    lines = proc.stderr.splitlines()
    assert any(log_line in line for line in lines)
    updates = [line for line in lines if UPDATE.match(line)]
    assert updates and updates[-1].endswith("optimal  incumbent 74  bound 74  gap 0.00%")
    assert "Running HiGHS" not in proc.stdout


def test_exact_without_verbose_is_quiet_off_a_terminal():
    proc = lpsched("exact", EXACT, "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["status"] == "optimal"
    # off a terminal: no banner and no solver log, only the plain update line every 30 s
    # (none in a run this short, about a second; a loaded machine may pass 30 s); the short
    # run's silence is tests/solvers/test_progress.py::test_log_is_written_line_by_line_...
    assert all(UPDATE.match(line) for line in proc.stderr.splitlines()), proc.stderr


def test_bound_verbose_streams_the_lp_log():
    r = invoke("bound", EXACT, "-v")
    assert r.exit_code == 0, r.output
    assert "lp lower bound 69.54" in r.stdout
    assert "Objective value" in r.stderr and "bound 70" in r.stderr.splitlines()[-1]


def test_max_nonzeros_names_the_option_and_raising_it_proceeds(tmp_path):
    r = invoke("exact", EXACT, "--max-nonzeros", 100)
    assert r.exit_code == 1
    assert "above the limit of 100 (raise it with --max-nonzeros" in r.stderr
    r = invoke("exact", EXACT, "--max-nonzeros", 875)
    assert r.exit_code == 1
    size = int(re.search(r"has ([\d,]+) non-zeros", r.stderr).group(1).replace(",", ""))
    # T = 23 from the local search's UB 74, which ends by its moves far within its 5 s
    # (tests/policies/test_local_search.py::test_the_local_search_on_mix10_ends_by_its_moves)
    assert size == 876 and "at horizon T = 23" in r.stderr  # the binary model at T = 23
    r = invoke("exact", EXACT, "--max-nonzeros", size, "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["objective"] == 74
    r = invoke("bound", EXACT, "--method", "lp", "--max-nonzeros", 100)
    assert r.exit_code == 1 and "--max-nonzeros" in r.stderr
    r = invoke("bound", EXACT, "--max-nonzeros", 100)  # auto falls back and says why
    assert r.exit_code == 0 and r.stdout.startswith("combinatorial lower bound")
    assert "LP too large" in r.stdout and "--max-nonzeros" in r.stdout
    r = invoke("bound", EXACT, "--max-nonzeros", 100_000, "--json")
    assert json.loads(r.stdout)["method"] == "lp"
    r = invoke("export", EXACT, "--max-nonzeros", 100, "-o", tmp_path / "m.lp")
    assert r.exit_code == 1 and "--max-nonzeros" in r.stderr and not (tmp_path / "m.lp").exists()
    r = invoke("exact", EXACT, "--max-nonzeros", 0)
    assert r.exit_code == 2  # usage error: not a positive integer


@pytest.mark.parametrize(("fmt", "backend"), [("lp", "pyomo"), ("mps", "highs")])
def test_export_prints_and_records_the_horizon_of_exact(tmp_path, fmt, backend):
    out = tmp_path / f"m.{fmt}"
    r = invoke("export", EXACT, "--format", fmt, "--backend", backend, "-o", out, "--json")
    assert r.exit_code == 0, r.output
    facts = json.loads(r.stdout)
    exact = json.loads(invoke("exact", EXACT, "--json").stdout)
    # 23 from the local search's UB 74, which ends by its moves far within its 5 s
    # (tests/policies/test_local_search.py::test_the_local_search_on_mix10_ends_by_its_moves)
    assert facts["horizon"] == exact["horizon"] == 23
    assert f"horizon T = {facts['horizon']} (T1 = 63, T2 = 23, start windows)" in r.stderr
    mark = "\\ " if fmt == "lp" else "* "
    head = out.read_text().splitlines()[:3]
    assert any(line.startswith(f"{mark}horizon T = 23 (T1 = 63, T2 = 23") for line in head)
    h = new_highs()  # the comment lines do not disturb a reader: the MIP still solves to 74
    assert str(h.readModel(str(out))) == "HighsStatus.kOk"
    h.run()
    assert round(h.getInfo().objective_function_value) == 74


def test_schedule_json_and_policies_json(tmp_path):
    r = invoke("schedule", EXACT, "--policy", "mcsf", "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["policy"] == "mcsf" and doc["output"] is None
    inline = tmp_path / "inline.json"  # the schedule in the summary is a schedule file
    inline.write_text(json.dumps(doc["schedule"]))
    assert read_schedule(inline, read_instance(EXACT)).tel == doc["tel"]
    out = tmp_path / "s.json"
    r = invoke("schedule", EXACT, "--policy", "sorted-lp", "--json", "-o", out)
    doc = json.loads(r.stdout)
    assert "schedule" not in doc and doc["output"] == str(out)
    assert read_schedule(out, read_instance(EXACT)).tel == doc["tel"]
    r = invoke(
        "schedule", EXACT, "--policy", "sorted-lp", "--max-nonzeros", 100, "--option", "lp=full"
    )
    assert r.exit_code == 1 and "policy 'sorted-lp' cannot run" in r.stderr
    assert "combinatorial" not in r.stderr and "--max-nonzeros" in r.stderr
    r = invoke("policies", "--json")
    rows = json.loads(r.stdout)
    assert [p["name"] for p in rows] == list(POLICIES)
    sorted_f = next(p for p in rows if p["name"] == "sorted-f")
    assert sorted_f["options"] == ["solver", "sample_size", "quantile", "seed", "fit"]
    assert sorted_f["backfill"] is True
