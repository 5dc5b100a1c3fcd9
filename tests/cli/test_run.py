"""``lpsched run``, ``schedule`` and ``policies``: the default instance, tables, JSON keys,
schedule files, bad input and its exit codes."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from reference.shipped import DEFAULT_FILE, MIX10

from lpsched.cli import main
from lpsched.generators.workloads import generate
from lpsched.io import DEFAULT_INSTANCE_SPEC as DEFAULT_SPEC
from lpsched.io import default_instance, read_instance, read_schedule, write_instance
from lpsched.policies.registry import run_policy


def invoke(*args):
    return CliRunner().invoke(main, list(args))


def test_run_and_run_policy_give_sorted_f_the_same_tel_on_the_default():
    """One Phase-1 rule (policies/sorted_f.py): the command line and the library agree."""
    r = invoke("run", "--policies", "sorted-f", "--json")
    assert r.exit_code == 0, r.output
    (row,) = json.loads(r.stdout)["results"]
    assert row["tel"] == run_policy(default_instance(), "sorted-f").tel


def test_default_is_the_papers_setting_and_run_prints_the_papers_ratios(tmp_path):
    assert DEFAULT_SPEC == {"workload": "paper-mix", "n": 2000, "memory": 16492, "seed": 0}
    r = invoke("run", "--json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    tel = {x["policy"]: x["tel"] for x in data["results"]}
    assert [(p["ratio"], p["paper"]) for p in data["paper_ratios"]] == [
        ("FCFS / Sorted-F", 4.87),
        ("MC-SF / Sorted-F", 2.09),
    ]
    assert data["paper_ratios"][0]["value"] == tel["fcfs"] / tel["sorted-f"]
    assert data["paper_ratios"][1]["value"] == tel["mcsf"] / tel["sorted-f"]
    r = invoke("run")
    assert r.exit_code == 0
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("FCFS / Sorted-F"))
    assert line.split() == ["FCFS", "/", "Sorted-F", f"{tel['fcfs'] / tel['sorted-f']:.2f}", "4.87"]
    assert "arXiv 2508.06133" in r.stdout
    # the default comparison has SVF's order, the best of the algorithms that followed
    assert tel["volume"] == run_policy(default_instance(), "volume").tel < tel["sorted-f"]
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("volume (SVF's order)"))
    assert line.split()[-2:] == [f"{tel['volume'] / tel['sorted-f']:.2f}", "-"]
    # without FCFS, MC-SF and Sorted-F side by side there is nothing to compare
    r = invoke("run", "--policies", "fcfs,size", "--json")
    assert json.loads(r.stdout)["paper_ratios"] == []
    # another setting: the JSON still has the ratios, the table does not compare with the paper
    r = invoke("run", "instances/exact/mix12-s1.json")
    assert r.exit_code == 0 and "paper" not in r.stdout
    r = invoke("run", "instances/exact/mix12-s1.json", "--json")
    assert len(json.loads(r.stdout)["paper_ratios"]) == 2
    # the paper's n and M on another workload: not the paper's setting either
    code = generate("code", 2000, 16492, seed=0)
    path = tmp_path / "code.json"
    write_instance(code, path)
    r = invoke("run", str(path), "--policies", "fcfs,mcsf,sorted-f")
    assert r.exit_code == 0 and "FCFS / Sorted-F" not in r.stdout and "paper" not in r.stdout


def test_run_json_keys_and_consistency(tmp_path):
    path = tmp_path / "i.json"
    r = invoke(
        "generate", "--workload", "conversation", "-n", "60", "--memory", "16492", "-o", str(path)
    )
    assert r.exit_code == 0, r.output
    r = invoke("run", str(path), "--policies", "fcfs,mcsf,sorted-f,mcsf+backfill", "--json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert {"instance", "n", "memory", "results"} <= set(data)
    assert data["n"] == 60 and data["memory"] == 16492
    assert [x["policy"] for x in data["results"]] == ["fcfs", "mcsf", "sorted-f", "mcsf+backfill"]
    for x in data["results"]:
        assert {"policy", "tel", "mean_latency", "runtime_s"} <= set(x)
        assert abs(x["mean_latency"] - x["tel"] / 60) < 1e-9
    assert min(x["ratio_to_best"] for x in data["results"]) == 1.0


def test_run_table_and_schedule_file(tmp_path):
    path = tmp_path / "i.json"
    invoke("generate", "--workload", "code", "-n", "30", "--memory", "16492", "-o", str(path))
    r = invoke("run", str(path))
    assert r.exit_code == 0
    assert "TEL (rounds)" in r.stdout and "sorted-f" in r.stdout
    out = tmp_path / "s.json"
    r = invoke("schedule", str(path), "--policy", "mcsf", "-o", str(out))
    assert r.exit_code == 0, r.output
    sched = read_schedule(out, read_instance(path))
    assert sched.feasible
    doc = json.loads(out.read_text())
    assert doc["format"] == "lpsched/schedule" and doc["policy"] == "mcsf"
    assert doc["tel"] == sched.tel


def test_bad_input_exits_1_with_a_named_message(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps({"memory": 10, "requests": [{"id": "q7", "prefill": 8, "decode": 5}]})
    )
    r = invoke("run", str(bad))
    assert r.exit_code == 1
    assert "bad.json" in r.stderr and "q7" in r.stderr and "decode" in r.stderr
    assert "Traceback" not in r.output
    r = invoke("run", str(tmp_path / "missing.json"))
    assert r.exit_code == 1 and "no such file" in r.stderr
    r = invoke("run", "--policies", "nosuch")  # a usage error: exit 2
    assert r.exit_code == 2 and "unknown policy" in r.stderr


def test_usage_errors_exit_2():
    assert invoke("run", "--bogus").exit_code == 2
    assert invoke("generate", "-n", "0", "--memory", "5", "-o", "x.json").exit_code == 2


def test_policies_lists_the_registry():
    r = invoke("policies")
    assert r.exit_code == 0
    for name in ("fcfs", "mcsf", "size", "sorted-f"):
        assert name in r.stdout


def test_more_bad_input_paths(tmp_path):
    r = invoke("run", str(tmp_path))  # a directory
    assert r.exit_code == 1 and "is a directory" in r.stderr
    good = tmp_path / "g.json"
    assert invoke("generate", "-n", "5", "--memory", "16492", "-o", str(good)).exit_code == 0
    r = invoke("schedule", str(good), "--policy", "mcsf", "-o", str(tmp_path / "no" / "x.json"))
    assert r.exit_code == 1 and "x.json" in r.stderr and "Traceback" not in r.output
    assert invoke("run", str(good), "--policies", ",").exit_code == 2
    assert invoke("run", str(good), "--policies", "mcsf+").exit_code == 2
    assert (
        invoke(
            "generate", "-n", "5", "--memory", "16492", "--arrival-rate", "inf", "-o", str(good)
        ).exit_code
        == 2
    )
    huge = tmp_path / "huge.json"
    huge.write_text(
        json.dumps(
            {
                "memory": 2**39,
                "requests": [{"id": f"q{i}", "prefill": 0, "decode": 2**38} for i in range(8)],
            }
        )
    )
    r = invoke("run", str(huge))
    assert r.exit_code == 1 and "too large" in r.stderr


def test_run_skips_what_cannot_run_and_reports_evictions(tmp_path):
    path = tmp_path / "iv.json"
    r = invoke(
        "generate",
        "--workload",
        "conversation",
        "-n",
        "150",
        "--memory",
        "16492",
        "--intervals",
        "multiplicative:0.5",
        "-o",
        str(path),
    )
    assert r.exit_code == 0, r.output
    # the full LP is too large here (lp="auto", the default, would take the aggregated LP)
    r = invoke(
        "run", str(path), "--policies", "mcsf,amin,sorted-lp", "--option", "lp=full", "--json"
    )
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert [x["policy"] for x in data["results"]] == ["mcsf", "amin"]
    skipped = data["skipped"][0]
    assert skipped["policy"] == "sorted-lp" and "non-zeros" in skipped["error"]
    # nothing ran: reported, and exit 1 (text and JSON)
    for extra in ([], ["--json"]):
        r = invoke("run", str(path), "--policies", "sorted-lp", "--option", "lp=full", *extra)
        assert r.exit_code == 1 and "none of the selected policies could run" in r.stderr
        assert "non-zeros" in r.stdout
    amin = data["results"][1]
    assert amin["evictions"] > 0 and amin["wasted_tokens"] > 0
    r = invoke(
        "generate",
        "--workload",
        "code",
        "-n",
        "5",
        "--memory",
        "16492",
        "--intervals",
        "wide",
        "-o",
        str(path),
    )
    assert r.exit_code == 2


def test_instances_with_arrivals_default_to_online_policies(tmp_path):
    path = tmp_path / "a.json"
    invoke(
        "generate",
        "--workload",
        "code",
        "-n",
        "40",
        "--memory",
        "16492",
        "--arrival-rate",
        "0.05",
        "-o",
        str(path),
    )
    data = json.loads(invoke("run", str(path), "--json").stdout)
    assert [x["policy"] for x in data["results"]] == [
        "online-fcfs",
        "online-mcsf",
        "online-sorted-f",
    ]
    r = invoke("run", str(path), "--policies", "mcsf")
    assert "has arrivals" in r.stdout


def test_schedule_file_keeps_eviction_runs_and_refuses_infeasible(tmp_path):
    path = tmp_path / "iv.json"
    invoke(
        "generate",
        "--workload",
        "conversation",
        "-n",
        "150",
        "--memory",
        "16492",
        "--intervals",
        "multiplicative:0.5",
        "-o",
        str(path),
    )
    out = tmp_path / "s.json"
    assert invoke("schedule", str(path), "--policy", "amin", "-o", str(out)).exit_code == 0
    inst = read_instance(path)
    sched = read_schedule(out, inst)
    doc = json.loads(out.read_text())
    cut = [r["runs"] for r in doc["requests"] if "runs" in r]  # version 2: runs per request
    assert sched.evictions == doc["evictions"] == sum(len(r) - 1 for r in cut) > 0
    bad = dict(doc, requests=[{"id": r["id"], "start": 0} for r in doc["requests"]])
    for key in ("evictions", "wasted_tokens", "tel", "makespan", "peak_memory"):
        bad.pop(key)  # the record of the runs goes with them, and the derived values
    (tmp_path / "bad.json").write_text(json.dumps(bad))

    from lpsched.instance import InstanceError

    with pytest.raises(InstanceError, match="infeasible schedule: round"):
        read_schedule(tmp_path / "bad.json", inst)
    assert read_schedule(tmp_path / "bad.json", inst, check=False).tel == inst.decode.sum()


def test_error_lines_escape_control_characters(tmp_path):
    path = tmp_path / "e.json"
    rid = "x\x1b[2J\x1b]0;pwned\x07\nsecond line"
    path.write_text(json.dumps({"memory": 5, "requests": [{"id": rid, "prefill": 1, "decode": 9}]}))
    r = invoke("run", str(path))
    assert r.exit_code == 1 and "\x1b" not in r.stderr and "\x07" not in r.stderr
    assert r.stderr.count("\n") == 1 and repr(rid) in r.stderr


def test_unknown_key_exits_1(tmp_path):
    path = tmp_path / "u.json"
    path.write_text(json.dumps({"memroy": 5, "requests": [{"prefill": 1, "decode": 1}]}))
    r = invoke("run", str(path))
    assert r.exit_code == 1 and "unknown field 'memroy' (did you mean 'memory'?)" in r.stderr


def test_full_disk_exits_1_and_keeps_the_old_file(tmp_path, monkeypatch):
    import errno
    import os

    out = tmp_path / "g.json"
    out.write_text("previous")
    real = os.write

    def full(fd, data):
        if fd <= 2:
            return real(fd, data)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr("lpsched.io.os.write", full)
    for args in (
        ("gadget", "three-partition", "--m", "2", "--B", "20", "--yes", "-o", str(out)),
        ("generate", "-n", "5", "--memory", "20000", "-o", str(out)),
        ("schedule", str(DEFAULT_FILE), "--policy", "fcfs", "-o", str(out)),
    ):
        r = invoke(*args)
        assert r.exit_code == 1, r.output
        assert f"{out}: cannot write: No space left on device" in r.stderr
        assert out.read_text() == "previous" and len(list(tmp_path.iterdir())) == 1
    r = invoke("generate", "-n", "5", "--memory", "20000", "-o", str(tmp_path / "no" / "g.json"))
    assert r.exit_code == 1 and "does not exist" in r.stderr


@pytest.mark.parametrize("command", ["schedule", "priorities", "certify", "exact"])
def test_an_output_that_is_the_input_is_refused_before_the_run(tmp_path, command):
    """Issue 22, item 1: -o equal to INSTANCE (directly or through a link) overwrote it."""
    import os

    inst = tmp_path / "inst.json"
    inst.write_bytes(MIX10.read_bytes())
    link = tmp_path / "link.json"
    os.symlink(inst, link)
    extra = {"schedule": ["--policy", "fcfs"], "priorities": ["--policy", "fcfs"]}.get(command, [])
    for target in (inst, link):
        r = invoke(command, str(inst), *extra, "-o", str(target))
        assert r.exit_code == 2, r.output
        assert "the run would overwrite it" in r.output
    assert inst.read_bytes() == MIX10.read_bytes()


@pytest.mark.parametrize("command", ["schedule", "priorities", "certify", "exact", "export"])
def test_an_output_with_a_trailing_slash_or_the_default_instance_is_refused(tmp_path, command):
    """Issue 22, item 1 (an attacker's pass): ``-o inst.json/`` passed the input check (the
    path does not exist with the slash) and the write went to ``inst.json``; ``-o`` naming the
    shipped default instance, with no INSTANCE given, overwrote the package's data."""
    from lpsched.io.instances import DEFAULT_INSTANCE_FILE

    inst = tmp_path / "inst.json"
    inst.write_bytes(MIX10.read_bytes())
    extra = {
        "schedule": ["--policy", "fcfs"],
        "priorities": ["--policy", "fcfs"],
        "export": ["--format", "lp"],
    }.get(command, [])
    for target in (f"{inst}/", f"{tmp_path}/"):
        r = invoke(command, str(inst), *extra, "-o", target)
        assert r.exit_code == 2, r.output
        assert "names a folder" in r.output or "is a directory" in r.output
    assert inst.read_bytes() == MIX10.read_bytes()
    if command == "certify":  # the one of these whose INSTANCE is optional
        before = DEFAULT_INSTANCE_FILE.read_bytes()
        r = invoke(command, "-o", str(DEFAULT_INSTANCE_FILE))
        assert r.exit_code == 2, r.output
        assert "is the shipped default instance" in r.output
        assert DEFAULT_INSTANCE_FILE.read_bytes() == before


def test_export_writes_into_a_fifo_and_follows_a_link(tmp_path):
    """Issue 22, item 1 (an attacker's pass): ``export`` renamed its temporary file over any
    target: a FIFO (or ``/dev/null`` as root) became a regular file, a link was replaced."""
    import os
    import stat
    import threading

    fifo = tmp_path / "pipe.lp"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    r = invoke("export", str(MIX10), "--format", "lp", "-o", str(fifo))
    reader.join(30)
    assert r.exit_code == 0, r.output
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and got and got[0].startswith(b"\\")
    target, link = tmp_path / "model.mps", tmp_path / "link.mps"
    target.write_text("old")
    os.symlink(target, link)
    r = invoke("export", str(MIX10), "--format", "mps", "-o", str(link))
    assert r.exit_code == 0, r.output
    assert link.is_symlink() and "ROWS" in target.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.mps", "model.mps", "pipe.lp"]


# ------------------------------------------------------------------ --option KEY=VALUE (issue 22)


def test_option_reaches_the_policies_that_declare_it(own_policy):
    """``--option alpha=5.0`` reaches the plug-in (it logs the value and type it got) on
    ``run``, ``schedule`` and ``priorities``; the policies without the option run as before."""
    inst = read_instance(MIX10)
    common = ["--import", own_policy.module, "--option", "alpha=5.0"]
    r = invoke("run", str(MIX10), "--policies", f"fcfs,{own_policy.name}", *common, "--json")
    assert r.exit_code == 0, r.output
    tel = {row["policy"]: row["tel"] for row in json.loads(r.stdout)["results"]}
    assert tel == {"fcfs": run_policy(inst, "fcfs").tel, own_policy.name: own_policy.tel(inst, 5.0)}
    assert own_policy.tel(inst, 5.0) != own_policy.tel(inst)  # 76 against 93: it matters
    r = invoke("schedule", str(MIX10), "--policy", f"{own_policy.name}+backfill", *common, "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["tel"] == own_policy.tel(inst, 5.0, backfill=True)
    r = invoke("priorities", str(MIX10), "--policy", own_policy.name, *common, "-o", "p.jsonl")
    assert r.exit_code == 0, r.output
    assert [c[1:] for c in own_policy.calls()] == [("float", "5.0")] * 3


@pytest.mark.parametrize(
    "text, value",
    [
        ("3", "int 3"),
        ("-2", "int -2"),
        ("0.25", "float 0.25"),
        ("1e-3", "float 0.001"),
        ("TRUE", "bool True"),
        ("false", "bool False"),
        ("swap", "str 'swap'"),
        ("", "str ''"),
    ],
)
def test_option_values_are_bool_int_float_or_string(own_policy, text, value):
    r = invoke(
        "schedule",
        str(MIX10),
        "--policy",
        own_policy.name,
        "--import",
        own_policy.module,
        "--option",
        f"alpha={text}",
        "--json",
    )
    kind = value.split()[0]
    if kind in ("str", "bool") and text not in ("TRUE", "false"):
        # the plug-in computes s + alpha * o: a string fails there, named as the plug-in's error
        assert r.exit_code == 1 and "policy 'alpha-sort'" in r.stderr
    else:
        assert r.exit_code == 0, r.output
    assert [" ".join(c[1:]) for c in own_policy.calls()] == [value]


def test_plus_names_add_to_the_default_list(own_policy):
    r = invoke(
        "run",
        str(MIX10),
        "--import",
        own_policy.module,
        "--policies",
        f"+{own_policy.name}",
        "--json",
    )
    assert r.exit_code == 0, r.output
    names = [row["policy"] for row in json.loads(r.stdout)["results"]]
    assert names == ["fcfs", "mcsf", "size", "sorted-f", "volume", own_policy.name]


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["run", "--policies", "fcfs,mcsf", "--option", "alpha=1"],
            "option 'alpha' is declared by none of the selected policies (fcfs, mcsf); none of "
            "them takes options",
        ),
        (
            ["run", "--policies", "fcfs,sorted-lp", "--option", "quantile=0.5"],
            "the options they declare: sorted-lp: horizon, max_nonzeros, lp, max_iterations",
        ),
        (["run", "--option", "solver=dp"], "option 'solver': set it with --phase1"),
        (["run", "--option", "max_nonzeros=5"], "set it with --max-nonzeros"),
        (["run", "--option", "backfill=true"], "(backfill: write NAME+backfill)"),
        (["run", "--option", "=1"], "expected KEY=VALUE"),
        (["run", "--option", "a-b=1"], "expected KEY=VALUE"),
        (["run", "--option", "seed=inf"], "'inf' is not a finite number"),
        (["schedule", str(MIX10), "--policy", "+fcfs"], "'+NAME' adds to a default list"),
        (
            ["schedule", str(MIX10), "--policy", "fcfs", "--option", "seed=1"],
            "option 'seed' is declared by none of the selected policies (fcfs)",
        ),
        (
            ["run", "--policies", "gba,gba-d", "--option", "alpha=1"],
            "policy 'gba' with alpha=1: alpha must be a number > 1, got 1",
        ),
        (
            ["run", "--policies", "lp-swap", "--option", "max_passes=0"],
            "policy 'lp-swap' with max_passes=0: max_passes must be a positive integer, got 0",
        ),
        (
            ["run", "--policies", "sorted-lp", "--option", "lp=bogus"],
            "policy 'sorted-lp' with lp='bogus': lp must be one of auto, full, aggregated",
        ),
        (
            ["run", "--policies", "sorted-f", "--option", "fit=bogus"],
            "policy 'sorted-f' with fit='bogus': unknown Phase-1 fit 'bogus'",
        ),
        (["run", "--policies", "lp-swap+backfill"], "runs in strict order only"),
    ],
)
def test_option_usage_errors_exit_2(args, message):
    r = invoke(*args)
    assert r.exit_code == 2, r.output
    assert message in r.stderr


def test_a_closed_standard_output_exits_quietly(monkeypatch, tmp_path):
    """``lpsched run | head -1``: the reader closes the pipe; the write fails with
    BrokenPipeError, which is not an error of the input (exit 1, nothing on standard error)."""
    import os
    import sys

    import click

    echo = click.echo

    def closed(*args, **kwargs):
        if not kwargs.get("err"):
            raise BrokenPipeError(32, "Broken pipe")
        echo(*args, **kwargs)  # errors still reach standard error

    monkeypatch.setattr(click, "echo", closed)
    monkeypatch.setattr(os, "dup2", lambda *a: None)  # the test runner's stdout is not a file
    monkeypatch.setattr(os, "open", lambda *a: -1)
    monkeypatch.setattr(sys.stdout, "fileno", lambda: 1, raising=False)
    r = invoke("run", "instances/exact/mix12-s1.json", "--policies", "fcfs")
    assert r.exit_code == 1 and r.stderr == ""
