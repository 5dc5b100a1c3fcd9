"""``lpsched check`` and ``lpsched plot``: feasibility report, exit codes, figure files."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from lpsched.cli import main
from lpsched.instance import Instance
from lpsched.io import write_instance, write_schedule
from lpsched.schedule import Schedule

# M = 8 tokens; A, B, C arrive at rounds 0, 1, 2
INST = Instance.from_arrays(
    [4, 3, 0], [3, 2, 1], 8, [0, 1, 2], ids=["A", "B", "C"], name="hand-check"
)


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def inst_path(tmp_path):
    path = tmp_path / "i.json"
    write_instance(INST, path)
    return path


def _v2(tmp_path, starts, **extra):
    doc = {
        "format": "lpsched/schedule",
        "version": 2,
        "instance": INST.name,
        "policy": "hand",
        "requests": [{"id": i, "start": p} for i, p in zip(INST.ids, starts, strict=True)],
        **extra,
    }
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    return path


def test_check_infeasible_hand_made(tmp_path, inst_path):
    # C starts at 1, before its arrival 2. Round 2: A 4+2, B 3+1, C 0+1 = 11 tokens;
    # round 3: A 4+3, B 3+2 = 12 > M = 8 (the peak). TEL = 3 + 2 + 0 = 5, makespan 3.
    path = _v2(tmp_path, [0, 1, 1], tel=5)
    r = invoke("check", inst_path, path)
    assert r.exit_code == 1, r.output
    assert r.stdout.splitlines() == [
        f"schedule     {path} (hand) of hand-check: n = 3, M = 8 tokens",
        "TEL          5 rounds (mean latency 1.7)",
        "makespan     3 rounds",
        "peak memory  12 tokens at round 3 (150.0% of M)",
        "infeasible   request 'C' starts at round 1 before its arrival 2",
    ]
    r = invoke("check", inst_path, path, "--json")
    assert r.exit_code == 1
    out = json.loads(r.stdout)
    assert out["first_violation"] == "request 'C' starts at round 1 before its arrival 2"
    assert (out["feasible"], out["tel"], out["peak_memory"], out["peak_round"]) == (
        False,
        5,
        12,
        3,
    )


def test_check_memory_violation_names_the_round(tmp_path, inst_path):
    # starts 0, 1, 2: every request completes at round 3, holding 7 + 5 + 1 = 13 > 8
    r = invoke("check", inst_path, _v2(tmp_path, [0, 1, 2]), "--json")
    assert r.exit_code == 1
    out = json.loads(r.stdout)
    assert out["first_violation"] == "round 3 holds 13 tokens of KV cache, more than M = 8"
    assert (out["peak_memory"], out["peak_round"], out["makespan"]) == (13, 3, 3)


def test_check_feasible_and_version_1(tmp_path, inst_path):
    # A in rounds 1-3 (5, 6, 7 tokens), B starts at 3 (rounds 4-5: 4, 5), C at 5 (round 6: 1)
    sched = Schedule(INST, [0, 3, 5], policy="hand")
    write_schedule(sched, tmp_path / "v2.json")
    v1 = {"format": "lpsched/schedule", "version": 1, "instance": INST.name, "start": [0, 3, 5]}
    (tmp_path / "v1.json").write_text(json.dumps(v1))
    for name in ("v2.json", "v1.json"):
        r = invoke("check", inst_path, tmp_path / name, "--json")
        assert r.exit_code == 0, r.output
        out = json.loads(r.stdout)
        assert out["feasible"] and out["first_violation"] is None
        assert (out["tel"], out["makespan"], out["peak_memory"], out["peak_round"]) == (
            3 + 4 + 4,
            6,
            7,
            3,
        )
    r = invoke("check", inst_path, tmp_path / "v2.json")
    assert r.exit_code == 0 and r.stdout.splitlines()[-1] == "feasible     yes"


def test_check_unreadable_schedule_exits_1_naming_the_field(tmp_path, inst_path):
    path = _v2(tmp_path, [0, 3, 5], tel=99)
    r = invoke("check", inst_path, path)
    assert r.exit_code == 1
    assert f"{path}: field 'tel' is 99, but the starts give 11" in r.stderr


@pytest.mark.parametrize(
    ("suffix", "magic"), [(".png", b"\x89PNG"), (".svg", b"<?xml"), (".pdf", b"%PDF")]
)
def test_plot_writes_each_format(tmp_path, inst_path, suffix, magic):
    write_schedule(Schedule(INST, [0, 3, 5], policy="hand"), tmp_path / "s.json")
    out = tmp_path / f"fig{suffix}"
    r = invoke("plot", inst_path, tmp_path / "s.json", "-o", out)
    assert r.exit_code == 0, r.output
    assert out.read_bytes().startswith(magic) and out.stat().st_size > 1000


def test_plot_refuses_other_suffixes_and_draws_infeasible(tmp_path, inst_path):
    path = _v2(tmp_path, [0, 1, 1])
    r = invoke("plot", inst_path, path, "-o", tmp_path / "fig.jpg")
    assert r.exit_code == 2 and "one of .png, .pdf, .svg" in r.output
    assert not (tmp_path / "fig.jpg").exists()
    r = invoke("plot", inst_path, path, "-o", tmp_path / "fig.png", "--color", "batch")
    assert r.exit_code == 0, r.output
    assert "note: infeasible: request 'C' starts at round 1 before its arrival 2" in r.stderr
    assert (tmp_path / "fig.png").stat().st_size > 1000


def test_exact_text_output_has_the_schedule(tmp_path, inst_path):
    out = tmp_path / "e.json"
    r = invoke("exact", inst_path, "-o", out)
    assert r.exit_code == 0, r.output
    doc = json.loads(out.read_text())
    starts = ", ".join(f"{q['id']} {q['start']}" for q in doc["requests"])
    assert r.stdout.splitlines()[-1] == f"schedule    start rounds {starts}; written to {out}"
    assert invoke("check", inst_path, out).exit_code == 0


def test_v1_runs_with_a_bad_completed_flag_are_refused(tmp_path):
    """Issue 22, item 2: M = 10, three requests (s = 5, o = 1); a v1 'run' flagged 7 that ends
    before it starts counted as negative memory, and `check` said feasible, peak 7, while round
    10 holds 12 tokens. The flag must be 0 or 1, in the file and in Schedule(runs=...)."""
    from lpsched.schedule import InfeasibleScheduleError

    inst = Instance.from_arrays([5, 5, 5], [1, 1, 1], 10, name="v1-runs")
    inst_path = tmp_path / "i.json"
    write_instance(inst, inst_path)
    runs = [[0, 10, 0, 7], [0, 11, 12, 1], [1, 9, 10, 1], [2, 9, 10, 1]]
    doc = {
        "format": "lpsched/schedule",
        "version": 1,
        "instance": inst.name,
        "start": [11, 9, 9],
        "runs": runs,
    }
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    for command in ("check", "plot"):
        extra = ["-o", tmp_path / "s.png"] if command == "plot" else []
        r = invoke(command, inst_path, path, *extra)
        assert r.exit_code == 1, r.output
        assert f"{path}: field 'runs', row 0: completed must be 0 (cut short) or 1, got 7" in (
            r.stderr
        )
    with pytest.raises(InfeasibleScheduleError, match="runs, row 0: completed must be 0"):
        Schedule(inst, [11, 9, 9], runs=runs)
    # flagged as cut short, the backwards run is a violation, not negative memory
    cut = [[0, 10, 0, 0], *runs[1:]]
    sched = Schedule(inst, [11, 9, 9], runs=cut)
    assert not sched.feasible
    assert any("evicted run (10, 0) must last 1 to" in v for v in sched.violations())
