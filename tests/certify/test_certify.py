"""lpsched.certify: the best schedule, a valid bound, an honest status, at every size."""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from reference.brute_force import brute_force_tel, tiny_instances

import lpsched
from lpsched.certify import certify, certify_plan
from lpsched.certify import plan as plan_module
from lpsched.certify.method import Method
from lpsched.certify.methods import METHODS
from lpsched.cli import main
from lpsched.generators.small import scaled_mix
from lpsched.instance import Instance
from lpsched.io import read_instance, read_schedule
from lpsched.policies.local_search import best_heuristic

SHIPPED = {  # proven optima (instances/README.md)
    "instances/exact/mix10-s1.json": 74,
    "instances/exact/mix12-s1.json": 114,
    "instances/exact/mix12-s4-online.json": 106,
}


def _consistent(res, inst: Instance, status: str | None = None) -> None:
    """Every result: a feasible schedule of ``inst`` with the reported TEL, bound <= TEL, the
    gap and status as defined, the log in time order and monotone per side."""
    res.schedule.check()
    assert res.schedule.instance is inst
    assert res.objective == res.schedule.tel
    assert res.bound <= res.objective + 1e-9
    assert math.isclose(res.gap, (res.objective - res.bound) / res.objective, abs_tol=1e-12)
    closed = math.ceil(res.bound - 1e-6) >= res.objective
    assert res.status == (status or ("optimal" if closed else "gap"))
    times = [e.time_s for e in res.log]
    assert times == sorted(times)
    ups = [e.value for e in res.log if e.side == "upper"]
    lows = [e.value for e in res.log if e.side == "lower"]
    assert ups == sorted(ups, reverse=True) and ups[-1] == res.objective
    assert lows == sorted(lows)
    if res.status == "gap":
        assert res.bound == lows[-1]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_instances(max_n=5))
def test_certify_never_claims_more_than_the_brute_force_optimum(inst):
    opt = brute_force_tel(inst)
    res = certify(inst, time_limit=20, threads=1)
    _consistent(res, inst)
    assert res.bound <= opt + 1e-6 <= res.objective + 1e-6
    if res.status == "optimal":
        assert res.objective == opt


@pytest.mark.parametrize("path", sorted(SHIPPED))
def test_certify_proves_the_shipped_optima(path):
    inst = read_instance(path)
    res = certify(inst, time_limit=60, threads=1)
    _consistent(res, inst)
    assert res.status == "optimal" and res.objective == SHIPPED[path]
    assert res.to_dict("certify") == {
        "status": "optimal",
        "objective": SHIPPED[path],
        "bound": float(SHIPPED[path]),
        "bound_method": res.bound_method,
        "gap": 0.0,
        "runtime_s": res.runtime_s,
    }


def test_arrivals_keep_the_instance_axis():
    inst = read_instance("instances/exact/mix12-s4-online.json")
    late = Instance.from_arrays(
        inst.prefill, inst.decode, inst.memory, inst.arrival + 1000, name="late"
    )
    res = certify(late, time_limit=30, threads=1)
    _consistent(res, late)
    assert res.objective == 106 and res.schedule.start.min() >= 1000


def test_plans_by_size():
    small = scaled_mix(12, 1)
    assert certify_plan(small, best_heuristic(small))["size"] == "small"
    for n, full in ((100, True), (200, False)):  # 0.5 M and 2.1 M non-zeros
        medium = scaled_mix(n, 0)
        plan = certify_plan(medium, best_heuristic(medium))
        assert plan["size"] == "medium"
        assert [m for m in plan["methods"] if m not in ("lp-overlap", "partial-integrality")] == [
            "local-search",
            "lp-aggregated",
            "lns",
        ]
        assert ("partial-integrality" in plan["methods"]) is full
        assert ("lp-overlap" in plan["methods"]) is full
    large = read_instance("instances/default.json")
    plan = certify_plan(large, best_heuristic(large))
    assert plan["size"] == "large" and "lp-aggregated" in plan["methods"]


def _patched_plan(monkeypatch, runner):
    monkeypatch.setitem(plan_module.PLANS, "small", (("fake", 1.0),))
    monkeypatch.setitem(METHODS, "fake", Method("fake", "both", "a test's method", runner))


def test_a_failing_method_is_reported_and_the_result_stands(monkeypatch):
    def fails(instance, schedule, options, observer):
        raise ValueError("model too large for this test")

    _patched_plan(monkeypatch, fails)
    inst = scaled_mix(8, 0)
    res = certify(inst, time_limit=5)
    _consistent(res, inst)
    assert res.info["methods"]["fake"] == "failed: model too large for this test"


def test_an_infeasible_candidate_is_never_kept(monkeypatch):
    def offers_overflow(instance, schedule, options, observer):
        observer.on_incumbent(lpsched.Schedule(instance, np.zeros(instance.n)))

    _patched_plan(monkeypatch, offers_overflow)
    inst = scaled_mix(12, 1)  # all starting at 0 overflows M = 50
    res = certify(inst, time_limit=5)
    _consistent(res, inst)
    assert res.schedule.policy != "fake"
    assert res.info["rejected"][0].startswith("fake: ")


def test_a_bound_above_a_feasible_tel_is_rejected(monkeypatch):
    def too_high(instance, schedule, options, observer):
        observer.on_bound(10.0**9)

    _patched_plan(monkeypatch, too_high)
    inst = scaled_mix(8, 0)
    res = certify(inst, time_limit=5)
    _consistent(res, inst)
    assert res.bound_method == "combinatorial"
    assert res.info["rejected"] == [f"fake: bound 1e+09 above a feasible TEL {res.objective}"]


def test_a_schedule_of_another_instance_is_checked_on_certifys_own(monkeypatch):
    """Starts that are feasible for a relaxed copy (unit lengths) overflow the real M: they
    are rejected, never kept with a TEL (and an 'optimal') they do not have (review of
    issue 20)."""
    inst = read_instance("instances/exact/mix10-s1.json")  # M = 50, optimum 74
    ones = np.ones(inst.n, dtype=np.int64)
    relaxed = inst.replace(prefill=ones, decode=ones)

    def other(instance, schedule, options, observer):
        observer.on_incumbent(lpsched.Schedule(relaxed, np.zeros(inst.n, dtype=np.int64)))
        observer.on_incumbent(SimpleNamespace(start=np.zeros(3, dtype=np.int64)))

    _patched_plan(monkeypatch, other)
    res = certify(inst, time_limit=5)
    _consistent(res, inst)
    assert res.objective >= 74 and res.schedule.policy != "fake"
    assert len(res.info["rejected"]) == 2
    assert all(r.startswith("fake: ") for r in res.info["rejected"])
    assert "not a schedule of this instance" in res.info["rejected"][1]
    assert all(e.method != "fake" for e in res.log)


def test_a_bound_proven_wrong_by_a_later_schedule_is_retracted(monkeypatch):
    """A bound of 75 passes while the best TEL is 75; a schedule of TEL 74 (the optimum)
    then proves it wrong: it is dropped, and the status is not 'optimal' on its word."""
    inst = read_instance("instances/exact/mix10-s1.json")
    optimum = lpsched.solve_exact(inst, time_limit=60).schedule
    assert optimum.tel == 74 and best_heuristic(inst).tel == 75

    def lies_then_finds(instance, schedule, options, observer):
        observer.on_bound(75.0)
        observer.on_incumbent(optimum)

    _patched_plan(monkeypatch, lies_then_finds)
    res = certify(inst, time_limit=5)
    _consistent(res, inst)
    assert res.objective == 74 and res.bound < 74 and res.status == "gap"
    assert res.bound_method == "combinatorial"
    assert res.info["rejected"] == ["fake: bound 75 above a feasible TEL 74"]


@pytest.mark.parametrize(
    "bug",
    [
        lambda obs: 1 / 0,
        lambda obs: obs.on_bound("73"),
        lambda obs: obs.on_incumbent(None),
        lambda obs: {}["k"],
    ],
)
def test_any_exception_of_a_method_is_its_failure_not_the_runs(monkeypatch, bug):
    _patched_plan(monkeypatch, lambda instance, schedule, options, observer: bug(observer))
    inst = scaled_mix(8, 0)
    res = certify(inst, time_limit=5)
    _consistent(res, inst)
    outcome = res.info["methods"]["fake"]
    assert outcome.startswith("failed") or res.info.get("rejected"), outcome


@pytest.mark.parametrize("name", ["", " ", "AUTO", "auto", "lp ", "a,b", "--help", "x\n", 3])
def test_a_method_name_is_a_command_line_choice(name):
    with pytest.raises(ValueError, match="name"):
        Method(name, "lower", "a toy", lambda *a: None)


def test_best_bound_refuses_a_method_whose_bound_beats_a_feasible_tel(monkeypatch):
    def liar(instance, schedule, options, observer):
        observer.on_bound(10.0**6)

    monkeypatch.setitem(METHODS, "liar", Method("liar", "lower", "a test's method", liar))
    inst = read_instance("instances/exact/mix12-s4-online.json")
    with pytest.raises(RuntimeError, match="above the TEL"):
        lpsched.best_bound(inst, method="liar")
    with pytest.raises(ValueError, match="at least 10 s"):
        lpsched.best_bound(inst, 1.0, method="partial-integrality")


def test_ctrl_c_returns_the_best_so_far(monkeypatch):
    def interrupted(instance, schedule, options, observer):
        observer.on_bound(1.0)
        raise KeyboardInterrupt

    _patched_plan(monkeypatch, interrupted)
    inst = scaled_mix(12, 1)
    res = certify(inst, time_limit=5)
    assert res.status == "interrupted"
    _consistent(res, inst, status="interrupted")
    assert res.info["interrupted"] and res.schedule.tel == best_heuristic(inst).tel


def test_cli_certify_json_and_schedule(tmp_path):
    out = tmp_path / "best.json"
    path = "instances/exact/mix10-s1.json"
    r = CliRunner().invoke(
        main, ["certify", path, "--time-limit", "30", "--threads", "1", "--json", "-o", str(out)]
    )
    assert r.exit_code == 0, r.output
    got = json.loads(r.output)
    assert set(got) == {"status", "objective", "bound", "bound_method", "gap", "runtime_s"}
    assert got["status"] == "optimal" and got["objective"] == 74 and got["gap"] == 0.0
    sched = read_schedule(out, read_instance(path))
    assert sched.tel == 74
    text = CliRunner().invoke(main, ["certify", path, "--time-limit", "30"])
    assert text.exit_code == 0
    assert "status      optimal" in text.output and "improvements (" in text.output


def test_cli_refuses_an_unwritable_output_before_the_run(tmp_path):
    r = CliRunner().invoke(
        main, ["certify", "instances/exact/mix10-s1.json", "-o", str(tmp_path / "no" / "x.json")]
    )
    assert r.exit_code == 2 and "cannot write there" in r.output


def test_partial_integrality_is_skipped_with_a_short_budget():
    inst = scaled_mix(30, 0)
    res = certify(inst, time_limit=4, threads=1)
    _consistent(res, inst)
    assert res.info["methods"]["partial-integrality"].startswith("skipped: budget")
