"""The command line: tables, JSON keys, exit codes, files."""

from __future__ import annotations

import json
import signal

import numpy as np
import pytest
from click.testing import CliRunner

from lpsched.cli import DEFAULT_INSTANCE, DEFAULT_SPEC, default_instance, main
from lpsched.generators.workloads import generate
from lpsched.io import read_instance, read_schedule


def invoke(*args):
    return CliRunner().invoke(main, list(args))


def test_shipped_default_is_the_generator_output():
    shipped = read_instance(DEFAULT_INSTANCE)
    spec = DEFAULT_SPEC
    fresh = generate(spec["workload"], spec["n"], spec["memory"], seed=spec["seed"])
    assert shipped.n == 2000 and shipped.memory == 16492 and shipped.offline
    assert np.array_equal(shipped.prefill, fresh.prefill)
    assert np.array_equal(shipped.decode, fresh.decode)
    assert default_instance().name == "default"


def test_default_is_the_papers_setting_and_run_prints_the_papers_ratios():
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
    # without FCFS, MC-SF and Sorted-F side by side there is nothing to compare
    r = invoke("run", "--policies", "fcfs,size", "--json")
    assert json.loads(r.stdout)["paper_ratios"] == []
    # another setting: the JSON still has the ratios, the table does not compare with the paper
    r = invoke("run", "instances/exact/mix12-s1.json")
    assert r.exit_code == 0 and "paper" not in r.stdout
    r = invoke("run", "instances/exact/mix12-s1.json", "--json")
    assert len(json.loads(r.stdout)["paper_ratios"]) == 2


def test_generate_lists_the_workloads_and_takes_lmsys_parameters(tmp_path):
    r = invoke("generate", "--list")
    assert r.exit_code == 0, r.output
    for name in ("lmsys-turn", "lmsys-subset", "lmsys-conversation", "paper-mix", "paper-scaled"):
        assert f"\n{name} " in r.stdout
    assert "arXiv 2309.11998" in r.stdout and "prefill_sigma" in r.stdout
    out = tmp_path / "a.json"
    spec = "lmsys-turn[decode_sigma=0.8]:0.8,summarization:0.2"
    r = invoke("generate", "--workload", spec, "-n", "50", "--memory", "16492", "-o", str(out))
    assert r.exit_code == 0, r.output
    inst = read_instance(out)
    again = generate(spec, 50, 16492)
    assert np.array_equal(inst.decode, again.decode) and inst.metadata["workload"] == spec
    r = invoke(
        "generate", "--workload", "lmsys-turn[decode_sigma=-1]", "-n", "5", "--memory", "99",
        "-o", str(out),
    )  # fmt: skip
    assert r.exit_code == 2 and "decode_sigma" in r.stderr and "Traceback" not in r.output


def test_reproduce_takes_the_studys_workloads(tmp_path):
    import csv

    out = tmp_path / "gaps"
    r = invoke(
        "reproduce", "optimality-gaps", "--workload", "paper-scaled", "--sizes", "5",
        "--seeds", "0", "--workers", "1", "--out", str(out),
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    with (out / "optimality-gaps.csv").open() as fh:
        assert {row["workload"] for row in csv.DictReader(fh)} == {"paper-scaled"}
    r = invoke("reproduce", "optimality-gaps", "--workload", "nosuch", "--out", str(out))
    assert r.exit_code == 1 and "unknown small workload 'nosuch'" in r.stderr
    r = invoke("reproduce", "families", "--workload", "paper-mix", "--out", str(out))
    assert r.exit_code == 2 and "has no workload option" in r.stderr
    r = invoke("reproduce", "intervals", "--workload", "a", "--workload", "b", "--out", str(out))
    assert r.exit_code == 2 and "takes one --workload, got 2" in r.stderr


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


EXACT = DEFAULT_INSTANCE.parent / "exact" / "mix10-s1.json"


def test_exact_bound_export(tmp_path):
    r = invoke("exact", str(EXACT), "--json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert {"status", "objective", "bound", "gap", "runtime_s", "horizon", "solver"} <= set(data)
    assert data["status"] == "optimal" and data["objective"] == 74 and data["gap"] == 0.0
    r = invoke("bound", str(EXACT), "--json")
    data = json.loads(r.stdout)
    assert data["method"] == "lp" and abs(data["bound"] - 69.541863) < 1e-5
    r = invoke("bound", "--method", "combinatorial", str(EXACT), "--json")
    assert json.loads(r.stdout)["bound"] == 66
    out = tmp_path / "m.lp"
    r = invoke("export", str(EXACT), "--format", "lp", "-o", str(out))
    assert r.exit_code == 0
    text = out.read_text()
    assert "x(0_0)" in text and "memory(" in text  # Pyomo's symbolic labels for x[0,0]


def test_bound_on_the_default_says_which_bound():
    r = invoke("bound")
    assert r.exit_code == 0
    assert "combinatorial" in r.stdout and "LP too large" in r.stdout


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
    r = invoke("run", str(path), "--policies", "mcsf,amin,sorted-lp", "--json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert [x["policy"] for x in data["results"]] == ["mcsf", "amin"]
    skipped = data["skipped"][0]
    assert skipped["policy"] == "sorted-lp" and "non-zeros" in skipped["error"]
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


def test_trace_arrivals_in_rounds(tmp_path):
    trace = tmp_path / "t.csv"
    trace.write_text(
        "arrived_at,num_prefill_tokens,num_decode_tokens\n0.0,10,5\n0.05,20,6\n0.25,30,7\n"
    )
    out = tmp_path / "i.json"
    r = invoke(
        "generate",
        "--trace",
        str(trace),
        "-n",
        "3",
        "--memory",
        "100",
        "--round-ms",
        "50",
        "-o",
        str(out),
    )
    assert r.exit_code == 0, r.output
    inst = read_instance(out)
    by_prefill = dict(zip(inst.prefill.tolist(), inst.arrival.tolist(), strict=True))
    assert by_prefill == {10: 0, 20: 1, 30: 5}  # floor(t / 0.05 s)


def test_exact_and_export_refuse_models_too_large_to_build(tmp_path):
    for args in (
        ["exact", str(DEFAULT_INSTANCE)],
        ["export", str(DEFAULT_INSTANCE), "-o", str(tmp_path / "m.lp")],
    ):
        r = invoke(*args)
        assert r.exit_code == 1 and "non-zeros" in r.stderr, args
    assert not (tmp_path / "m.lp").exists()


def test_exact_with_another_thread_count_in_the_same_process():
    # HiGHS sizes its thread pool at the first solve; a later solve with another size must
    # still be proven optimal, not silently fall back to the heuristic
    for threads in (None, 1, 2):
        from lpsched.solvers.result import SolveStatus
        from lpsched.solvers.solve import solve_exact

        res = solve_exact(read_instance(EXACT), threads=threads)
        assert (res.status, res.objective) == (SolveStatus.OPTIMAL, 74)


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
    import pytest

    from lpsched.instance import InstanceError

    with pytest.raises(InstanceError, match="infeasible schedule: round"):
        read_schedule(tmp_path / "bad.json", inst)
    assert read_schedule(tmp_path / "bad.json", inst, check=False).tel == inst.decode.sum()


def test_exact_guards_and_bounds(tmp_path):
    far = tmp_path / "far.json"
    far.write_text(
        json.dumps(
            {
                "memory": 20,
                "requests": [
                    {"id": "a", "prefill": 3, "decode": 4},
                    {"id": "b", "prefill": 3, "decode": 4, "arrival": 10**9},
                ],
            }
        )
    )
    for args in (["exact", str(far)], ["bound", str(far), "--method", "lp"]):
        r = invoke(*args)
        assert r.exit_code == 1 and "horizon" in r.stderr, args
    big_m = tmp_path / "bigm.json"  # dp's tables would need n * M cells: the heuristic uses swap
    big_m.write_text(
        json.dumps(
            {
                "memory": 10**7,
                "requests": [{"id": f"q{i}", "prefill": 1, "decode": 1 + i % 3} for i in range(6)],
            }
        )
    )
    data = json.loads(invoke("exact", str(big_m), "--json").stdout)
    assert data["status"] == "optimal" and data["objective"] == 12
    assert invoke("exact", str(EXACT), "--time-limit", "nan").exit_code == 2
    assert invoke("exact", str(EXACT), "--mip-gap", "5").exit_code == 2


# --------------------------------------------------------------------------- hardening


def test_gadget_bad_B_is_one_clear_error_with_advice_that_works(tmp_path):
    out = str(tmp_path / "g.json")
    r = invoke("gadget", "three-partition", "--m", "20", "--B", "10", "--distinct", "-o", out)
    assert r.exit_code == 1 and "Traceback" not in r.output and r.exception is not None
    assert r.stderr.count("\n") == 1 and "use B = 359 (or any B >= 365)" in r.stderr
    r = invoke(
        "gadget", "three-partition", "--m", "3", "--B", "10", "--no", "--distinct", "-o", out
    )
    assert r.exit_code == 1 and "B >= 51" not in r.stderr and "B = 151 works" in r.stderr
    r = invoke(
        "gadget", "three-partition", "--m", "3", "--B", "151", "--no", "--distinct", "-o", out
    )
    assert r.exit_code == 0, r.output
    assert read_instance(out).metadata["yes"] is False


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


def test_duplicate_workload_component_is_a_usage_error(tmp_path):
    r = invoke(
        "generate",
        "--workload",
        "code:1,code:1",
        "-n",
        "3",
        "--memory",
        "20000",
        "-o",
        str(tmp_path / "x.json"),
    )
    assert r.exit_code == 2 and "appears twice" in r.stderr


def test_trace_arrival_error_names_file_and_line(tmp_path):
    trace = tmp_path / "t.csv"
    trace.write_text("num_prefill_tokens,num_decode_tokens,arrived_at\n1,2,0\n3,4,1e300\n")
    r = invoke(
        "generate",
        "--trace",
        str(trace),
        "-n",
        "2",
        "--memory",
        "100",
        "--round-ms",
        "1",
        "-o",
        str(tmp_path / "x.json"),
    )
    assert r.exit_code == 1 and f"{trace}: line 3: field 'arrived_at'" in r.stderr
    assert "-9223372036854775808" not in r.stderr and not (tmp_path / "x.json").exists()


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
        ("gadget", "three-partition", "--m", "2", "--B", "20", "-o", str(out)),
        ("generate", "-n", "5", "--memory", "20000", "-o", str(out)),
        ("schedule", str(DEFAULT_INSTANCE), "--policy", "fcfs", "-o", str(out)),
    ):
        r = invoke(*args)
        assert r.exit_code == 1, r.output
        assert f"{out}: cannot write: No space left on device" in r.stderr
        assert out.read_text() == "previous" and len(list(tmp_path.iterdir())) == 1
    r = invoke("generate", "-n", "5", "--memory", "20000", "-o", str(tmp_path / "no" / "g.json"))
    assert r.exit_code == 1 and "does not exist" in r.stderr


# --------------------------------------------------------------------------- solver hardening
# (failed writes, status error, epoch arrivals, SIGINT / SIGTERM, a killed sweep worker)


def test_export_reports_a_write_that_did_not_happen(tmp_path):
    for backend in ("highs", "pyomo"):
        for target in (tmp_path / "no" / "dir" / "m.lp", tmp_path / "no" / "m.mps"):
            r = invoke("export", str(EXACT), "--backend", backend, "-o", str(target))
            assert r.exit_code == 1, (backend, target, r.output)
            assert str(target) in r.stderr and "wrote" not in r.stderr
            assert not target.exists()
    ok = tmp_path / "m.mps"
    r = invoke("export", str(EXACT), "--format", "mps", "--backend", "highs", "-o", str(ok))
    assert r.exit_code == 0 and ok.read_text().startswith("NAME")
    assert [p.name for p in tmp_path.iterdir() if p.is_file()] == ["m.mps"]


def test_exact_with_status_error_exits_1(tmp_path, monkeypatch):
    """A solver answer that fails the schedule check is status error: exit code 1, the JSON
    still printed (HiGHS' overflow repair switched off to provoke it)."""
    from functools import partial

    from lpsched.solvers.backends import highs
    from lpsched.solvers.solve import SOLVERS

    path = tmp_path / "huge.json"
    reqs = zip([10**10, 10**10 - 5, 10**10 - 5, 10**10 - 7], [7, 2, 2, 4], strict=True)
    path.write_text(
        json.dumps(
            {
                "memory": 2 * 10**10,
                "requests": [
                    {"id": f"r{i}", "prefill": s, "decode": o} for i, (s, o) in enumerate(reqs)
                ],
            }
        )
    )
    r = invoke("exact", str(path), "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["objective"] == 20  # repaired
    monkeypatch.setitem(SOLVERS, "highs", partial(highs.solve_mip, repair_rounds=0))
    r = invoke("exact", str(path), "--json")
    assert r.exit_code == 1, r.output
    assert json.loads(r.stdout)["status"] == "error"
    assert "status error" in r.stderr and "more than M" in r.stderr


def test_epoch_second_arrivals_exact_export_bound(tmp_path):
    path = tmp_path / "epoch.json"
    arrive = [1_700_000_000, 1_700_000_001, 1_700_000_005]
    path.write_text(
        json.dumps(
            {
                "memory": 20,
                "requests": [
                    {"id": "a", "prefill": 3, "decode": 4, "arrival": arrive[0]},
                    {"id": "b", "prefill": 5, "decode": 2, "arrival": arrive[1]},
                    {"id": "c", "prefill": 12, "decode": 3, "arrival": arrive[2]},
                ],
            }
        )
    )
    out = tmp_path / "s.json"
    r = invoke("exact", str(path), "--json", "-o", str(out))
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["status"] == "optimal" and data["objective"] == 9 and data["horizon"] < 100
    sched = read_schedule(out, read_instance(path))
    assert (sched.start >= np.array(arrive)).all() and sched.tel == 9
    assert invoke("export", str(path), "-o", str(tmp_path / "m.lp")).exit_code == 0
    for method in ("auto", "lp"):
        b = json.loads(invoke("bound", str(path), "--method", method, "--json").stdout)
        assert b["method"] == "lp" and 0 < b["bound"] <= 9


def _python_lpsched(*args: str) -> list[str]:
    """The command line as a separate process (signals go to it alone)."""
    import sys

    return [sys.executable, "-m", "lpsched.cli", *args]


def _slow_instance(tmp_path, n: int = 30):
    """The instance of the issue: the scaled 80/20 mix, n = 30, M = 50, seed 0 (HiGHS does not
    prove it within a minute)."""
    path = tmp_path / f"slow{n}.json"
    r = invoke(
        "generate", "--workload", "scaled-mix", "-n", str(n), "--memory", "50", "--seed", "0",
        "-o", str(path),
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    return path


def _signal_after(cmd, sig, delay: float, cwd, until=None, timeout: float = 120.0):
    """Run ``cmd``, send ``sig`` ``delay`` seconds after ``until()`` holds (default: at once),
    wait; return (exit code, stdout, stderr, seconds from the signal to the exit)."""
    import subprocess
    import time

    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    t0 = time.monotonic()
    try:
        while until is not None and not until():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() - t0 < timeout
            time.sleep(0.05)
        time.sleep(delay)
        sent = time.monotonic()
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return proc.returncode, out, err, time.monotonic() - sent


def _assert_interrupted_exact(rc, out, err, waited, tmp_path, schedule):
    assert rc == 130, (rc, out, err[-2000:])
    data = json.loads(out)
    assert data["status"] == "interrupted"
    assert waited < 10, waited  # far below the 60 s limit
    assert "interrupted" in err
    if schedule.exists():
        sched = read_schedule(schedule, read_instance(tmp_path / "slow30.json"))
        assert sched.tel == data["objective"]
        assert data["bound"] <= data["objective"]
    return data


@pytest.mark.parametrize(
    "solver,sig",
    [
        ("highs", signal.SIGINT),
        ("highs", signal.SIGTERM),
        ("cpsat", signal.SIGINT),
        ("cpsat", signal.SIGTERM),
    ],
    ids=["highs-INT", "highs-TERM", "cpsat-INT", "cpsat-TERM"],
)
def test_exact_stops_on_a_signal_during_the_solve(tmp_path, solver, sig):
    path = _slow_instance(tmp_path)
    out = tmp_path / "best.json"
    cmd = _python_lpsched(
        "exact", str(path), "--solver", solver, "--time-limit", "60", "--json", "-o", str(out),
    )  # fmt: skip
    rc, stdout, stderr, waited = _signal_after(cmd, sig, 5.0, tmp_path)
    data = _assert_interrupted_exact(rc, stdout, stderr, waited, tmp_path, out)
    assert data["objective"] is not None and out.exists()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["INT", "TERM"])
def test_exact_stops_on_a_signal_during_the_heuristic(tmp_path, sig):
    path = _slow_instance(tmp_path, 150)  # its local search runs for seconds
    cmd = _python_lpsched("exact", str(path), "--time-limit", "60", "--json")
    rc, stdout, stderr, waited = _signal_after(cmd, sig, 2.0, tmp_path)
    assert rc == 130, (rc, stdout, stderr[-2000:])
    assert json.loads(stdout)["status"] == "interrupted" and waited < 10


def _csv_rows(path):
    if not path.exists():
        return []
    text = path.read_text()
    return text.splitlines()[1:]


@pytest.mark.parametrize(
    "sig,when",
    [
        (signal.SIGINT, "rows"),
        (signal.SIGTERM, "rows"),
        (signal.SIGINT, "start"),
        (signal.SIGTERM, "start"),
    ],
    ids=["INT-mid", "TERM-mid", "INT-start", "TERM-start"],
)
def test_reproduce_stops_on_a_signal_and_keeps_whole_rows(tmp_path, sig, when):
    """Sizes 6 and 8 solve in a moment, n = 60 of the first workload (paper-scaled, seed 0)
    takes tens of seconds in its MIP, which HiGHS interrupts (its LP takes 0.1 s; at n = 200
    the LP, which HiGHS cannot stop, took long enough to miss the deadline): the signal arrives
    during the MIP (or right at the start); the rows written stay whole and a rerun reuses
    them."""
    import csv

    out = tmp_path / "gaps"
    table = out / "optimality-gaps.csv"
    cmd = _python_lpsched(
        "reproduce", "optimality-gaps", "--seeds", "0", "--sizes", "6,8,60", "--workers", "1",
        "--out", str(out),
    )  # fmt: skip
    if when == "rows":  # the n = 6 and 8 rows are written, the n = 60 MIP runs
        until = lambda: len(_csv_rows(table)) >= 10  # noqa: E731
    else:  # the CSV has just been created: the first task starts
        until = table.exists
    rc, stdout, stderr, waited = _signal_after(
        cmd, sig, 1.0 if when == "rows" else 0.0, tmp_path, until
    )
    assert rc == 130, (rc, stderr[-2000:])
    assert "interrupted" in stderr and "Traceback" not in stderr and waited < 10
    text = table.read_text()
    assert text.endswith("\n")
    rows = list(csv.DictReader(text.splitlines()))
    assert all(None not in r and None not in r.values() for r in rows)  # whole rows only
    assert {r["n"] for r in rows} <= {"6", "8"}
    assert all(r["status"] == "optimal" for r in rows)  # no interrupted row recorded
    if when == "rows":
        assert len(rows) >= 10
        r = invoke(
            "reproduce", "optimality-gaps", "--seeds", "0", "--sizes", "6,8", "--workers", "1",
            "--out", str(out),
        )  # fmt: skip
        assert r.exit_code == 0, r.output
        assert f"reused {len(rows)} of 30" in r.stderr  # 3 workloads x 2 sizes x 5 policies
        assert "rejected" not in r.stderr and "incomplete" not in r.stderr


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _children(pids) -> list[int]:
    """Live processes whose parent is in ``pids`` (from /proc)."""
    import os

    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) in pids and fields[0] != "Z":
                out.append(int(entry))
    return out


@pytest.mark.skipif(not __import__("os").path.isdir("/proc/self"), reason="needs Linux /proc")
def test_reproduce_with_a_killed_worker_is_one_clear_error_and_resumes(tmp_path):
    import csv
    import os
    import subprocess
    import time

    out = tmp_path / "gaps"
    table = out / "optimality-gaps.csv"
    cmd = _python_lpsched(
        "reproduce", "optimality-gaps", "--seeds", "0", "--sizes", "6,60", "--workers", "2",
        "--out", str(out),
    )  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        t0 = time.monotonic()
        # tasks in order: paper-scaled 6 and 60, scaled-mix 6 and 60, ...: one worker takes
        # paper-scaled 60 (tens of seconds), the other the two n = 6 tasks, then scaled-mix 60
        while len(_csv_rows(table)) < 10:  # both n = 6 tasks done, two n = 60 ones running
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() - t0 < 120
            time.sleep(0.1)
        # the workers are the forkserver's children: grandchildren of the command
        workers = sorted(_children(_children([proc.pid])))
        assert workers
        os.kill(workers[0], signal.SIGKILL)
        killed = time.monotonic()
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    err = stderr.decode()
    assert proc.returncode == 1, (proc.returncode, err[-2000:])
    assert "a worker process died" in err and "rerun to resume" in err
    assert "Traceback" not in err and time.monotonic() - killed < 30
    text = table.read_text()
    assert text.endswith("\n")
    rows = list(csv.DictReader(text.splitlines()))
    assert len(rows) == 10 and {r["n"] for r in rows} == {"6"}
    time.sleep(1.0)
    assert not [w for w in workers if _alive(w)]  # no worker left behind
    r = invoke(
        "reproduce", "optimality-gaps", "--seeds", "0", "--sizes", "6", "--workers", "2",
        "--out", str(out),
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "reused 10 of 15" in r.stderr  # uniform-small's n = 6 is new


@pytest.mark.skipif(not __import__("os").path.isdir("/proc/self"), reason="needs Linux /proc")
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["INT", "TERM"])
def test_reproduce_with_workers_stops_on_a_signal_and_ends_its_workers(tmp_path, sig):
    import csv
    import subprocess
    import time

    out = tmp_path / "gaps"
    table = out / "optimality-gaps.csv"
    cmd = _python_lpsched(
        "reproduce", "optimality-gaps", "--seeds", "0", "--sizes", "6,30", "--workers", "2",
        "--out", str(out),
    )  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        t0 = time.monotonic()
        while len(_csv_rows(table)) < 10:  # the n = 30 tasks are busy in both workers
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() - t0 < 120
            time.sleep(0.1)
        time.sleep(1.0)
        workers = _children(_children([proc.pid]))
        assert workers
        proc.send_signal(sig)  # to the command alone, not to its workers
        sent = time.monotonic()
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    err = stderr.decode()
    assert proc.returncode == 130, (proc.returncode, err[-2000:])
    assert "interrupted" in err and "Traceback" not in err and time.monotonic() - sent < 10
    text = table.read_text()
    assert text.endswith("\n") and len(list(csv.DictReader(text.splitlines()))) >= 10
    time.sleep(1.0)
    assert not [w for w in workers if _alive(w)]  # the busy workers were ended
