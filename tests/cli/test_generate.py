"""``lpsched generate`` and ``lpsched gadget``: workloads, traces, intervals, gadgets and their
errors."""

from __future__ import annotations

import numpy as np
from click.testing import CliRunner

from lpsched.cli import main
from lpsched.generators.workloads import generate
from lpsched.io import read_instance


def invoke(*args):
    return CliRunner().invoke(main, list(args))


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


def test_gadget_bad_B_is_one_clear_error_with_advice_that_works(tmp_path):
    out = str(tmp_path / "g.json")
    r = invoke(
        "gadget", "three-partition", "--m", "20", "--B", "10", "--distinct", "--yes", "-o", out
    )
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


def test_a_gadget_needs_yes_or_no(tmp_path):
    """Issue 22, item 13: without --yes or --no the command made a yes-instance silently."""
    out = str(tmp_path / "g.json")
    r = invoke("gadget", "three-partition", "--m", "2", "--B", "20", "-o", out)
    assert r.exit_code == 2 and "--yes" in r.output and "--no" in r.output
    assert not (tmp_path / "g.json").exists()


def test_gadget_two_point_writes_the_papers_instance(tmp_path):
    from lpsched.generators.two_point import two_point
    from lpsched.policies.registry import run_policy

    out = tmp_path / "tp.json"
    r = invoke("gadget", "two-point", "-o", str(out))
    assert r.exit_code == 0, r.output
    inst = read_instance(out)
    assert np.array_equal(inst.decode, two_point().decode) and inst.memory == 256
    assert run_policy(inst, "fcfs").tel == 185_892 and run_policy(inst, "mcsf").tel == 13_448
    small = tmp_path / "s.json"
    assert invoke("gadget", "two-point", "--prefill", "8", "-o", str(small)).exit_code == 0
    assert run_policy(read_instance(small), "fcfs").tel == 81_011
    bad = invoke("gadget", "two-point", "--prefill", "300", "-o", str(tmp_path / "b.json"))
    assert bad.exit_code == 1 and "exceed memory M = 256" in bad.output
