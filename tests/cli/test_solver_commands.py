"""``lpsched exact``, ``bound`` and ``export``: JSON keys, guards, failed writes, status error,
epoch arrivals."""

from __future__ import annotations

import json

import numpy as np
from click.testing import CliRunner
from reference.shipped import DEFAULT_FILE, MIX10

from lpsched.cli import main
from lpsched.io import read_instance, read_schedule

EXACT = MIX10


def invoke(*args):
    return CliRunner().invoke(main, list(args))


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


def test_exact_and_export_refuse_models_too_large_to_build(tmp_path):
    for args in (
        ["exact", str(DEFAULT_FILE)],
        ["export", str(DEFAULT_FILE), "-o", str(tmp_path / "m.lp")],
    ):
        r = invoke(*args)
        assert r.exit_code == 1 and "non-zeros" in r.stderr, args
    assert not (tmp_path / "m.lp").exists()


def test_exact_with_another_thread_count_in_the_same_process():
    # HiGHS sizes its thread pool at the first solve; a later solve with another size must
    # still be proven optimal, not silently fall back to the heuristic
    for threads in (None, 1, 2):
        from lpsched.certify import solve_exact
        from lpsched.solvers.result import SolveStatus

        res = solve_exact(read_instance(EXACT), threads=threads)
        assert (res.status, res.objective) == (SolveStatus.OPTIMAL, 74)


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


def test_exact_stopped_by_a_limit_names_certify_and_its_gap(monkeypatch):
    """A MIP stopped by a limit before a proof (here a back end that reports a limit stop with
    a dual bound 3 below the solver's): the text ends with the gap and ``lpsched certify``; the
    JSON keeps its keys."""
    from dataclasses import replace

    from lpsched.solvers.backends import highs
    from lpsched.solvers.solve import SOLVERS

    def stopped(mat, **options):
        answer = highs.solve_mip(mat, **options)
        return replace(answer, dual=answer.dual - 3, limit_reached=True, status_text="limit")

    r = invoke("exact", str(EXACT))
    assert r.exit_code == 0 and "optimal" in r.stdout and "lpsched certify" not in r.stdout
    monkeypatch.setitem(SOLVERS, "highs", stopped)
    r = invoke("exact", str(EXACT), "--time-limit", "30")
    assert r.exit_code == 0, r.output
    assert "status      time-limit" in r.stdout
    gap = next(line for line in r.stdout.splitlines() if line.startswith("bound ")).split()[-1]
    assert gap.endswith("%") and gap != "0.00%"
    last = r.stdout.strip().splitlines()[-1]
    assert last.startswith(f"not proven optimal within 30 s (gap {gap} reached)")
    assert f"lpsched certify {EXACT} --time-limit 30" in last
    r = invoke("exact", str(EXACT), "--json")
    data = json.loads(r.stdout)
    assert data["status"] == "time-limit" and "certify" not in r.stdout
    assert set(data) == {"status", "objective", "bound", "gap", "runtime_s", "horizon", "solver"}
