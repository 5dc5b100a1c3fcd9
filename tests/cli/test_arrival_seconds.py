"""Arrivals in seconds on the command line (SPEC section 10): ``generate --trace ...
--arrival-seconds`` and ``--arrival-rate-s`` write ``arrival_s``; ``run`` / ``schedule`` with
``--time-model`` run the online policies on the clock (the schedule changes), refuse policies
that admit by rounds (exit 2); ``check`` recomputes the admission rounds of a schedule file;
``reproduce --time-model``; bad ``arrival_s`` is one line naming file, request and field."""

from __future__ import annotations

import csv
import json
from functools import partial

import pytest
from click.testing import CliRunner

from lpsched.cli import main
from lpsched.io import read_instance
from lpsched.research.reproductions import online_load
from lpsched.research.reproductions.registry import REPRODUCTIONS, Reproduction

LINEAR = "linear:base_s=0.05,prefill_token_s=1e-3"


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def timed(tmp_path):
    """An instance of 40 conversation-like requests, Poisson in seconds (about 1 per 3 s)."""
    path = tmp_path / "timed.json"
    r = invoke(
        "generate", "--workload", "conversation", "-n", 40, "--memory", 8192, "--seed", 1,
        "--arrival-rate-s", 0.3, "-o", path,
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    return path


def test_generate_arrival_rate_s(timed):
    inst = read_instance(timed)
    assert inst.arrival_s is not None and inst.arrival.tolist() == [0] * 40
    assert inst.arrival_s[0] > 0 and list(inst.arrival_s) == sorted(inst.arrival_s)
    assert inst.metadata["arrival_rate_s"] == 0.3


def test_generate_from_a_trace_keeps_the_seconds(tmp_path):
    trace = tmp_path / "t.csv"
    with trace.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["num_prefill_tokens", "num_decode_tokens", "arrived_at"])
        for k in range(6):
            w.writerow([10 + k, 5, 1000.0 + 0.75 * k])
    out = tmp_path / "x.json"
    r = invoke("generate", "--trace", trace, "-n", 6, "--memory", 100, "--arrival-seconds",
               "--round-ms", 500, "-o", out)  # fmt: skip
    assert r.exit_code == 0, r.output
    inst = read_instance(out)
    by_prefill = dict(zip(inst.prefill.tolist(), inst.arrival_s.tolist(), strict=True))
    assert by_prefill == {10 + k: 0.75 * k for k in range(6)}
    rounds = dict(zip(inst.prefill.tolist(), inst.arrival.tolist(), strict=True))
    assert rounds == {10 + k: int(0.75 * k / 0.5 + 1e-9) for k in range(6)}
    r = invoke("generate", "--trace", trace, "-n", 6, "--memory", 100, "-o", tmp_path / "y.json")
    assert read_instance(tmp_path / "y.json").arrival_s is None
    r = invoke("generate", "-n", 6, "--memory", 100, "--arrival-seconds", "-o", tmp_path / "z")
    assert r.exit_code == 2 and "--arrival-seconds goes with --trace" in r.output


def test_run_with_a_time_model_runs_the_clock(timed):
    plain = json.loads(invoke("run", timed, "--json").stdout)
    assert [r["policy"] for r in plain["results"]] == ["fcfs", "mcsf", "size", "sorted-f", "volume"]
    res = invoke("run", timed, "--time-model", LINEAR, "--json")
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["arrivals_in_seconds"] is True
    assert [r["policy"] for r in data["results"]] == [
        "online-fcfs",
        "online-mcsf",
        "online-sorted-f",
    ]
    rounds = json.loads(invoke("run", timed, "--policies", "online-mcsf", "--json").stdout)
    assert rounds["results"][0]["tel"] != data["results"][1]["tel"]  # the schedule changed
    text = invoke("run", timed, "--time-model", LINEAR).stdout
    assert "arrivals in seconds (arrival_s): the policies admitted" in text


def test_run_refuses_policies_that_admit_by_rounds(timed):
    res = invoke("run", timed, "--time-model", "linear", "--policies", "fcfs,online-mcsf")
    assert res.exit_code == 2
    assert "has arrivals in seconds" in res.output and "fcfs admits by arrival rounds" in res.output
    assert "online-fcfs, online-mcsf, online-sorted-f, vllm, vllm-sf" in res.output
    res = invoke("run", timed, "--policies", "mcsf", "--option", "time_model=unit")
    assert res.exit_code == 2 and "set it with --time-model" in res.output


def test_schedule_file_round_trip_and_check_in_seconds(timed, tmp_path):
    out = tmp_path / "s.json"
    res = invoke("schedule", timed, "--policy", "vllm", "--time-model", LINEAR, "-o", out)
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    inst = read_instance(timed)
    arrivals = [r["arrival"] for r in data["requests"]]
    assert arrivals != inst.arrival.tolist() and arrivals == sorted(arrivals)
    ok = invoke("check", timed, out, "--json")
    assert ok.exit_code == 0, ok.output
    report = json.loads(ok.stdout)
    assert report["feasible"] and report["time_model"]["name"] == "linear"
    # an arrival field that is not the clock's admission round
    bad = json.loads(out.read_text())
    bad["requests"][3]["arrival"] += 1
    (tmp_path / "b.json").write_text(json.dumps(bad))
    res = invoke("check", timed, tmp_path / "b.json")
    assert res.exit_code == 1
    assert (
        "request 'r3': field 'arrival'" in res.output and "on the clock of time model" in res.output
    )
    # a start before the arrival in seconds: infeasible (the seconds and arrivals are derived)
    early = json.loads(out.read_text())
    for key in ("tel", "makespan", "peak_memory", "evictions", "wasted_tokens"):
        early.pop(key, None)
    for r in early["requests"]:
        for key in ("arrival", "completion", "latency_s", "ttft_s", "tpot_s"):
            r.pop(key, None)
    last = max(
        (i for i, r in enumerate(early["requests"]) if "runs" not in r),
        key=lambda i: data["requests"][i]["arrival"],
    )
    early["requests"][last]["start"] = data["requests"][last]["arrival"] - 1
    (tmp_path / "e.json").write_text(json.dumps(early))
    res = invoke("check", timed, tmp_path / "e.json", "--json")
    assert res.exit_code == 1, res.output
    assert "before its arrival" in json.loads(res.stdout)["first_violation"]


def test_bad_arrival_s_is_one_line_naming_file_request_and_field(tmp_path):
    doc = {
        "format": "lpsched/instance",
        "version": 1,
        "memory": 20,
        "requests": [
            {"id": "a", "prefill": 1, "decode": 1, "arrival_s": 0.0},
            {"id": "b", "prefill": 1, "decode": 1, "arrival_s": -2.5},
        ],
    }
    path = tmp_path / "neg.json"
    path.write_text(json.dumps(doc))
    res = invoke("run", path, "--time-model", "unit")
    assert res.exit_code == 1
    (line,) = res.stderr.strip().splitlines()
    assert "neg.json" in line and "request 'b'" in line and "'arrival_s'" in line and "-2.5" in line


def test_reproduce_time_model_only_where_taken(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(main, ["reproduce", "families", "--time-model", "unit"])
    assert res.exit_code == 2
    assert "'families' takes no time model" in res.stderr and "online-load" in res.stderr
    res = CliRunner().invoke(main, ["reproduce", "online-load", "--time-model", "nosuch"])
    assert res.exit_code == 2 and "nosuch" in res.stderr


def test_reproduce_online_load_in_seconds(tmp_path, monkeypatch):
    small = Reproduction(
        online_load.NAME,
        online_load.DESCRIPTION,
        partial(online_load.run, n=60, loads=(0.5, 1.5), trace_dir=None),
    )
    monkeypatch.setitem(REPRODUCTIONS, online_load.NAME, small)
    monkeypatch.setenv("LPSCHED_TRACES", str(tmp_path / "no-traces"))
    args = ["reproduce", "online-load", "--seeds", "0", "--workers", "1", "--out", tmp_path / "r"]
    res = CliRunner().invoke(main, [str(a) for a in args] + ["--time-model", LINEAR])
    assert res.exit_code == 0, res.output
    assert "latencies in seconds from arrival" in res.stdout
    with (tmp_path / "r" / "online-load-seconds.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 6 and {r["policy"] for r in rows} == set(online_load.ONLINE_POLICIES)
    params = json.loads(rows[0]["params"])
    assert params["time_model"]["name"] == "linear" and params["n"] == 60
    assert not (tmp_path / "r" / "online-load.csv").exists()
