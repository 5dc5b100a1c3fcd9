"""``lpsched priorities``: each request's position in a policy's list, as JSON Lines.

Checked: ids and positions of a hand-checked instance for list policies and the vllm
baselines, that replaying the written priorities as a list reproduces the policy's schedule
(list executor, and the preemptive executor for vllm-sf), the refusal of re-planning policies,
and bad input.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from lpsched.cli import main
from lpsched.executor import execute
from lpsched.generators.intervals import exact
from lpsched.generators.workloads import generate
from lpsched.instance import Instance
from lpsched.io import write_instance, write_priorities
from lpsched.policies.registry import run_policy
from lpsched.policies.vllm import execute_preemptive

# (s, o, a): a (2, 3, 2), b (1, 1, 0), "c é" (4, 2, 1), d (0, 1, 0); M = 10.
# fcfs: by arrival, then index: b d "c é" a  -> priorities a 3, b 0, "c é" 2, d 1.
# mcsf and vllm-sf: by o, then index: b d "c é" a (o = 1, 1, 2, 3): the same.
# size: by s + o, then index: d (1), b (2), a (5), "c é" (6) -> a 2, b 1, "c é" 3, d 0.
HAND = Instance.from_arrays(
    [2, 1, 4, 0], [3, 1, 2, 1], 10, [2, 0, 1, 0], ids=["a", "b", "c é", "d"], name="hand"
)
WANT = {
    "fcfs": [3, 0, 2, 1],
    "mcsf": [3, 0, 2, 1],
    "vllm-sf": [3, 0, 2, 1],
    "vllm": [3, 0, 2, 1],
    "size": [2, 1, 3, 0],
    "size+backfill": [2, 1, 3, 0],
}


def _invoke(*args):
    return CliRunner().invoke(main, ["priorities", *map(str, args)])


def _read(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def hand_file(tmp_path):
    path = tmp_path / "hand.json"
    write_instance(HAND, path)
    return path


@pytest.mark.parametrize("policy", sorted(WANT))
def test_hand_checked_positions(hand_file, tmp_path, policy):
    out = tmp_path / "p.jsonl"
    r = _invoke(hand_file, "--policy", policy, "-o", out)
    assert r.exit_code == 0, r.output
    assert _read(out) == [
        {"id": rid, "priority": k} for rid, k in zip(HAND.ids, WANT[policy], strict=True)
    ]
    assert f"wrote 4 priorities (0 runs first) to {out}" in r.stderr


def _replayed(path, inst) -> np.ndarray:
    """The list a priority-scheduling engine walks: ids by priority, lower first."""
    rows = _read(path)
    pos = {rid: i for i, rid in enumerate(inst.ids)}
    return np.array([pos[r["id"]] for r in sorted(rows, key=lambda r: r["priority"])])


@pytest.mark.parametrize("policy", ["sorted-f", "mcsf", "size"])
def test_replay_reproduces_list_policy(tmp_path, policy):
    inst = generate("mix-80-20", 80, 16492, seed=2)
    path, out = tmp_path / "i.json", tmp_path / "p.jsonl"
    write_instance(inst, path)
    r = _invoke(path, "--policy", policy, "--phase1", "swap", "-o", out)
    assert r.exit_code == 0, r.output
    replay = execute(inst, _replayed(out, inst))
    want = run_policy(inst, policy, solver="swap")
    assert np.array_equal(replay.start, want.start)


def test_replay_reproduces_vllm_sf(tmp_path):
    inst = generate("mix-80-20", 80, 6000, seed=4)
    path, out = tmp_path / "i.json", tmp_path / "p.jsonl"
    write_instance(inst, path)
    assert _invoke(path, "--policy", "vllm-sf", "-o", out).exit_code == 0
    replay = execute_preemptive(inst, _replayed(out, inst))
    want = run_policy(inst, "vllm-sf")
    assert want.evictions > 0  # the replay covers preemption
    assert np.array_equal(replay.start, want.start)
    assert np.array_equal(replay.runs, want.runs)


@pytest.mark.parametrize("policy", ["amin", "online-fcfs", "gba", "gba-d", "sps"])
def test_policies_without_a_list_refused(tmp_path, policy):
    """Refused by name, before the instance is read or the policy runs: ``amin`` on an
    instance without intervals gets this message, not the intervals' one."""
    path, out = tmp_path / "i.json", tmp_path / "p.jsonl"
    write_instance(exact(HAND), path)
    r = _invoke(path, "--policy", policy, "-o", out)
    assert r.exit_code == 1
    assert f"policy {policy!r} has no fixed priority list" in r.stderr
    assert "fix each request's start round" in r.stderr and "volume, lp-swap" in r.stderr
    assert not out.exists()
    write_instance(HAND, path)  # no prediction intervals
    r = _invoke(path, "--policy", policy, "-o", out)
    assert r.exit_code == 1 and "has no fixed priority list" in r.stderr


def test_svf_writes_the_volume_order(tmp_path):
    inst = generate("mix-80-20", 60, 6000, seed=2)
    path, a, b = tmp_path / "i.json", tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    write_instance(inst, path)
    r = _invoke(path, "--policy", "svf", "-o", a)
    assert r.exit_code == 0
    assert f"TEL of svf's own schedule {run_policy(inst, 'svf').tel} rounds" in r.stderr
    assert _invoke(path, "--policy", "volume", "-o", b).exit_code == 0
    assert a.read_text() == b.read_text()


def test_unknown_policy_and_missing_output(hand_file, tmp_path):
    r = _invoke(hand_file, "--policy", "nope", "-o", tmp_path / "p.jsonl")
    assert r.exit_code == 2 and "unknown policy 'nope'" in r.output
    r = _invoke(hand_file, "--policy", "fcfs")
    assert r.exit_code == 2 and "-o" in r.output


def test_write_priorities_rejects_a_non_permutation(tmp_path):
    with pytest.raises(ValueError, match="each of the 4 request indices once"):
        write_priorities(HAND, [0, 1, 1, 3], tmp_path / "p.jsonl")
    assert not (tmp_path / "p.jsonl").exists()


def test_time_model_plans_sorted_f_seconds(tmp_path):
    """``--time-model`` reaches the policies that declare a time model: the list written is
    sorted-f-seconds' order planned under that model, not under its default."""
    from lpsched.policies.sorted_f_seconds import sorted_f_seconds_order
    from lpsched.timing import parse_time_model

    inst = generate("mix-80-20", 60, 6000, seed=2)
    path, out = tmp_path / "i.json", tmp_path / "p.jsonl"
    write_instance(inst, path)
    r = _invoke(path, "--policy", "sorted-f-seconds", "--time-model", "unit", "-o", out)
    assert r.exit_code == 0, r.output
    order = sorted_f_seconds_order(inst, time_model=parse_time_model("unit"))
    assert not np.array_equal(order, sorted_f_seconds_order(inst))  # the model matters here
    got = [json.loads(line)["priority"] for line in out.read_text().splitlines()]
    assert got == np.argsort(order).tolist()  # request i's position in the list
