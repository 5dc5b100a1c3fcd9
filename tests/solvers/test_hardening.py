"""Hardening of the solvers: writes that fail loudly, options checked, Ctrl-C, epoch-second
arrivals, floating-point overflows of HiGHS repaired, and time limits that cover the build."""

from __future__ import annotations

import _thread
import itertools
import math
import os
import re
import threading
import time
from functools import partial

import highspy
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lpsched.bounds import combinatorial_bound
from lpsched.certify import (
    best_bound,
    driver,
    exact_horizon,
    export_model,
    lp_bound,
    solve_exact,
    solve_lp,
)
from lpsched.formulations.cuts import MemoryRows, overflow_cuts
from lpsched.formulations.time_indexed import time_indexed_matrix
from lpsched.generators.small import EXACT_WORKLOADS
from lpsched.instance import Instance
from lpsched.schedule import Schedule
from lpsched.solvers import solve as solve_module
from lpsched.solvers.backends import cpsat, highs
from lpsched.solvers.options import shift_arrivals
from lpsched.solvers.result import SolveStatus, exact_result, run_interruptible
from lpsched.solvers.solve import SOLVERS


def _small() -> Instance:
    return Instance.from_arrays([3, 2, 4], [2, 1, 3], 8, name="small")


def _hard(n: int = 30) -> Instance:
    """The scaled 80/20 mix, M = 50, seed 0: not proven optimal within a minute at n = 30."""
    return EXACT_WORKLOADS["scaled-mix"](n, 0, 50)


# --------------------------------------------------------------------------- 1. export writes


@pytest.mark.parametrize("backend", ["highs", "pyomo"])
@pytest.mark.parametrize("fmt", ["lp", "mps"])
def test_export_to_a_missing_folder_raises_naming_the_path(tmp_path, backend, fmt):
    target = tmp_path / "no" / "such" / f"m.{fmt}"
    with pytest.raises(OSError, match=str(target)):
        export_model(_small(), target, fmt, backend=backend)
    assert not target.parent.exists()


@pytest.mark.skipif(not __import__("os").path.isdir("/proc/self"), reason="needs Linux /proc")
@pytest.mark.parametrize("backend", ["highs", "pyomo"])
def test_export_to_an_unwritable_folder_raises(backend):
    for fmt in ("lp", "mps"):
        with pytest.raises(OSError, match=f"/proc/m.{fmt}"):
            export_model(_small(), f"/proc/m.{fmt}", fmt, backend=backend)


@pytest.mark.parametrize("backend", ["highs", "pyomo"])
def test_failed_export_leaves_no_file_and_no_temporary(tmp_path, backend):
    target = tmp_path / "taken"
    target.mkdir()  # a folder where the file should go: the final rename fails
    with pytest.raises(OSError, match=str(target)):
        export_model(_small(), target, "lp", backend=backend)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]
    assert list(target.iterdir()) == []


@pytest.mark.parametrize("written", [False, True])
def test_highs_write_status_is_checked(tmp_path, monkeypatch, written):
    """HiGHS reporting an error (or success without a file) is an OSError, and nothing stays."""

    def fake_write(self, path):
        if written:
            open(path, "w").write("half a model")
            return highspy.HighsStatus.kError
        return highspy.HighsStatus.kOk

    monkeypatch.setattr(highspy.Highs, "writeModel", fake_write)
    target = tmp_path / "m.lp"
    with pytest.raises(OSError, match=str(target)):
        export_model(_small(), target, "lp", backend="highs")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("backend", ["highs", "pyomo"])
def test_export_replaces_an_existing_file_whole(tmp_path, backend):
    target = tmp_path / "m.mps"
    target.write_text("old")
    export_model(_small(), target, "mps", backend=backend)
    assert target.read_text() != "old" and "ROWS" in target.read_text()
    assert [p.name for p in tmp_path.iterdir()] == ["m.mps"]


# --------------------------------------------------------------------------- 2. options


BAD_TIME_LIMITS = [-1.0, 0, 0.0, math.nan, math.inf, -math.inf, "5", True]


@pytest.mark.parametrize("value", BAD_TIME_LIMITS, ids=repr)
@pytest.mark.parametrize(
    "call",
    [
        partial(solve_exact, solver="highs"),
        partial(solve_exact, solver="cpsat"),
        partial(solve_exact, backend="pyomo"),
        lambda inst, time_limit: solve_lp(inst, time_limit=time_limit),
        lambda inst, time_limit: lp_bound(inst, time_limit=time_limit),
        lambda inst, time_limit: lp_bound(inst, backend="pyomo", time_limit=time_limit),
        lambda inst, time_limit: best_bound(inst, time_limit),
        lambda inst, time_limit: best_bound(inst, time_limit, method="lp"),
    ],
    ids=["highs", "cpsat", "pyomo", "solve_lp", "lp_bound", "lp_bound-pyomo", "auto", "lp"],
)
def test_time_limit_out_of_range_is_refused(call, value):
    with pytest.raises(ValueError, match=r"time_limit must be None .* > 0"):
        call(_small(), time_limit=value)


@pytest.mark.parametrize("solver", ["highs", "cpsat"])
def test_mip_gap_and_threads_out_of_range_are_refused(solver):
    inst = _small()
    for gap in (-0.1, 1.5, math.nan, math.inf, "0"):
        with pytest.raises(ValueError, match=r"mip_gap must be a finite number in \[0, 1\]"):
            solve_exact(inst, solver=solver, mip_gap=gap)
    from lpsched.solvers.options import MAX_THREADS

    assert MAX_THREADS == max(8, 4 * (os.cpu_count() or 1))
    for threads in (0, -1, 1.5, True, "2", MAX_THREADS + 1, 4096):
        with pytest.raises(
            ValueError, match=f"threads must be None .* an integer from 1 to {MAX_THREADS:,}"
        ):
            solve_exact(inst, solver=solver, threads=threads)


def test_valid_limits_still_solve():
    inst = _small()
    for kwargs in ({"time_limit": None}, {"time_limit": 5}, {"mip_gap": 1}, {"threads": 1}):
        assert solve_exact(inst, **kwargs).status is SolveStatus.OPTIMAL
    assert best_bound(inst, None).bound > 0


@pytest.mark.parametrize("kwargs", [{"mip_gap": math.nan}, {"threads": -3}])
def test_cpsat_model_invalid_is_an_error_not_the_heuristic(kwargs):
    """CP-SAT answers MODEL_INVALID to invalid parameters: that must be status error, even
    though the heuristic schedule would make a feasible-looking result."""
    inst = _hard(12)
    hz = exact_horizon(inst, local_search=0)
    mat = time_indexed_matrix(inst, hz, aggregate=True)
    answer = cpsat.solve_mip(mat, start=mat.values_from_starts(hz.schedule.start), **kwargs)
    assert answer.error is not None and "MODEL_INVALID" in answer.error
    res = exact_result(
        inst,
        answer,
        solver="cpsat",
        hz=hz,
        warm_start=True,
        t0=time.perf_counter(),
        build_s=0.0,
        solve_s=0.0,
        info={},
    )
    assert res.status is SolveStatus.ERROR and "MODEL_INVALID" in res.info["error"]


# --------------------------------------------------------------------------- 3. Ctrl-C


def _interrupt_after(seconds: float) -> threading.Timer:
    """A Ctrl-C in ``seconds``; ``timer.fired`` is the ``time.perf_counter()`` at which it came
    (None before), so that a test measures the time to stop from the Ctrl-C itself."""

    def fire() -> None:
        timer.fired = time.perf_counter()
        _thread.interrupt_main()

    timer = threading.Timer(seconds, fire)
    timer.fired = None
    timer.start()
    return timer


@pytest.mark.slow
@pytest.mark.parametrize(
    "kwargs",
    [{"solver": "highs"}, {"solver": "cpsat"}, {"backend": "pyomo"}],
    ids=["highs", "cpsat", "pyomo"],
)
def test_ctrl_c_stops_the_solver_and_keeps_the_best_so_far(kwargs):
    inst = _hard()
    timer = _interrupt_after(3.0)
    try:
        res = solve_exact(inst, time_limit=60, **kwargs)
    finally:
        timer.cancel()
    elapsed = time.perf_counter() - timer.fired
    assert res.status is SolveStatus.INTERRUPTED and res.to_dict()["status"] == "interrupted"
    assert res.schedule is not None and res.schedule.check().tel == res.objective
    assert combinatorial_bound(inst) <= res.bound <= res.objective
    assert elapsed < 30, elapsed  # a hang guard, below the 60 s limit
    # the process is usable afterwards: the next solve runs normally
    assert solve_exact(_small(), **kwargs).status is SolveStatus.OPTIMAL


def test_ctrl_c_in_the_local_search_keeps_the_list_schedule(monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(driver, "improve_schedule", interrupted)
    inst = _hard(12)
    res = solve_exact(inst)
    assert res.status is SolveStatus.INTERRUPTED and res.info["incumbent"] == "heuristic"
    assert res.schedule.check().tel == res.objective == driver.best_heuristic(inst).tel


def test_ctrl_c_in_the_list_policies_reports_no_schedule(monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(driver, "best_heuristic", interrupted)
    inst = _hard(12)
    res = solve_exact(inst)
    assert (res.status, res.objective, res.schedule) == (SolveStatus.INTERRUPTED, None, None)
    assert res.bound == combinatorial_bound(inst) and res.to_dict()["status"] == "interrupted"


def test_ctrl_c_in_the_build_keeps_the_heuristic(monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(solve_module, "time_indexed_matrix", interrupted)
    res = solve_exact(_hard(12))
    assert res.status is SolveStatus.INTERRUPTED
    assert res.schedule.check().tel == res.objective


def test_ctrl_c_stops_the_lp(monkeypatch):
    inst = _hard(200)  # its LP takes about 10 s
    timers, models, build = [], [], highs.build_highs

    def keep(*args, **kwargs):
        models.append(build(*args, **kwargs))
        return models[-1]

    def run_then_interrupt(*args, **kwargs):  # a Ctrl-C 0.5 s into HiGHS' run of the LP
        timers.append(_interrupt_after(0.5))
        return run_interruptible(*args, **kwargs)

    monkeypatch.setattr(highs, "build_highs", keep)
    monkeypatch.setattr(highs, "run_interruptible", run_then_interrupt)
    try:
        with pytest.raises(KeyboardInterrupt):
            solve_lp(inst)
    finally:
        for timer in timers:
            timer.cancel()
    assert len(timers) == 1 and timers[0].fired is not None
    # HiGHS itself stopped (not an LP solved to its end before the KeyboardInterrupt)
    assert len(models) == 1
    assert models[0].getModelStatus() == highspy.HighsModelStatus.kInterrupt
    assert time.perf_counter() - timers[0].fired < 30  # a hang guard (the LP takes ~10 s)


# --------------------------------------------------------------------------- 7. epoch arrivals

EPOCH = 1_700_000_000


def _epoch_pair() -> tuple[Instance, Instance]:
    base = Instance.from_arrays([3, 5, 12, 4], [4, 2, 3, 5], 20, [0, 1, 2, 2], name="epoch")
    return base.replace(arrival=base.arrival + EPOCH), base


@pytest.mark.parametrize("solver", ["highs", "cpsat"])
def test_epoch_arrivals_solve_as_the_shifted_instance(solver):
    late, base = _epoch_pair()
    # equal horizons: both local searches (4 requests) end by their patience of 200 moves in
    # about 0.03 s, never by their 5 s clock
    res, ref = solve_exact(late, solver=solver), solve_exact(base, solver=solver)
    assert res.status is SolveStatus.OPTIMAL and res.objective == ref.objective
    assert res.bound == ref.bound and res.horizon == ref.horizon
    assert res.schedule.instance is late and res.schedule.check().tel == res.objective
    assert (res.schedule.start >= late.arrival).all() and res.info["time_shift"] == EPOCH
    np.testing.assert_array_equal(res.schedule.start - EPOCH, ref.schedule.start)


def test_epoch_arrivals_with_the_pyomo_backend():
    late, base = _epoch_pair()
    res = solve_exact(late, backend="pyomo")
    assert (res.status, res.objective) == (SolveStatus.OPTIMAL, solve_exact(base).objective)
    res.schedule.check()


def test_epoch_arrivals_bounds():
    late, base = _epoch_pair()
    assert shift_arrivals(late)[1] == EPOCH and shift_arrivals(base) == (base, 0)
    assert combinatorial_bound(late) == combinatorial_bound(base)
    assert lp_bound(late).bound == pytest.approx(lp_bound(base).bound)
    assert lp_bound(late, backend="pyomo").bound == pytest.approx(lp_bound(base).bound)
    auto = best_bound(late)
    assert auto.method == "lp" and auto.bound == pytest.approx(best_bound(base).bound)
    sol, ref = solve_lp(late), solve_lp(base)
    assert sol.shift == EPOCH and sol.value == pytest.approx(ref.value)
    np.testing.assert_allclose(sol.fractional_completion(), ref.fractional_completion() + EPOCH)


@pytest.mark.parametrize("backend", ["highs", "pyomo"])
def test_epoch_arrivals_export(tmp_path, backend):
    late, base = _epoch_pair()
    values = []
    for inst in (late, base):
        path = export_model(inst, tmp_path / f"{inst.arrival.min()}.lp", backend=backend)
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.readModel(str(path))
        h.run()
        values.append(h.getInfo().objective_function_value)
    assert values[0] == pytest.approx(values[1]) == solve_exact(base).objective


def test_far_apart_arrivals_are_still_refused():
    """The shift removes the common offset, not the span: arrivals 10^9 rounds apart still
    need a horizon of 10^9 rounds."""
    inst = Instance.from_arrays([3, 3], [4, 4], 20, [EPOCH, EPOCH + 10**9])
    with pytest.raises(ValueError, match="horizon"):
        solve_exact(inst)


# --------------------------------------------------------------------------- 8. HiGHS numerics

M_HUGE = 2 * 10**10


def _overflow_instance() -> Instance:
    """Prefill near 1e10 and M = 2e10: HiGHS' warm-started run accepted a schedule holding
    M + 1 tokens in round 6 (its feasibility tolerance is relative); the optimum is 20."""
    return Instance.from_arrays(
        [10**10, 10**10 - 5, 10**10 - 5, 10**10 - 7], [7, 2, 2, 4], M_HUGE, name="overflow"
    )


def test_highs_overflow_is_repaired_to_the_optimum():
    inst = _overflow_instance()
    res = solve_exact(inst)
    assert (res.status, res.objective, res.bound) == (SolveStatus.OPTIMAL, 20, 20.0)
    assert res.schedule.check().peak_memory <= M_HUGE
    retry = res.info["retry"]
    assert retry["resolves"] >= 1 and retry["cuts"] >= 1 and "overflow" in retry["reason"]
    assert solve_exact(inst, warm_start=False).objective == 20
    assert solve_exact(inst, solver="cpsat").objective == 20


def test_highs_overflow_with_a_class_of_identical_requests():
    """Two identical requests (one aggregated column class) in an overflowing round: the
    repair falls back to the binary model; CP-SAT's optimum is 45."""
    inst = Instance.from_arrays(
        [10**10 - 2, 10**10, 10**10 - 2, 10**10 - 7], [7, 4, 7, 7], M_HUGE, name="class"
    )
    res = solve_exact(inst)
    assert (res.status, res.objective) == (SolveStatus.OPTIMAL, 45)
    assert res.info["retry"]["aggregate"] is False
    assert solve_exact(inst, solver="cpsat").objective == 45


def test_without_repair_the_overflow_is_an_error(monkeypatch):
    monkeypatch.setitem(SOLVERS, "highs", partial(highs.solve_mip, repair_rounds=0))
    res = solve_exact(_overflow_instance())
    assert res.status is SolveStatus.ERROR and "more than M" in res.info["error"]


def _schedules(inst: Instance, T: int):
    """Every feasible start vector of ``inst`` within horizon ``T`` (brute force)."""
    ranges = [range(int(a), T - int(o) + 1) for a, o in zip(inst.arrival, inst.decode, strict=True)]
    for start in itertools.product(*ranges):
        if Schedule(inst, np.array(start)).feasible:
            yield np.array(start)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(st.integers(0, 9), st.integers(1, 3)), min_size=2, max_size=4),
    st.integers(8, 14),
    st.booleans(),
    st.data(),
)
def test_overflow_cuts_are_valid_and_cut_the_point_off(reqs, memory, aggregate, data):
    s = [min(a, memory - o) for a, o in reqs]
    inst = Instance.from_arrays(s, [o for _, o in reqs], memory)
    T = int(inst.decode.sum()) + 1
    mat = time_indexed_matrix(inst, T, aggregate=aggregate)
    rows = MemoryRows(mat)
    start = np.array([data.draw(st.integers(0, T - int(o))) for o in inst.decode])
    cuts = overflow_cuts(rows, start)
    if Schedule(inst, start).feasible:
        assert cuts == []
        return
    point = mat.values_from_starts(start)
    for cols, rhs in cuts:
        assert point[cols].sum() > rhs  # the point is cut off
    for good in _schedules(inst, T):  # and no schedule is
        x = mat.values_from_starts(good)
        for cols, rhs in cuts:
            assert x[cols].sum() <= rhs


# --------------------------------------------------------------------------- 12. build in limit


def test_cpsat_time_limit_covers_the_build(monkeypatch):
    """CP-SAT gets what the list policies and both builds (the matrix, the CP-SAT model, about
    1 s here) left of the limit. A limit of 20 s is never used up by the build, at any speed;
    the spy records CP-SAT's limit and gives it 0.5 s of it, so the test stays short."""
    inst = _hard(150)  # ~80k columns, ~600k non-zeros
    given, configure = [], cpsat.configure_solver

    def spy(solver, *, remaining, **kwargs):
        given.append(remaining)
        configure(solver, remaining=min(remaining, 0.5), **kwargs)

    monkeypatch.setattr(cpsat, "configure_solver", spy)
    limit = 20.0
    t0 = time.perf_counter()
    res = solve_exact(inst, solver="cpsat", time_limit=limit, local_search=0)
    assert res.status is SolveStatus.TIME_LIMIT and res.schedule.check().tel == res.objective
    assert res.info["solver_status"] in ("UNKNOWN", "FEASIBLE")  # CP-SAT ran, after the build
    assert len(given) == 1 and res.build_s > 0
    assert 0 < given[0] <= limit - res.build_s + 1e-3, (given, res.build_s)
    assert time.perf_counter() - t0 < limit + 30  # a hang guard


def test_cpsat_build_stops_at_its_deadline():
    inst = _hard(150)
    hz = exact_horizon(inst)
    mat = time_indexed_matrix(inst, hz, aggregate=True)
    with pytest.raises(cpsat.BuildTimeout, match="by the deadline"):
        cpsat.build_cpsat(mat, deadline=time.perf_counter())
    answer = cpsat.solve_mip(mat, time_limit=0.01)
    assert answer.limit_reached and answer.start is None and answer.error is None
    assert "time limit" in answer.status_text
    # stopped part way: 82,654 variables take far more than 0.01 s to write at any speed
    built = re.search(r"([\d,]+) of ([\d,]+) variables by the deadline", answer.status_text)
    assert built is not None, answer.status_text
    done, total = (int(x.replace(",", "")) for x in built.groups())
    assert done < total == mat.ncol


@pytest.mark.parametrize("solver", ["highs", "cpsat"])
def test_a_limit_used_up_by_the_heuristic_ends_with_the_heuristic(solver):
    inst = _hard(150)
    res = solve_exact(inst, solver=solver, time_limit=0.05)
    assert res.status is SolveStatus.TIME_LIMIT and res.info["incumbent"] == "heuristic"
    assert res.schedule.check().tel == res.objective
    # no solver search: the limit is gone before the build, during it or before the run
    # (which, depends on the speed: warm kernels give the list policies in under 0.05 s)
    assert res.info["solver_status"].startswith("time limit reached"), res.info
    assert res.runtime_s < 0.05 + 30  # a hang guard
