"""The command line: tables, JSON keys, exit codes, files."""

from __future__ import annotations

import json

import numpy as np
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
    assert sched.evictions == doc["evictions"] > 0 and len(doc["runs"]) == inst.n + sched.evictions
    bad = dict(
        doc, start=[0] * inst.n, completion=(inst.decode).tolist(), tel=int(inst.decode.sum())
    )
    bad.pop("runs")
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
