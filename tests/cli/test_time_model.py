"""``--time-model`` (SPEC section 10) on ``run``, ``schedule``, ``check`` and ``plot``, and
``lpsched time-models``: the JSON keys and their values, the tables, the schedule file's record
and its check, usage errors, a plug-in through ``--import``, and output byte-identical to before
without the option."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from click.testing import CliRunner
from reference.shipped import MIX10

from lpsched.cli import main
from lpsched.io import read_instance, read_schedule, schedule_to_dict, write_schedule
from lpsched.plugins import PLUGINS_ENV, _loaded
from lpsched.policies.registry import run_policy
from lpsched.timing import TIME_MODELS, time_model, to_seconds

INST = read_instance(MIX10)
SECONDS_KEYS = {
    "tel_s",
    "mean_latency_s",
    "p50_latency_s",
    "p90_latency_s",
    "p99_latency_s",
    "mean_ttft_s",
    "mean_tpot_s",
    "throughput_tokens_s",
}
#: The keys of ``run --json`` before time models (a result of each policy).
#: (``lower_bound``, ``bound_method`` and ``ratio_to_bound`` added with TEL / lower bound.)
RUN_KEYS = [
    "instance",
    "n",
    "memory",
    "phase1",
    "results",
    "skipped",
    "paper_ratios",
    "lower_bound",
    "bound_method",
]
RESULT_KEYS = [
    "policy",
    "tel",
    "mean_latency",
    "makespan",
    "peak_memory",
    "evictions",
    "wasted_tokens",
    "runtime_s",
    "ratio_to_best",
    "ratio_to_bound",
]
LINEAR = "linear:base_s=0.02,prefill_token_s=2e-4"


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _mask_wall_time(text: str) -> str:
    return re.sub(r"\d+\.\d{3}$", "T", text, flags=re.M)


def test_run_json_keys_and_values():
    r = invoke("run", MIX10, "--policies", "mcsf,vllm", "--time-model", LINEAR, "--json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    model = time_model("linear", base_s=0.02, prefill_token_s=2e-4)
    assert data["time_model"] == model.to_dict()
    for row in data["results"]:
        assert SECONDS_KEYS <= set(row) and set(RESULT_KEYS) <= set(row)
        expected = to_seconds(run_policy(INST, row["policy"]), model).stats()
        assert {k: row[k] for k in expected} == expected


def test_without_the_option_run_is_as_before():
    r = invoke("run", MIX10, "--policies", "mcsf,vllm", "--json")
    data = json.loads(r.stdout)
    assert list(data) == RUN_KEYS
    assert [list(row) for row in data["results"]] == [RESULT_KEYS, RESULT_KEYS]
    plain = _mask_wall_time(invoke("run", MIX10, "--policies", "mcsf,vllm").stdout)
    timed = invoke("run", MIX10, "--policies", "mcsf,vllm", "--time-model", "linear").stdout
    head, sep, tail = _mask_wall_time(timed).partition("\ntime model linear: base_s = 0.01, ")
    assert sep and head == plain.rstrip("\n") + "\n"  # the rounds table, then the seconds
    lines = tail.splitlines()
    assert lines[1].split() == [
        "policy",
        "TEL",
        "(s)",
        "ratio",
        "to",
        "best",
        "mean",
        "latency",
        "(s)",
        "p99",
        "latency",
        "(s)",
        "mean",
        "TTFT",
        "(s)",
        "mean",
        "TPOT",
        "(s)",
        "tokens/s",
    ]
    stats = to_seconds(run_policy(INST, "vllm"), "linear").stats()
    best = min(stats["tel_s"], to_seconds(run_policy(INST, "mcsf"), "linear").stats()["tel_s"])
    assert lines[4].split() == [
        "vllm",
        f"{stats['tel_s']:.1f}",
        f"{stats['tel_s'] / best:.3f}",
        f"{stats['mean_latency_s']:.3f}",
        f"{stats['p99_latency_s']:.3f}",
        f"{stats['mean_ttft_s']:.3f}",
        f"{stats['mean_tpot_s']:.4f}",
        f"{stats['throughput_tokens_s']:.1f}",
    ]


def test_unit_gives_the_round_figures_on_the_command_line():
    r = invoke("run", "--policies", "fcfs,sorted-f", "--time-model", "unit", "--json")
    data = json.loads(r.stdout)
    for row in data["results"]:
        assert row["tel_s"] == row["tel"] and row["mean_latency_s"] == row["mean_latency"]
    [ratio] = data["paper_ratios"]  # FCFS / Sorted-F, in rounds and read in seconds
    assert ratio["value_s"] == ratio["value"]
    r = invoke("run", "--policies", "fcfs,sorted-f", "--time-model", "linear", "--json")
    tel_s = {row["policy"]: row["tel_s"] for row in json.loads(r.stdout)["results"]}
    [ratio] = json.loads(r.stdout)["paper_ratios"]
    assert ratio["value_s"] == tel_s["fcfs"] / tel_s["sorted-f"] != ratio["value"]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("linar", "unknown time model 'linar'; registered: unit, linear"),
        ("linear:bse=1", "time model 'linear' has no parameter 'bse'"),
        (
            "linear:base_s=fast",
            "time model 'linear': parameter 'base_s' must be a number, got 'fast'",
        ),
        ("linear:base_s=0", "base_s must be > 0 seconds"),
        ("linear:base_s", "expected key=value pairs after ':'"),
    ],
)
@pytest.mark.parametrize("command", ["run", "schedule", "check", "plot"])
def test_bad_time_models_are_usage_errors(tmp_path, command, spec, message):
    args = {
        "run": ["run", MIX10],
        "schedule": ["schedule", MIX10, "--policy", "mcsf"],
        "check": ["check", MIX10, tmp_path / "s.json"],
        "plot": ["plot", MIX10, tmp_path / "s.json", "-o", tmp_path / "f.png"],
    }[command]
    r = invoke(*args, "--time-model", spec)
    assert r.exit_code == 2
    (error,) = [line for line in r.output.splitlines() if line.startswith("Error:")]
    assert error.startswith("Error: Invalid value for '--time-model': ") and message in error
    assert not (tmp_path / "f.png").exists()


def test_schedule_records_the_model_and_check_recomputes_it(tmp_path):
    out = tmp_path / "v.json"
    r = invoke("schedule", MIX10, "--policy", "vllm", "--time-model", LINEAR, "-o", out)
    assert r.exit_code == 0, r.output
    sched = run_policy(INST, "vllm")
    secs = to_seconds(sched, LINEAR)
    doc = json.loads(out.read_text())
    assert doc["version"] == 2 and doc["time_model"] == secs.model.to_dict()
    assert doc == schedule_to_dict(sched, secs)
    for q, lat, ttft, tpot in zip(
        doc["requests"], secs.latency_s, secs.ttft_s, secs.tpot_s, strict=True
    ):
        assert (q["latency_s"], q["ttft_s"]) == (lat, ttft)
        assert q["tpot_s"] == (None if np.isnan(tpot) else tpot)
    back = read_schedule(out, INST)
    assert back.info["time_model"] == secs.model
    np.testing.assert_array_equal(back.info["seconds"].latency_s, secs.latency_s)
    r = invoke("check", MIX10, out, "--json")
    assert r.exit_code == 0, r.output
    got = json.loads(r.stdout)
    assert got["time_model"] == got["recorded_time_model"] == secs.model.to_dict()
    assert {k: got[k] for k in secs.stats()} == secs.stats()
    text = invoke("check", MIX10, out).stdout
    assert "recorded     seconds under time model linear: every request's latency" in text
    assert f"             TEL (s)          {secs.tel_s:.1f}" in text.splitlines()
    # another model on the command line: its figures; the recorded ones are still checked
    r = invoke("check", MIX10, out, "--time-model", "unit", "--json")
    assert json.loads(r.stdout)["tel_s"] == sched.tel
    # a recorded second that the starts do not give is an error naming request and field
    doc["requests"][3]["ttft_s"] += 0.001
    out.write_text(json.dumps(doc))
    r = invoke("check", MIX10, out)
    assert r.exit_code == 1
    rid = INST.ids[3]
    assert f"{out}: request '{rid}': field 'ttft_s' is " in r.stderr
    assert "but time model linear:base_s=0.02,prefill_token_s=0.0002," in r.stderr
    doc["requests"][3]["ttft_s"] -= 0.001
    doc["time_model"]["parameters"]["base_s"] = 0.03
    out.write_text(json.dumps(doc))
    assert "field 'latency_s' is" in invoke("check", MIX10, out).stderr
    doc["time_model"] = {"name": "gpu-x", "parameters": {}}
    out.write_text(json.dumps(doc))
    r = invoke("check", MIX10, out)
    assert r.exit_code == 1 and "field 'time_model': unknown time model 'gpu-x'" in r.stderr
    del doc["time_model"]
    out.write_text(json.dumps(doc))
    r = invoke("check", MIX10, out)
    assert "field 'latency_s' needs the file's 'time_model'" in r.stderr


def test_schedule_json_summary_and_stdout(tmp_path):
    r = invoke("schedule", MIX10, "--policy", "mcsf", "--time-model", "linear", "--json")
    summary = json.loads(r.stdout)
    secs = to_seconds(run_policy(INST, "mcsf"), "linear")
    assert summary["time_model"] == secs.model.to_dict()
    assert SECONDS_KEYS <= set(summary) and summary["tel_s"] == secs.tel_s
    assert summary["schedule"]["time_model"] == secs.model.to_dict()
    r = invoke("schedule", MIX10, "--policy", "mcsf", "--time-model", "linear")
    assert json.loads(r.stdout) == schedule_to_dict(run_policy(INST, "mcsf"), secs)


def test_without_the_option_schedule_and_check_are_as_before(tmp_path):
    out = tmp_path / "s.json"
    r = invoke("schedule", MIX10, "--policy", "vllm", "-o", out)
    assert r.exit_code == 0 and r.stderr.endswith(f"; wrote {out}\n")
    write_schedule(run_policy(INST, "vllm"), tmp_path / "lib.json")
    assert out.read_bytes() == (tmp_path / "lib.json").read_bytes()
    assert "time_model" not in out.read_text() and "_s" not in out.read_text()
    r = invoke("check", MIX10, out, "--json")
    assert list(json.loads(r.stdout)) == [
        "schedule",
        "instance",
        "policy",
        "n",
        "memory",
        "feasible",
        "tel",
        "mean_latency",
        "makespan",
        "peak_memory",
        "peak_round",
        "evictions",
        "wasted_tokens",
        "first_violation",
    ]
    text = invoke("check", MIX10, out).stdout
    assert "seconds" not in text and "time model" not in text
    # check --time-model on a file that records none: the figures, no recorded line
    text = invoke("check", MIX10, out, "--time-model", "unit").stdout
    assert "in seconds   time model unit" in text and "recorded" not in text


def test_plot_against_seconds(tmp_path):
    write_schedule(run_policy(INST, "vllm"), tmp_path / "s.json")
    r = invoke(
        "plot", MIX10, tmp_path / "s.json", "-o", tmp_path / "f.png", "--time-model", "linear"
    )
    assert r.exit_code == 0, r.output
    assert (tmp_path / "f.png").read_bytes().startswith(b"\x89PNG")


def test_time_models_lists_the_registry():
    r = invoke("time-models")
    assert r.exit_code == 0, r.output
    names = [line.split()[0] for line in r.stdout.splitlines() if not line.startswith(" ")]
    assert names[:3] == ["unit", "linear", "llama2-70b-a100x2"]
    assert "  base_s = 0.01  seconds of every round" in r.stdout
    rows = json.loads(invoke("time-models", "--json").stdout)
    lin = next(row for row in rows if row["name"] == "linear")
    assert lin["parameters"] == time_model("linear").values
    assert set(lin) == {"name", "summary", "parameters", "docs", "source"}


PLUGIN = '''
import lpsched

def half_second(prefill_tokens, decoding, kv_tokens, round_s=0.5):
    """Every round round_s seconds."""
    return round_s + 0 * decoding

lpsched.register_time_model("half-second", half_second)
'''


@pytest.fixture
def clean_models(monkeypatch):
    models, loaded = dict(TIME_MODELS), set(_loaded)
    monkeypatch.setenv(PLUGINS_ENV, "")
    yield
    TIME_MODELS.clear()
    TIME_MODELS.update(models)
    _loaded.clear()
    _loaded.update(loaded)


def test_a_plugin_time_model_through_import(clean_models, monkeypatch, tmp_path):
    (tmp_path / "my_clock.py").write_text(PLUGIN)
    monkeypatch.chdir(tmp_path)
    args = ["--policies", "mcsf", "--time-model", "half-second:round_s=0.25", "--json"]
    r = invoke("run", MIX10, *args, "--import", "my_clock")
    assert r.exit_code == 0, r.output
    (row,) = json.loads(r.stdout)["results"]
    assert row["tel_s"] == 0.25 * row["tel"]
    r = invoke("time-models", "--import", "my_clock")
    assert "half-second" in r.stdout and "round_s = 0.5" in r.stdout
    r = invoke("schedule", MIX10, "--policy", "mcsf", "--time-model", "half-second", "-o", "s.json")
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "s.json").read_text())["time_model"] == {
        "name": "half-second",
        "parameters": {"round_s": 0.5},
    }
    assert invoke("check", MIX10, "s.json").exit_code == 0
    del TIME_MODELS["half-second"]  # a process that has not imported the plug-in
    r = invoke("check", MIX10, "s.json")
    assert r.exit_code == 1 and "unknown time model 'half-second'" in r.stderr
    assert "--import MODULE" in r.stderr
