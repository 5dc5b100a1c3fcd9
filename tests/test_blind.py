"""The blind executor (SPEC section 11): kills the policy chooses, what it refuses, and the
blindness property of every non-clairvoyant policy in the registry."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lpsched.blind import (
    BlindPolicyError,
    BlindSpec,
    BlindState,
    BlindView,
    Decision,
    run_blind,
)
from lpsched.generators.intervals import no_information
from lpsched.generators.two_point import two_point
from lpsched.instance import Instance
from lpsched.policies.registry import POLICIES, run_policy


class GreedyRecompute:
    """A toy blind policy: start waiting requests by index while the next round fits; when the
    next round would overflow, kill the newest attempts (latest start, then highest index) and
    start nothing at that visit."""

    def __init__(self, view: BlindView, key=None) -> None:
        self.s = view.prefill.tolist()
        self.M = view.memory
        self.key = key or (lambda j: j)
        self.waiting: list[int] = []

    def __call__(self, state: BlindState) -> Decision:
        self.waiting = sorted(set(self.waiting) | set(state.arrived), key=self.key)
        used = state.memory_next
        kill: list[int] = []
        if used > self.M:
            running = dict(state.running)
            for j in sorted(running, key=lambda j: (running[j], j), reverse=True):
                kill.append(j)
                used -= self.s[j] + state.t + 1 - running[j]
                if used <= self.M:
                    break
            self.waiting = sorted(self.waiting + kill, key=self.key)
            return Decision(kill=kill)
        start = []
        for j in self.waiting:
            if used + self.s[j] + 1 > self.M:
                break
            start.append(j)
            used += self.s[j] + 1
        self.waiting = [j for j in self.waiting if j not in start]
        return Decision(start=start)


TOY = BlindSpec(lambda view: GreedyRecompute(view))


def test_a_kill_and_its_restart_by_hand():
    # M = 10: r0 (s 4, o 5) and r1 (s 3, o 3) start at 0 (round 1 holds 5 + 4 = 9); round 2
    # would hold 6 + 5 = 11 > 10, so at t = 1 the newest, r1, is killed after one token; r0
    # completes at 5 and r1 runs again from its first token: rounds 6-8.
    inst = Instance.from_arrays([4, 3], [5, 3], 10)
    sched = TOY.run(inst, name="toy", record=True).check()
    assert sched.start.tolist() == [0, 5] and sched.tel == 5 + 8
    assert sorted(map(tuple, sched.runs.tolist())) == [(0, 0, 5, 1), (1, 0, 1, 0), (1, 5, 8, 1)]
    assert (sched.info["kills"], sched.info["wasted_tokens"], sched.info["attempts"]) == (1, 1, 3)
    assert sched.info["decisions"] == [(0, (), (0, 1)), (1, (1,), ()), (5, (), (1,))]


@given(
    st.lists(st.tuples(st.integers(0, 6), st.integers(1, 6), st.integers(0, 5)), min_size=1,
             max_size=8),
    st.integers(0, 6),
)  # fmt: skip
@settings(max_examples=60, deadline=None)
def test_every_blind_schedule_is_feasible(rows, extra):
    s, o, a = (list(col) for col in zip(*rows, strict=True))
    memory = max(x + y for x, y in zip(s, o, strict=True)) + extra
    inst = Instance.from_arrays(s, o, memory, arrival=a)
    sched = TOY.run(inst).check()
    assert sched.tel >= int(np.sum(inst.decode))
    for policy in BLIND:
        run_policy(_told(policy.blind, inst), policy.name).check()


class _Scripted:
    def __init__(self, decisions):
        self.decisions = list(decisions)

    def __call__(self, state):
        return self.decisions.pop(0) if self.decisions else Decision()


@pytest.mark.parametrize(
    ("decisions", "match"),
    [
        ([Decision(kill=[0])], "killed request 0 at round 0: not running"),
        ([Decision(start=[0, 0])], "started request 0 at round 0: running"),
        ([Decision(start=[0, 1])], r"overflows the KV cache in round 1: 10 > M = 9"),
        ([Decision(start=[0], wake=0)], "asked to wake at 0, not after 0"),
        ([Decision()], r"left 2 request\(s\) waiting with nothing running"),
        ([None], "answered NoneType at round 0, not a Decision"),
        ([Decision(start=[0.0])], "named request 0.0 in start at round 0: a request is an integer"),
        ([Decision(start=[True])], "named request True in start"),
        ([Decision(start=[0], wake=0.5)], "asked to wake at 0.5 at round 0: a round is an integer"),
    ],
)
def test_the_executor_refuses_bad_decisions(decisions, match):
    inst = Instance.from_arrays([4, 4], [3, 3], 9)
    with pytest.raises(BlindPolicyError, match=match):
        run_blind(inst, _Scripted(decisions), name="bad")


def test_an_overflow_the_policy_leaves_is_refused():
    # both fit in round 1 (5 + 5 = 10) but round 2 needs 12: the executor visits t = 1, and a
    # policy that kills nothing there is refused
    inst = Instance.from_arrays([4, 4], [5, 5], 10)
    with pytest.raises(BlindPolicyError, match="overflows the KV cache in round 2: 12 > M = 10"):
        run_blind(inst, _Scripted([Decision(start=[0, 1])]), name="lazy")


def test_the_view_hides_the_decode_lengths():
    inst = Instance.from_arrays([4, 3], [5, 3], 10)
    view = BlindView.of(inst)
    assert not hasattr(view, "decode") and view.decode_lo is None and view.long is None
    assert view.prefill.tolist() == [4, 3] and not view.prefill.flags.writeable
    assert BlindView.of(inst, ("class", 4)).long.tolist() == [True, False]
    with pytest.raises(ValueError, match="has no decode-length intervals"):
        BlindView.of(inst, "interval")
    with pytest.raises(ValueError, match="reveal must be"):
        BlindView.of(inst, "all")


# --------------------------------------------------------------------------- blindness

#: Every non-clairvoyant policy of the registry (SPEC section 11).
BLIND = [p for p in POLICIES.values() if p.blind is not None]


def _told(spec: BlindSpec, inst: Instance) -> Instance:
    """``inst`` with the prediction a policy that sees intervals needs: the widest,
    ``[1, max o]`` capped at ``M - s_i`` (alike requests share theirs)."""
    return no_information(inst) if spec.revealed(two_point()) == "interval" else inst


def _two_point(spec: BlindSpec, prefill: int) -> Instance:
    """The two-point instance of the blindness check: with spread lengths
    (:func:`two_point_spread`); for a policy that sees intervals, with
    1,000 short requests, listed before the long ones: A_min lists equal estimates by index and
    a request's estimate rises once it has run, so on the instance as generated it has run every
    long request, and finished every short one, before the first time checked (2% of the
    makespan), and no swap would be left to test."""
    if spec.revealed(two_point()) != "interval":
        return two_point_spread(prefill)
    inst = _told(spec, two_point(prefill=prefill, n_short=1000))
    return inst.subset(np.arange(inst.n)[::-1])


def _decisions(inst: Instance, spec: BlindSpec, options: dict) -> list:
    return spec.run(inst, record=True, **options).info["decisions"]


def _progress(sched, t: int) -> np.ndarray:
    """The most output tokens any attempt of each request had emitted by round ``t``."""
    most = np.zeros(sched.instance.n, dtype=np.int64)
    for i, p, end, _ in sched.runs.tolist():
        if p < t:
            most[i] = max(most[i], min(end, t) - p)
    return most


def assert_blind(spec: BlindSpec, inst: Instance, options: dict, seed: int = 0) -> None:
    """Swapping ``o_i`` between requests with equal ``s_i`` (and equal prediction) that are
    both unfinished at ``t``, where each new ``o`` still exceeds the progress its request
    reached by ``t`` (so that neither completes by ``t`` after the swap either), changes no
    decision up to ``t``; for several ``t``."""
    sched = spec.run(inst, record=True, **options)
    reveal = spec.revealed(inst, **options)
    key = [inst.prefill.tolist()]
    if reveal == "interval":
        key += [inst.decode_lo.tolist(), inst.decode_hi.tolist()]
    elif isinstance(reveal, tuple):
        key.append((inst.decode > reveal[1]).tolist())
    rng = np.random.default_rng(seed)
    completion = sched.start + inst.decode
    tested = 0
    makespan = int(completion.max())
    for t in sorted({int(makespan * f) for f in (0.002, 0.02, 0.1, 0.3, 0.6, 0.9)}):
        groups: dict[tuple, list[int]] = {}
        for i in np.flatnonzero(completion > t).tolist():
            groups.setdefault(tuple(k[i] for k in key), []).append(i)
        decode, most = inst.decode.copy(), _progress(sched, t)
        for members in groups.values():
            for i, j in zip(members, rng.permutation(members).tolist(), strict=True):
                if decode[j] > most[i] and decode[i] > most[j]:
                    decode[[i, j]] = decode[[j, i]]
        if np.array_equal(decode, inst.decode):
            continue
        tested += 1
        other = inst.replace(decode=decode)
        mine = [d for d in sched.info["decisions"] if d[0] <= t]
        theirs = [d for d in _decisions(other, spec, options) if d[0] <= t]
        assert mine == theirs, f"decisions up to t = {t} depend on unrevealed decode lengths"
    assert tested, "no swap was possible: choose an instance with more alike requests"


def test_the_toy_policy_is_blind():
    assert_blind(TOY, two_point(), {})


def two_point_spread(prefill: int = 96) -> Instance:
    """``two_point(prefill)`` with the decode lengths spread within each class (short 1-3, long
    158-160, by index): in ``two_point`` every class has one length, so no swap within a class
    changes anything."""
    inst = two_point(prefill=prefill)
    shift = np.arange(inst.n) % 3
    return inst.replace(decode=np.where(inst.decode > 1, inst.decode - shift, 1 + shift))


@pytest.mark.parametrize("policy", BLIND, ids=lambda p: p.name)
@pytest.mark.parametrize("prefill", [96, 8])
def test_every_blind_policy_is_blind(policy, prefill):
    assert_blind(policy.blind, _two_point(policy.blind, prefill), {})


class _Peeking(BlindSpec):
    """A policy that cheats: it orders its queue by the true ``o_i`` of the instance it runs."""

    def run(self, instance, *, name="", record=False, **options):
        decode = instance.decode.tolist()

        def build(view):
            return GreedyRecompute(view, key=lambda j: (decode[j], j))

        return run_blind(instance, build(BlindView.of(instance)), name=name, record=record)


def test_the_blindness_check_catches_a_policy_that_peeks():
    with pytest.raises(AssertionError, match="depend on unrevealed decode lengths"):
        assert_blind(_Peeking(lambda view: None), two_point(), {})


@pytest.mark.parametrize("policy", BLIND, ids=lambda p: p.name)
def test_lpsched_check_accepts_every_blind_schedule_with_its_kills(policy, tmp_path):
    """A blind policy's schedule file, its killed attempts included, passes ``lpsched check``
    (the runs of SPEC section 9), on the two-point instance with s = 8 (every policy kills)."""
    from click.testing import CliRunner

    from lpsched.cli import main
    from lpsched.io import write_instance

    inst = _told(policy.blind, two_point(prefill=8))
    path, out = tmp_path / "i.json", tmp_path / "s.json"
    write_instance(inst, path)
    made = CliRunner().invoke(
        main, ["schedule", str(path), "--policy", policy.name, "-o", str(out)]
    )
    assert made.exit_code == 0, made.output
    checked = CliRunner().invoke(main, ["check", str(path), str(out), "--json"])
    assert checked.exit_code == 0, checked.output
    report = json.loads(checked.stdout)
    assert report["feasible"] and report["tel"] == run_policy(inst, policy.name).tel
