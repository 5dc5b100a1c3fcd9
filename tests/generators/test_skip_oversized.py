"""``from_traces(skip_oversized=True)`` and ``lpsched generate --trace ... --skip-oversized``."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from lpsched.cli import main
from lpsched.generators.workloads import from_traces
from lpsched.instance import InstanceError

HEADER = "num_prefill_tokens,num_decode_tokens\n"


def write_trace(path, pairs):
    path.write_text(HEADER + "".join(f"{s},{o}\n" for s, o in pairs))
    return path


@pytest.fixture
def trace(tmp_path):
    # s + o: 15, 120, 26, 300, 38 -> with M = 100, lines 3 and 5 do not fit
    return write_trace(tmp_path / "t.csv", [(10, 5), (100, 20), (20, 6), (200, 100), (30, 8)])


def test_without_the_option_an_oversized_draw_is_an_error(trace):
    with pytest.raises(InstanceError, match=r"t\.csv: line [35]: .*--skip-oversized"):
        from_traces([trace], 5, 100, seed=0)


def test_skipped_rows_are_left_out_and_counted(trace):
    inst = from_traces([trace], 3, 100, seed=0, skip_oversized=True)
    # the three fitting rows, each once (drawn without replacement)
    assert sorted(zip(inst.prefill.tolist(), inst.decode.tolist(), strict=True)) == [
        (10, 5),
        (20, 6),
        (30, 8),
    ]
    assert inst.metadata["skipped_oversized"] == [2]
    assert sorted(line for _, line in inst.metadata["rows"]) == [2, 4, 6]


def test_too_few_fitting_rows_is_an_error(trace):
    with pytest.raises(InstanceError, match=r"has 3 rows with s \+ o <= M = 100, fewer than the 4"):
        from_traces([trace], 4, 100, seed=0, skip_oversized=True)


def test_counts_per_file(tmp_path, trace):
    other = write_trace(tmp_path / "u.csv", [(1, 1), (2, 2), (99, 2)])
    inst = from_traces([trace, other], 4, 100, weights=[0.5, 0.5], skip_oversized=True)
    assert inst.metadata["skipped_oversized"] == [2, 1]
    assert inst.metadata["counts"] == [2, 2]


@settings(max_examples=25, deadline=None)
@given(
    pairs=st.lists(st.tuples(st.integers(0, 50), st.integers(1, 50)), min_size=3, max_size=12),
    seed=st.integers(0, 2**16),
)
def test_same_instance_when_nothing_is_oversized(tmp_path_factory, pairs, seed):
    path = write_trace(tmp_path_factory.mktemp("t") / "t.csv", pairs)
    n = len(pairs) // 2 + 1
    plain = from_traces([path], n, 100, seed=seed)
    skipping = from_traces([path], n, 100, seed=seed, skip_oversized=True)
    assert np.array_equal(plain.prefill, skipping.prefill)
    assert np.array_equal(plain.decode, skipping.decode)
    assert plain.metadata["rows"] == skipping.metadata["rows"]
    assert skipping.metadata["skipped_oversized"] == [0]


def test_command_line_reports_the_skipped_rows(tmp_path, trace):
    out = tmp_path / "inst.json"
    args = ["generate", "--trace", str(trace), "-n", "3", "--memory", "100", "-o", str(out)]
    failed = CliRunner().invoke(main, args)
    assert failed.exit_code == 1 and "--skip-oversized" in failed.output
    ok = CliRunner().invoke(main, [*args, "--skip-oversized"])
    assert ok.exit_code == 0, ok.output
    assert f"skipped 2 rows with s + o > M = 100 (2 in {trace}" in ok.output
    data = json.loads(out.read_text())
    assert len(data["requests"]) == 3
    assert all(r["prefill"] + r["decode"] <= 100 for r in data["requests"])


def test_command_line_option_needs_a_trace(tmp_path):
    args = ["generate", "--workload", "code", "-n", "3", "--memory", "16492"]
    result = CliRunner().invoke(main, [*args, "--skip-oversized", "-o", str(tmp_path / "x.json")])
    assert result.exit_code == 2 and "--skip-oversized goes with --trace" in result.output
