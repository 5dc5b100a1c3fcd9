"""The algorithms reproduction on a tiny scale: its rows, a resume that computes nothing, a
refusal that becomes a note, the left-out names; the common-prompt generator; the 1-bit queue
and the worst ratios read from a ratios CSV."""

from __future__ import annotations

import csv
import math
import time
from pathlib import Path

import numpy as np
import pytest

from lpsched.bounds import combinatorial_bound
from lpsched.generators.lmsys import COMMON_PROMPT, common_prompt_instance
from lpsched.instance import Instance
from lpsched.policies.local_search import best_heuristic
from lpsched.policies.registry import POLICIES, Policy
from lpsched.research.reproductions import algorithms as alg
from lpsched.research.reproductions import burst as svf_burst
from lpsched.research.reproductions.registry import REPRODUCTIONS, accepts
from lpsched.schedule import Schedule
from lpsched.solvers.result import Result

TINY = {
    "seeds": [0],
    "sizes": [12],
    "time_limits": 1,
    "burst_n": 30,
    "burst_memories": [1500],
    "policies": ["svf", "volume", "sorted-f", "mcsf", "fcfs", "amin", "vllm"],
    "progress": False,
}


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def _stand_in(calls: list):
    """A certify that answers at once: the best list policy and the combinatorial bound."""

    def certify(instance, time_limit=60.0, *, threads=None, seed=0, progress=None):
        calls.append(instance.name)
        t0 = time.perf_counter()
        best = best_heuristic(instance)
        bound = float(combinatorial_bound(instance))
        optimal = math.ceil(bound - 1e-6) >= best.tel
        return Result(
            schedule=Schedule(instance, best.start, policy=best.policy),
            objective=best.tel,
            bound=bound,
            bound_method="combinatorial",
            gap=0.0 if optimal else (best.tel - bound) / best.tel,
            status="optimal" if optimal else "gap",
            runtime_s=time.perf_counter() - t0,
            info={"methods": {"lp": "skipped: a stand-in"}},
        )

    return certify


def test_registered_with_the_cli_options():
    repro = REPRODUCTIONS["algorithms"]
    for option in ("seeds", "sizes", "time_limits", "policies", "policy_options", "workloads"):
        assert accepts(repro, option)


def test_tiny_run_writes_rows_and_a_rerun_computes_nothing(tmp_path, monkeypatch):
    text = alg.run(tmp_path, **TINY)
    bounds = _rows(tmp_path / "algorithms-bounds.csv")
    rows = _rows(tmp_path / "algorithms.csv")
    burst = _rows(tmp_path / "algorithms-burst.csv")
    # one paper-scaled instance and one common-prompt instance per budget
    assert sorted((b["workload"], b["memory"]) for b in bounds) == [
        ("common-prompt", "4096"),
        ("common-prompt", "8192"),
        ("paper-scaled", "825"),
    ]
    assert len(rows) == 3 * len(TINY["policies"])
    bound = {(b["workload"], b["memory"]): float(b["bound"]) for b in bounds}
    for r in rows:
        assert r["note"] == "" and int(r["tel"]) >= bound[(r["workload"], r["memory"])] - 1e-6
    assert len(burst) == len(svf_burst.BURST_SCHEDULERS) * len(svf_burst.BURST_TIME_MODELS)
    assert {r["scheduler"] for r in burst} == set(svf_burst.BURST_SCHEDULERS)
    assert (tmp_path / "algorithms.md").read_text().strip() == text.strip()
    for p in TINY["policies"]:
        assert f"| {p} " in text
    assert "s=79 M=4096 n=12" in text and "paper n=12 (M=825)" in text

    def nothing(*args, **kwargs):
        raise AssertionError("a resumed run computed a row")

    monkeypatch.setattr(alg, "_bound_rows", nothing)
    monkeypatch.setattr(alg, "_policy_rows", nothing)
    monkeypatch.setattr(svf_burst, "_burst_rows", nothing)
    again = alg.run(tmp_path, **TINY)
    assert again == text
    assert _rows(tmp_path / "algorithms.csv") == rows


def test_a_refusal_becomes_a_note_and_absent_names_are_left_out(tmp_path, monkeypatch):
    calls: list = []
    monkeypatch.setattr(alg, "certify", _stand_in(calls))

    def one_prompt(instance: Instance) -> Schedule:
        if len(set(instance.prefill.tolist())) > 1:
            raise ValueError("one-prompt needs one common prompt length")
        return POLICIES["mcsf"].run(instance)

    monkeypatch.setitem(POLICIES, "one-prompt", Policy("one-prompt", one_prompt, "test"))
    monkeypatch.delitem(POLICIES, "sps", raising=False)
    policies = [*alg.ALGORITHM_POLICIES[:3], "one-prompt", "fcfs"]  # svf, volume, sps
    with (tmp_path / "ratios.csv").open("w", newline="") as fh:  # as reproduce ratios leaves it
        fh.write("workload,n,memory,seed,policy,ratio_opt,opt_status\n")
        fh.write("mix,5,16,0,fcfs,2.5,optimal\n")
    text = alg.run(
        tmp_path,
        **{**TINY, "policies": policies, "workloads": ["paper", "common-prompt"]},
        burst=False,
    )
    assert len(calls) == 3  # one certify per instance, shared by every policy
    rows = {(r["workload"], r["policy"]): r for r in _rows(tmp_path / "algorithms.csv")}
    refused = rows[("paper-scaled", "one-prompt")]
    assert refused["tel"] == "" and refused["note"].startswith("refused: one-prompt needs")
    assert rows[("common-prompt", "one-prompt")]["tel"] != ""
    assert "(refused: 1/1)" in text and "one-prompt needs one common prompt length" in text
    assert "left out: sps" in text
    assert "| 2.500 (mix n = 5, M = 16) " in text and "see reproduce ratios" not in text
    assert not (tmp_path / "algorithms-burst.csv").exists()
    # an unknown name outside the study's list is an error
    with pytest.raises(KeyError):
        alg.run(tmp_path, **{**TINY, "policies": ["no-such-policy"]}, burst=False)


def test_common_prompt_instances():
    a = common_prompt_instance(300, 4096, seed=3)
    b = common_prompt_instance(300, 4096, seed=3)
    assert np.array_equal(a.decode, b.decode) and a.name == b.name
    assert not np.array_equal(a.decode, common_prompt_instance(300, 4096, seed=4).decode)
    for memory in (4096, 8192, 300):
        inst = common_prompt_instance(300, memory, seed=3)
        assert inst.n == 300 and inst.memory == memory
        assert np.all(inst.prefill == COMMON_PROMPT)
        assert np.all(inst.prefill + inst.decode <= memory)
        assert np.all(inst.arrival == 0) and np.all(inst.decode >= 1)
    small = common_prompt_instance(300, 300, seed=3)
    assert small.metadata["capped"] == int(np.count_nonzero(a.decode > 300 - COMMON_PROMPT)) > 0
    # one seed, two budgets: the same draws, only the cap differs
    assert np.array_equal(small.decode, np.minimum(a.decode, 300 - COMMON_PROMPT))
    with pytest.raises(ValueError):
        common_prompt_instance(10, COMMON_PROMPT)


def test_one_bit_queue_sees_only_the_class():
    # T = 100: short when o <= 10; every short request shares a surrogate, so ties go by index
    inst = Instance.from_arrays([5, 5, 5, 5, 5], [100, 3, 9, 50, 1], 1000)
    order = svf_burst.one_bit_volume_order(inst).tolist()
    assert order == [1, 2, 4, 0, 3]


def test_worst_ratios_from_a_ratios_csv(tmp_path):
    path = tmp_path / "ratios.csv"
    fields = ["workload", "n", "memory", "seed", "policy", "ratio_opt", "opt_status"]
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(fields)
        w.writerow(["mixed", 5, 16, 0, "sorted-f", "1.25", "optimal"])
        w.writerow(["mixed", 7, 32, 1, "sorted-f", "1.5", "best-known"])
        w.writerow(["mixed", 7, 32, 1, "fcfs", "3.0", "optimal"])
    cells = alg.worst_ratios(path)
    assert cells["sorted-f"] == "1.500 (mixed n = 7, M = 32, OPT best known)"
    assert cells["fcfs"].startswith("3.000 (mixed n = 7")
    # a folder: its ratios.csv and theorems.csv
    with (tmp_path / "theorems.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(fields)
        w.writerow(["svf-alpha", 6, 20, 2, "svf", "1.75", "optimal"])
        w.writerow(["svf-alpha", 6, 20, 3, "sorted-f", "1.1", "optimal"])
    cells = alg.worst_ratios(tmp_path)
    assert cells["svf"] == "1.750 (svf-alpha n = 6, M = 20)"
    assert cells["sorted-f"].startswith("1.500")
