"""``schedule``, ``check`` and ``plot`` under a time model refuse figures that would be
infinite, negative or about the wrong field, with one line naming the file, before writing."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from lpsched.cli import main
from lpsched.instance import Instance
from lpsched.io import write_instance, write_schedule
from lpsched.policies.registry import run_policy

TIMED = Instance.from_arrays(
    [3, 2, 4], [2, 3, 2], 20, [0, 0, 0], name="timed3", arrival_s=[0.5, 2.0, 40.0]
)


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_schedule_with_an_overflowing_clock_writes_nothing(tmp_path):
    inst = tmp_path / "i.json"
    write_instance(TIMED.replace(arrival_s=None), inst)
    out = tmp_path / "big.json"
    r = invoke(
        "schedule", inst, "--policy", "fcfs", "--time-model", "linear:base_s=1e308", "-o", out
    )
    assert r.exit_code == 1 and not out.exists()
    assert "the clock overflows" in r.stderr and "'timed3'" in r.stderr
    ok = tmp_path / "ok.json"
    assert invoke("schedule", inst, "--policy", "fcfs", "-o", ok).exit_code == 0
    r = invoke("check", inst, ok, "--time-model", "linear:base_s=1e308")
    assert r.exit_code == 1 and f"{ok}: time model 'linear': the clock overflows" in r.stderr


@pytest.mark.parametrize("late", [False, True])
def test_check_and_plot_refuse_starts_before_the_arrival_in_seconds(tmp_path, late):
    """A round policy's schedule on an instance with arrival_s read as feasible with negative
    latencies; with every arrival after the last completion the error named no file."""
    inst = TIMED.replace(arrival_s=[1e3, 1e3, 1e3]) if late else TIMED
    ipath, spath = tmp_path / "i.json", tmp_path / "fcfs.json"
    write_instance(inst, ipath)
    write_schedule(run_policy(inst, "fcfs"), spath)
    r = invoke("check", ipath, spath, "--time-model", "linear")
    assert r.exit_code == 1 and r.stdout == ""
    assert (
        r.stderr.startswith(f"lpsched: error: {spath}: request ")
        and "before its arrival_s" in r.stderr
    )
    fig = tmp_path / "f.png"
    r = invoke("plot", ipath, spath, "--time-model", "linear", "-o", fig)
    assert r.exit_code == 1 and not fig.exists() and f"{spath}: request " in r.stderr
    assert invoke("check", ipath, spath).exit_code == 0  # in rounds: as before


def test_an_admission_round_past_2_40_names_arrival_s_and_its_round(tmp_path):
    inst = Instance.from_arrays([1, 1], [1, 1], 10, [0, 0], name="far", arrival_s=[0.0, 1e12])
    ipath = tmp_path / "far.json"
    write_instance(inst, ipath)
    for base, said in (("0.001", "at round 1000000000000000 "), ("1e-300", "10^312.0 rounds")):
        doc = {
            "format": "lpsched/schedule",
            "version": 2,
            "instance": "far",
            "time_model": {"name": "linear", "parameters": {"base_s": float(base)}},
            "requests": [{"id": "r0", "start": 0}, {"id": "r1", "start": 5}],
        }
        spath = tmp_path / f"s{base}.json"
        spath.write_text(json.dumps(doc))
        r = invoke("check", ipath, spath)
        assert r.exit_code == 1 and r.stderr.startswith(f"lpsched: error: {spath}: ")
        assert "arrival_s" in r.stderr and said in r.stderr and "-92233" not in r.stderr
