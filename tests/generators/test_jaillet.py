"""The ``jaillet-synthetic`` workload and Jaillet's round convention
(lpsched.generators.jaillet)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from click.testing import CliRunner

from lpsched.certify import solve_exact
from lpsched.cli import main
from lpsched.generators.jaillet import (
    convention_instance,
    convention_tel,
    jaillet_reading,
    jaillet_synthetic,
    jaillet_tel,
)
from lpsched.generators.make import make_instance
from lpsched.generators.small import EXACT_WORKLOADS
from lpsched.instance import Instance, OptionError
from lpsched.io import read_instance
from lpsched.schedule import Schedule


def test_the_distribution_holds_on_many_seeds():
    ms, ns, ss = set(), set(), set()
    for seed in range(300):
        inst = jaillet_synthetic(seed=seed)
        m, s, o = inst.memory, inst.prefill, inst.decode
        assert 30 <= m <= 50 and 40 <= inst.n <= 60
        assert ((1 <= s) & (s <= 5)).all() and ((1 <= o) & (o <= m - s)).all()
        assert (s + o <= m).all() and inst.offline  # every request fits, all at round 0
        ms.add(m)
        ns.add(inst.n)
        ss.update(s.tolist())
    # both ends of every bound are drawn (our reading: inclusive integer bounds)
    assert {30, 50} <= ms and {40, 60} <= ns and ss == {1, 2, 3, 4, 5}
    inst = jaillet_synthetic(n=3000, seed=1, memory=8)
    pairs = {(int(a), int(b)) for a, b in zip(inst.prefill, inst.decode, strict=True)}
    assert pairs == {(a, b) for a in range(1, 6) for b in range(1, 9 - a)}


def test_seeded_reproducible_and_explicit_sizes_respected():
    a, b = jaillet_synthetic(seed=7), jaillet_synthetic(seed=7)
    assert a.name == b.name and a.prefill.tolist() == b.prefill.tolist()
    assert a.decode.tolist() == b.decode.tolist() and a.memory == b.memory
    assert jaillet_synthetic(seed=8).decode.tolist() != a.decode.tolist()
    assert a.metadata["n_drawn"] and a.metadata["memory_drawn"]
    # a given n keeps the drawn M, and the smaller instance is the larger one's first requests
    for n in (10, 15, 80):
        c = jaillet_synthetic(n, 7)
        assert c.n == n and c.memory == a.memory and not c.metadata["n_drawn"]
        k = min(n, a.n)
        assert c.prefill[:k].tolist() == a.prefill[:k].tolist()
        assert c.decode[:k].tolist() == a.decode[:k].tolist()
    # giving the drawn values is the drawn instance
    same = jaillet_synthetic(a.n, 7, a.memory)
    assert same.decode.tolist() == a.decode.tolist()
    d = jaillet_synthetic(seed=7, memory=12)
    assert d.memory == 12 and d.n == a.n and (d.prefill + d.decode <= 12).all()


@pytest.mark.parametrize(
    "n, memory, message",
    [
        (0, None, "n must be a positive integer, got 0"),
        (2.5, None, "n must be a positive integer"),
        (None, 5, "needs memory M >= 6 tokens"),
        (None, 0, "memory must be a positive integer"),
        (None, True, "memory must be a positive integer"),
    ],
)
def test_bad_sizes_are_refused(n, memory, message):
    with pytest.raises(ValueError, match=message):
        jaillet_synthetic(n, 0, memory)


def test_registered_as_a_small_workload_with_its_own_sizes(tmp_path):
    assert EXACT_WORKLOADS["jaillet-synthetic"] is jaillet_synthetic
    drawn = make_instance(None, None, "jaillet-synthetic", seed=3)
    assert drawn.decode.tolist() == jaillet_synthetic(seed=3).decode.tolist()
    assert make_instance(12, None, "jaillet-synthetic", seed=3).n == 12
    with pytest.raises(OptionError, match="Missing option '-n'"):
        make_instance(None, 50, "paper-scaled")
    with pytest.raises(OptionError, match="Missing option '--memory'"):
        make_instance(5, None, "paper-mix")
    with pytest.raises(OptionError, match="unknown workload 'nosuch'"):
        make_instance(5, None, "nosuch")
    out = tmp_path / "j.json"
    args = ["generate", "--workload", "jaillet-synthetic", "-n", "12", "--seed", "3"]
    r = CliRunner().invoke(main, [*args, "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert read_instance(out).decode.tolist() == jaillet_synthetic(12, 3).decode.tolist()
    r = CliRunner().invoke(main, [*args, "--memory", "5", "-o", str(out)])
    assert r.exit_code == 1 and "needs memory M >= 6" in r.stderr
    r = CliRunner().invoke(main, ["generate", "--workload", "paper-mix", "-n", "5", "-o", "x"])
    assert r.exit_code == 2 and "Missing option '--memory'" in r.stderr
    r = CliRunner().invoke(main, ["generate", "--list"])
    assert "\njaillet-synthetic " in r.stdout


def _jaillet_feasible_tel(inst: Instance, start) -> int | None:
    """Jaillet's reading by hand: request i started at p holds s_i + j tokens in round p + j,
    j = 0..o_i (both ends), completes at p + o_i; None when some round exceeds M."""
    horizon = max(p + o for p, o in zip(start, inst.decode, strict=True)) + 1
    used = np.zeros(horizon, dtype=np.int64)
    for p, s, o in zip(start, inst.prefill, inst.decode, strict=True):
        used[p : p + o + 1] += s + np.arange(o + 1)
    if used.max() > inst.memory:
        return None
    return int(sum(p + o for p, o in zip(start, inst.decode, strict=True)))


def test_the_convention_on_a_two_request_example():
    # A: s = 2, o = 2; B: s = 1, o = 3; M = 6, both at round 0. In Jaillet's reading (computed
    # by hand): both at 0 is infeasible (round 2 holds 4 + 3 = 7); A at 0 and B at 1 holds
    # 2, 3 + 1, 4 + 2, 3, 4 in rounds 0-4, feasible, C = 2 and 4: TEL 6, the optimum; B at 0
    # and A at 1 holds 4 + 4 = 8 in round 3, infeasible; B at 0 and A at 3 gives TEL 3 + 5 = 8.
    inst = Instance.from_arrays([2, 1], [2, 3], 6)
    assert _jaillet_feasible_tel(inst, (0, 0)) is None
    assert _jaillet_feasible_tel(inst, (0, 1)) == 6
    assert _jaillet_feasible_tel(inst, (1, 0)) is None
    assert _jaillet_feasible_tel(inst, (3, 0)) == 8
    jail = jaillet_reading(inst)
    assert jail.prefill.tolist() == [1, 0] and jail.decode.tolist() == [3, 4] and jail.memory == 6
    # lpsched's model on (s - 1, o + 1): rounds 1-5 hold 2, 3 + 1, 4 + 2, 3, 4; TEL' = 3 + 5
    sched = Schedule(jail, np.array([0, 1])).check()
    assert sched.memory_at(np.arange(1, 6)).tolist() == [2, 4, 6, 3, 4]
    assert sched.tel == 8 and jaillet_tel(sched.tel, inst.n) == 6
    assert convention_tel(sched.tel, "jaillet", 2) == 6 and convention_tel(8, "lpsched", 2) == 8
    assert not Schedule(jail, np.array([0, 0])).feasible
    best = solve_exact(jail, time_limit=30)
    assert str(best.status) == "optimal" and jaillet_tel(best.objective, inst.n) == 6
    assert convention_instance(inst, "lpsched") is inst


def test_a_schedule_is_feasible_in_one_reading_iff_in_the_other():
    rng = np.random.default_rng(0)
    for trial in range(30):
        inst = jaillet_synthetic(3, trial, int(rng.integers(6, 12)))
        jail = convention_instance(inst, "jaillet")
        for start in itertools.product(range(5), repeat=3):
            by_hand = _jaillet_feasible_tel(inst, start)
            sched = Schedule(jail, np.array(start))
            assert sched.feasible == (by_hand is not None)
            if by_hand is not None:
                assert by_hand == sched.tel - inst.n


def test_jaillet_reading_refuses_an_empty_prefill_and_moves_intervals():
    inst = Instance.from_arrays([0, 2], [1, 3], 10, ids=["a", "b"])
    with pytest.raises(ValueError, match="request a has prefill 0"):
        jaillet_reading(inst)
    with pytest.raises(ValueError, match="unknown convention 'x'"):
        convention_instance(inst, "x")
    ranged = Instance.from_arrays([1, 2], [2, 3], 10, decode_lo=[1, 3], decode_hi=[4, 3])
    moved = jaillet_reading(ranged)
    assert moved.decode_lo.tolist() == [2, 4] and moved.decode_hi.tolist() == [5, 4]
