"""``lpsched run`` shows how far each policy is from optimal: TEL over a lower bound (the LP
relaxation where its model is small, else the combinatorial bound), beside the ratio to the
best policy; the seconds table has a ratio column too. The README's quick-start table is what
``lpsched run`` prints on the shipped default instance."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from reference.shipped import MIX10

from lpsched.bounds import combinatorial_bound
from lpsched.certify import lp_bound
from lpsched.cli import main
from lpsched.generators.workloads import generate
from lpsched.io import read_instance, write_instance

ROOT = Path(__file__).resolve().parents[2]


def invoke(*args):
    r = CliRunner().invoke(main, [str(a) for a in args])
    assert r.exit_code == 0, r.output
    return r.stdout


def test_small_instances_are_measured_against_the_lp():
    data = json.loads(invoke("run", MIX10, "--policies", "fcfs,mcsf,sorted-f", "--json"))
    lp = lp_bound(read_instance(MIX10)).bound
    assert data["bound_method"] == "lp" and math.isclose(data["lower_bound"], lp)
    for row in data["results"]:
        assert math.isclose(row["ratio_to_bound"], row["tel"] / lp) and row["ratio_to_bound"] >= 1
    text = invoke("run", MIX10, "--policies", "fcfs,mcsf,sorted-f")
    head = text.splitlines()[1]
    assert "ratio to best" in head and "TEL / bound" in head
    assert f"over the LP relaxation, a lower bound of {lp:.3f} rounds" in text
    fcfs = next(line for line in text.splitlines() if line.startswith("fcfs"))
    assert f"{data['results'][0]['ratio_to_bound']:.3f}" in fcfs.split()


def test_large_instances_use_the_combinatorial_bound(tmp_path):
    inst = generate("mix-80-20", 300, 16492, seed=1)
    write_instance(inst, tmp_path / "i.json")
    data = json.loads(invoke("run", tmp_path / "i.json", "--policies", "fcfs,volume", "--json"))
    assert data["bound_method"] == "combinatorial"
    assert data["lower_bound"] == combinatorial_bound(inst)
    assert [r["ratio_to_bound"] for r in data["results"]] == [
        r["tel"] / combinatorial_bound(inst) for r in data["results"]
    ]
    text = invoke("run", tmp_path / "i.json", "--policies", "fcfs,volume")
    assert f"over the combinatorial lower bound, {combinatorial_bound(inst)} rounds" in text


def test_the_seconds_table_has_a_ratio_column():
    data = json.loads(
        invoke("run", MIX10, "--policies", "fcfs,sorted-f", "--time-model", "linear", "--json")
    )
    best = min(r["tel_s"] for r in data["results"])
    assert [r["ratio_to_best_s"] for r in data["results"]] == [
        r["tel_s"] / best for r in data["results"]
    ]
    text = invoke("run", MIX10, "--policies", "fcfs,sorted-f", "--time-model", "linear")
    lines = text.split("\ntime model linear")[1].splitlines()
    assert lines[1].split()[:4] == ["policy", "TEL", "(s)", "ratio"]
    for row, line in zip(data["results"], lines[3:5], strict=True):
        assert line.split()[2] == f"{row['ratio_to_best_s']:.3f}"


def _wall_times_out(text: str) -> str:
    return re.sub(r"\d+\.\d{3}$", "T", text, flags=re.M)


@pytest.mark.slow
def test_the_readme_quick_start_table_is_what_run_prints():
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"```\n(instance default: .*?)```", readme, flags=re.S)
    assert block is not None
    assert _wall_times_out(block.group(1)) == _wall_times_out(invoke("run"))
