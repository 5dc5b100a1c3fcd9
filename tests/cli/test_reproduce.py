"""``lpsched reproduce`` with your own policy (issue 22, item 12): ``--import MODULE``,
``--policies`` (the exact list, or ``+NAME`` added to the study's) and ``--option KEY=VALUE``
put a plug-in policy into the per-policy tables, also on worker processes; the others refuse.

The plug-in is the ``own_policy`` fixture of ``tests/conftest.py`` (``alpha-sort``: requests by
s_i + alpha * o_i; every call logs its process and the ``alpha`` it was given).
"""

from __future__ import annotations

import csv
import os
from functools import partial

import pytest
from click.testing import CliRunner

from lpsched.cli import main
from lpsched.generators.small import EXACT_WORKLOADS
from lpsched.generators.workloads import generate
from lpsched.research.reproductions import headline as hl
from lpsched.research.reproductions.optimality_gaps import DEFAULT_MEMORY, GAP_POLICIES
from lpsched.research.reproductions.registry import REPRODUCTIONS, Reproduction

#: optimality-gaps at its smallest: one workload, n = 6 (the MIP proves it at once)
TINY = ["--workload", "scaled-mix", "--sizes", "6"]


def _reproduce(*args):
    return CliRunner().invoke(main, ["reproduce", *args])


def _rows(path):
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def _header(table: str) -> list[str]:
    return [c.strip() for c in table.splitlines()[0].strip("|").split("|")]


def _scaled_mix(seed):
    return EXACT_WORKLOADS["scaled-mix"](6, seed, DEFAULT_MEMORY["scaled-mix"])


def test_a_plugin_policy_is_a_column_of_optimality_gaps(own_policy, tmp_path):
    res = _reproduce(
        "optimality-gaps",
        *TINY,
        "--seeds",
        "0",
        "--workers",
        "1",
        "--import",
        own_policy.module,
        "--policies",
        f"+{own_policy.name}",
        "--out",
        "out",
    )
    assert res.exit_code == 0, res.output
    header = _header(res.stdout)
    assert header[5:-1] == [*GAP_POLICIES, own_policy.name]  # the shipped columns, then ours
    rows = _rows(tmp_path / "out" / "optimality-gaps.csv")
    assert [r["policy"] for r in rows] == [*GAP_POLICIES, own_policy.name]
    assert int(rows[-1]["tel"]) == own_policy.tel(_scaled_mix(0))
    if rows[-1]["status"] == "optimal":
        assert int(rows[-1]["tel"]) >= int(rows[-1]["optimum"])
    assert own_policy.name in (tmp_path / "out" / "optimality-gaps.md").read_text()


def test_the_exact_list_and_a_resume_with_another_list(own_policy, tmp_path):
    """--policies A,B is the exact list, in column order; a rerun with one more policy
    computes only its rows; a rerun with fewer leaves the others out of the table, saying so."""
    common = [*TINY, "--seeds", "0", "--workers", "1", "--import", own_policy.module]
    res = _reproduce("optimality-gaps", *common, "--policies", f"{own_policy.name},fcfs")
    assert res.exit_code == 0, res.output
    assert _header(res.stdout)[5:-1] == [own_policy.name, "fcfs"]
    csv_path = tmp_path / "results" / "optimality-gaps.csv"
    first = _rows(csv_path)
    assert [r["policy"] for r in first] == [own_policy.name, "fcfs"]

    res = _reproduce("optimality-gaps", *common, "--policies", f"{own_policy.name},fcfs,mcsf")
    assert res.exit_code == 0, res.output
    assert "reused 2 of 3 row(s)" in res.stderr
    again = _rows(csv_path)
    assert again[:2] == first and [r["policy"] for r in again] == [own_policy.name, "fcfs", "mcsf"]

    res = _reproduce("optimality-gaps", *common, "--policies", "mcsf")
    assert res.exit_code == 0, res.output
    assert _header(res.stdout)[5:-1] == ["mcsf"]
    assert f"outside this run (policy {own_policy.name}, fcfs)" in res.stderr
    assert len(_rows(csv_path)) == 3  # nothing computed, nothing dropped from the file


def test_an_option_reaches_the_policy_and_is_part_of_the_rows_parameters(own_policy, tmp_path):
    common = [*TINY, "--seeds", "0", "--workers", "1", "--import", own_policy.module]
    res = _reproduce("optimality-gaps", *common, "--policies", f"fcfs,{own_policy.name}")
    assert res.exit_code == 0, res.output
    assert {c[1:] for c in own_policy.calls()} == {("float", "0.0")}  # its own default
    plain = _rows(tmp_path / "results" / "optimality-gaps.csv")

    res = _reproduce(
        "optimality-gaps", *common, "--policies", f"fcfs,{own_policy.name}", "--option", "alpha=5"
    )
    assert res.exit_code == 0, res.output
    assert own_policy.calls()[-1][1:] == ("int", "5")  # parsed as an int, given as is
    # the old rows were computed without the option: reported, ignored, computed anew
    assert "2 row(s) were computed under other parameters" in res.stderr
    rows = _rows(tmp_path / "results" / "optimality-gaps.csv")[len(plain) :]
    assert [r["policy"] for r in rows] == ["fcfs", own_policy.name]
    assert '"policy_options":{"alpha":5}' in rows[0]["params"]
    assert '"policy_options"' not in plain[0]["params"]  # the shipped parameters are unchanged
    assert int(rows[1]["tel"]) == own_policy.tel(_scaled_mix(0), alpha=5)
    assert rows[0]["tel"] == plain[0]["tel"]  # fcfs declares no alpha


def test_worker_processes_import_the_plugin(own_policy, tmp_path):
    """--workers 2 with two tasks: every call of the plug-in is in a worker process, which
    imported the module named by --import itself (not through an inherited environment)."""
    res = _reproduce(
        "optimality-gaps",
        *TINY,
        "--seeds",
        "0,1",
        "--workers",
        "2",
        "--import",
        own_policy.module,
        "--policies",
        f"fcfs,{own_policy.name}",
        "--option",
        "alpha=0.5",
    )
    assert res.exit_code == 0, res.output
    calls = own_policy.calls()
    assert len(calls) == 2 and {c[1:] for c in calls} == {("float", "0.5")}
    assert os.getpid() not in {c[0] for c in calls}
    rows = _rows(tmp_path / "results" / "optimality-gaps.csv")
    tel = {r["seed"]: int(r["tel"]) for r in rows if r["policy"] == own_policy.name}
    assert tel == {str(s): own_policy.tel(_scaled_mix(s), alpha=0.5) for s in (0, 1)}


@pytest.mark.slow
def test_dask_workers_import_the_plugin(own_policy, tmp_path):
    pytest.importorskip("distributed")
    res = _reproduce(
        "optimality-gaps",
        *TINY,
        "--seeds",
        "0,1",
        "--scheduler",
        "local",
        "--workers",
        "2",
        "--import",
        own_policy.module,
        "--policies",
        own_policy.name,
        "--option",
        "alpha=0.5",
    )
    assert res.exit_code == 0, res.output
    calls = own_policy.calls()
    assert len(calls) == 2 and {c[1:] for c in calls} == {("float", "0.5")}
    assert os.getpid() not in {c[0] for c in calls}
    rows = _rows(tmp_path / "results" / "optimality-gaps.csv")
    assert {r["seed"]: int(r["tel"]) for r in rows} == {
        str(s): own_policy.tel(_scaled_mix(s), alpha=0.5) for s in (0, 1)
    }


def test_a_plugin_policy_gets_a_ratio_row_in_headline(own_policy, tmp_path, monkeypatch):
    """headline at n = 60 without the sensitivity tables (its command line has no size)."""
    small = Reproduction(hl.NAME, hl.DESCRIPTION, partial(hl.run, n=60, sensitivity=False))
    monkeypatch.setitem(REPRODUCTIONS, hl.NAME, small)
    args = ["headline", "--seeds", "0", "--workers", "1", "--import", own_policy.module]
    res = _reproduce(*args, "--policies", f"+{own_policy.name},+{own_policy.name}+backfill")
    assert res.exit_code == 0, res.output
    rows = _rows(tmp_path / "results" / "headline.csv")
    assert {r["policy"] for r in rows} == {*hl.HEADLINE_POLICIES, own_policy.name} | {
        f"{own_policy.name}+backfill"
    }
    labels = [line.split("|")[1].strip() for line in res.stdout.splitlines()[2:] if "|" in line]
    assert labels == [label for label, _, _ in hl.HEADLINE_RATIOS] + [
        f"{own_policy.name} / Sorted-F",
        f"{own_policy.name}+backfill / Sorted-F+backfill",
    ]
    inst = generate("paper-mix", 60, hl.PAPER_MEMORY, seed=0)
    lat = {r["policy"]: float(r["mean_latency"]) for r in rows if r["source"] == "paper-mix"}
    assert lat[own_policy.name] == pytest.approx(own_policy.tel(inst) / 60, rel=1e-5)
    line = next(ln for ln in res.stdout.splitlines() if ln.startswith(f"| {own_policy.name} /"))
    paper_mix = _header(res.stdout).index("paper-mix")
    assert (
        line.split("|")[paper_mix + 1]
        .strip()
        .startswith(f"{lat[own_policy.name] / lat['sorted-f']:.2f}")
    )


def test_a_plugin_policy_is_a_column_of_certified_gaps(own_policy, tmp_path):
    res = _reproduce(
        "certified-gaps",
        "--workload",
        "scaled-mix",
        "--sizes",
        "5",
        "--seeds",
        "0",
        "--time-limits",
        "1",
        "--workers",
        "1",
        "--import",
        own_policy.module,
        "--policies",
        f"mcsf,{own_policy.name}",
        "--option",
        "alpha=0.25",
    )
    assert res.exit_code == 0, res.output
    assert _header(res.stdout)[5:7] == ["mcsf", own_policy.name]
    rows = _rows(tmp_path / "results" / "certified-gaps.csv")
    assert [r["policy"] for r in rows] == ["mcsf", own_policy.name]
    inst = EXACT_WORKLOADS["scaled-mix"](5, 0)
    assert int(rows[1]["tel"]) == own_policy.tel(inst, alpha=0.25)
    assert {c[1:] for c in own_policy.calls()} == {("float", "0.25")}


@pytest.mark.parametrize(
    "args, message",
    [
        (["families", "--policies", "fcfs"], "'families' has a fixed set of policies"),
        (["online-load", "--option", "seed=1"], "'online-load' takes no policy options"),
        (["optimality-gaps", "--policies", "nosuch"], "unknown policy 'nosuch'; registered: fcfs"),
        (["optimality-gaps", "--policies", "fcfs,+mcsf"], "or additions (+a,+b), not both"),
        (
            ["optimality-gaps", "--policies", "fcfs,mcsf", "--option", "quantile=0.5"],
            "option 'quantile' is declared by none of the selected policies (fcfs, mcsf)",
        ),
        (
            ["optimality-gaps", "--option", "solver=swap"],
            "option 'solver': optimality-gaps runs Sorted-F with its exact dp Phase 1",
        ),
        (["headline", "--policies", "fcfs,mcsf"], "every ratio is to sorted-f"),
        (["optimality-gaps", "--option", "alpha"], "expected KEY=VALUE"),
        (["optimality-gaps", "--option", "seed=1", "--option", "seed=2"], "'seed' given twice"),
        (["optimality-gaps", "--option", "quantile=nan"], "'nan' is not a finite number"),
    ],
)
def test_usage_errors_exit_2_before_any_work(args, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = _reproduce(*args, "--out", "out")
    assert res.exit_code == 2, res.output
    assert message in res.stderr
    assert not (tmp_path / "out").exists()  # refused before the sweep: no folder, no CSV


def test_per_policy_tables_name_themselves_in_the_refusal(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = _reproduce("intervals", "--policies", "fcfs")
    assert res.exit_code == 2
    assert "per-policy tables: headline, optimality-gaps, certified-gaps, ratios" in res.stderr
