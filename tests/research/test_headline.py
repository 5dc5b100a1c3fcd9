"""The headline reproduction on a small scale."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from lpsched.generators.workloads import generate
from lpsched.policies.registry import PolicySelectionError, import_plugins, run_policy
from lpsched.research.reproductions import headline as hl
from lpsched.research.reproductions.headline import run as headline
from lpsched.timing import TimeModelError


def _rows(path):
    with path.open() as fh:
        return list(csv.DictReader(fh))


def test_headline_small(tmp_path):
    table = headline(tmp_path, seeds=[0], n=200, memory=16492, progress=False, sensitivity=False)
    assert "FCFS / Sorted-F" in table and "4.87" in table and "2.09" in table
    rows = _rows(tmp_path / "headline.csv")
    assert len(rows) == 9 * len(hl.HEADLINE_SOURCES)
    assert {r["source"] for r in rows} == set(hl.HEADLINE_SOURCES)
    assert {r["policy"] for r in rows} >= {"fcfs", "sorted-f", "vllm"}
    for source in hl.HEADLINE_SOURCES:
        lat = {r["policy"]: float(r["mean_latency"]) for r in rows if r["source"] == source}
        assert f"{lat['fcfs'] / lat['sorted-f']:.2f}" in table
    assert not (tmp_path / "headline-shape.csv").exists()


def test_sensitivity_tables_are_the_rows(tmp_path):
    table = headline(tmp_path, seeds=[0, 1], n=60, memory=16492, progress=False)
    shape = _rows(tmp_path / "headline-shape.csv")
    memory = _rows(tmp_path / "headline-memory.csv")
    assert len(shape) == 3 * 2 * len(hl.SHAPE_PREFILL_SIGMAS) * len(hl.SHAPE_DECODE_SIGMAS)
    assert {int(r["memory"]) for r in memory} == set(hl.SENSITIVITY_MEMORIES)
    # the default shape's cell: mean over the seeds of each seed's ratio
    src = hl.shape_spec(hl.SHAPE_PREFILL_SIGMAS[2], hl.SHAPE_DECODE_SIGMAS[2])
    assert src == "lmsys-turn:0.8,summarization:0.2"  # the default shape: paper-mix's law
    lat = {(r["seed"], r["policy"]): float(r["mean_latency"]) for r in shape if r["source"] == src}
    fcfs = np.mean([lat[(s, "fcfs")] / lat[(s, "sorted-f")] for s in ("0", "1")])
    mcsf = np.mean([lat[(s, "mcsf")] / lat[(s, "sorted-f")] for s in ("0", "1")])
    line = next(ln for ln in table.splitlines() if ln.startswith("|           1.616"))
    assert line.split("|")[4].strip() == f"{fcfs:.2f} / {mcsf:.2f}"  # decode sigma 1.131


def test_ratio_rows_follow_the_policies():
    """Issue 22, item 12: the shipped list gives the shipped rows; a policy beyond it gets
    NAME / Sorted-F (with backfill: against Sorted-F+backfill); rows whose policies are left
    out go."""
    assert hl.ratio_specs(hl.HEADLINE_POLICIES) == list(hl.HEADLINE_RATIOS)
    assert hl.ratio_specs(["sorted-f", "mine", "fcfs", "mine+backfill"]) == [
        ("FCFS / Sorted-F", "fcfs", "sorted-f"),
        ("mine / Sorted-F", "mine", "sorted-f"),
        ("mine+backfill / Sorted-F", "mine+backfill", "sorted-f"),
    ]
    assert hl.ratio_specs(["sorted-f", "sorted-f+backfill", "mine+backfill"]) == [
        ("sorted-f+backfill / Sorted-F", "sorted-f+backfill", "sorted-f"),
        ("mine+backfill / Sorted-F+backfill", "mine+backfill", "sorted-f+backfill"),
    ]


def test_an_added_policy_is_a_row_and_its_options_reach_only_it(own_policy, tmp_path):
    import_plugins([own_policy.module])
    pols = ["fcfs", "sorted-f", own_policy.name]
    table = headline(
        tmp_path,
        seeds=[0],
        n=60,
        progress=False,
        policies=pols,
        policy_options={"alpha": 2.0},
    )
    rows = _rows(tmp_path / "headline-shape.csv")  # sensitivity: its three policies, no option
    assert {r["policy"] for r in rows} == {"fcfs", "mcsf", "sorted-f"}
    assert '"policy_options"' not in rows[0]["params"]
    rows = _rows(tmp_path / "headline.csv")
    assert {r["policy"] for r in rows} == set(pols)
    assert '"policy_options":{"alpha":2.0}' in rows[0]["params"]
    lat = {r["policy"]: float(r["mean_latency"]) for r in rows if r["source"] == "paper-mix"}
    inst = generate("paper-mix", 60, hl.PAPER_MEMORY, seed=0)
    assert lat[own_policy.name] == pytest.approx(own_policy.tel(inst, 2.0) / 60, rel=1e-5)
    line = next(ln for ln in table.splitlines() if ln.startswith(f"| {own_policy.name} / "))
    assert f"{lat[own_policy.name] / lat['sorted-f']:.2f}" in line
    with pytest.raises(PolicySelectionError, match="keep sorted-f"):
        headline(tmp_path / "x", policies=["fcfs", own_policy.name], progress=False)


# --------------------------------------------------------------------------- in seconds (issue 23)

HEADER = [*hl.COMPARISON_FIELDS, "params", "lpsched", "commit", "solvers"]


def _header(path):
    with path.open() as fh:
        return next(csv.reader(fh))


def test_without_a_time_model_files_columns_and_parameters_are_unchanged(tmp_path):
    table = headline(
        tmp_path, seeds=[0], n=40, policies=["fcfs", "sorted-f"], progress=False, sensitivity=False
    )
    assert _header(tmp_path / "headline.csv") == HEADER
    assert not (tmp_path / "headline-seconds.csv").exists()
    assert all('"time_model"' not in r["params"] for r in _rows(tmp_path / "headline.csv"))
    assert "In seconds" not in table


def test_under_unit_the_seconds_rows_are_the_round_figures(tmp_path):
    """SPEC section 10: ``unit`` gives back every round figure (TEL, mean and p99 latency,
    TTFT, TPOT, tokens per round), and the seconds table the rounds ratios."""
    pols = ["fcfs", "mcsf", "sorted-f", "vllm"]
    table = headline(
        tmp_path,
        seeds=[0],
        n=60,
        policies=pols,
        progress=False,
        sensitivity=False,
        time_model="unit",
    )
    assert not (tmp_path / "headline.csv").exists()
    assert _header(tmp_path / "headline-seconds.csv") == [
        *hl.COMPARISON_FIELDS,
        *hl.SECONDS_FIELDS,
        "params",
        "lpsched",
        "commit",
        "solvers",
    ]
    rows = _rows(tmp_path / "headline-seconds.csv")
    assert len(rows) == len(pols) * len(hl.HEADLINE_SOURCES)
    inst = generate("paper-mix", 60, hl.PAPER_MEMORY, seed=0)
    for r in rows:
        assert '"time_model":{"name":"unit","parameters":{}}' in r["params"]
        assert float(r["tel_s"]) == pytest.approx(int(r["tel"]), rel=1e-5)
        assert float(r["mean_latency_s"]) == pytest.approx(float(r["mean_latency"]), rel=1e-5)
        if r["source"] != "paper-mix":
            continue
        sched = run_policy(inst, r["policy"], solver="swap")
        lat = sched.completion - inst.arrival
        ttft = sched.start + 1 - inst.arrival
        multi = inst.decode > 1
        tpot = (sched.completion - sched.start - 1)[multi] / (inst.decode[multi] - 1)
        span = sched.makespan - inst.arrival.min()
        assert float(r["p99_latency_s"]) == pytest.approx(np.percentile(lat, 99), rel=1e-5)
        assert float(r["mean_ttft_s"]) == pytest.approx(ttft.mean(), rel=1e-5)
        assert float(r["mean_tpot_s"]) == pytest.approx(tpot.mean(), rel=1e-5)
        assert float(r["throughput_tokens_s"]) == pytest.approx(inst.decode.sum() / span, rel=1e-5)
    assert "### In seconds: time model unit" in table
    side = table[table.index("rounds beside seconds") :]
    for label in ("FCFS / Sorted-F", "MC-SF / Sorted-F", "vllm / Sorted-F"):
        line = next(ln for ln in side.splitlines() if ln.startswith(f"| {label} "))
        cells = [c.strip() for c in line.split("|")[1:-1]]
        assert cells[1] == cells[2]  # rounds == seconds


def test_the_seconds_table_is_the_rows_and_another_model_recomputes(tmp_path, capsys):
    opts = dict(seeds=[0, 1], n=40, policies=["fcfs", "mcsf", "sorted-f"], sensitivity=False)
    table = headline(tmp_path, progress=False, time_model="llama2-70b-a100x2", **opts)
    path = tmp_path / "headline-seconds.csv"
    rows = _rows(path)
    lat = {(r["source"], r["seed"], r["policy"]): float(r["mean_latency_s"]) for r in rows}
    for num, label in (("fcfs", "FCFS / Sorted-F"), ("mcsf", "MC-SF / Sorted-F")):
        want = [lat[("paper-mix", s, num)] / lat[("paper-mix", s, "sorted-f")] for s in "01"]
        sec = table[table.index("### In seconds") :]
        line = next(ln for ln in sec.splitlines() if ln.startswith(f"| {label} "))
        assert line.split("|")[2].strip().startswith(f"{np.mean(want):.2f} (")  # per source
        side = sec[sec.index("rounds beside seconds") :]
        line = next(ln for ln in side.splitlines() if ln.startswith(f"| {label} "))
        assert line.split("|")[3].strip() == f"{np.mean(want):.2f}"
    assert all(float(r["mean_latency_s"]) < float(r["mean_latency"]) for r in rows)  # < 1 s a round
    capsys.readouterr()
    headline(tmp_path, progress=False, time_model="llama2-70b-a100x2", **opts)  # resumed
    assert len(_rows(path)) == len(rows) and "other parameters" not in capsys.readouterr().err
    again = headline(tmp_path, progress=False, time_model="llama2-7b-a100x1", **opts)
    assert "other parameters" in capsys.readouterr().err  # the 70B rows are not reused
    fresh = _rows(path)[len(rows) :]
    assert len(fresh) == len(rows)
    assert all('"llama2-7b-a100x1"' in r["params"] for r in fresh)
    assert [r["tel"] for r in fresh] == [r["tel"] for r in rows]  # the same schedules
    assert "time model llama2-7b-a100x1" in again
    # the same model written with its parameters is the same model: reused
    capsys.readouterr()
    spec = "llama2-7b-a100x1:base_s=0.00880417"
    headline(tmp_path, progress=False, time_model=spec, **opts)
    assert len(_rows(path)) == 2 * len(rows)


def test_an_unknown_time_model_fails_before_any_run(tmp_path):
    with pytest.raises(KeyError, match="unknown time model"):
        headline(tmp_path, n=20, seeds=[0], progress=False, time_model="nope")
    with pytest.raises(TimeModelError, match="no parameter 'x'"):
        headline(tmp_path, n=20, seeds=[0], progress=False, time_model="unit:x=1")
    assert not any(tmp_path.glob("*.csv"))
