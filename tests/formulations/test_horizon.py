"""The horizon T = min(T1, T2) and the start windows (lpsched.formulations.horizon), checked
through the exact solver that relies on them."""

from __future__ import annotations

import pytest
from reference.brute_force import REFERENCE, ref_instance

from lpsched.certify import exact_horizon, lp_bound, solve_exact
from lpsched.formulations import (
    HorizonError,
    build_model,
    horizon_t1,
    horizon_t2,
    min_horizon,
    start_windows,
)
from lpsched.instance import Instance
from lpsched.solvers.result import SolveStatus


def test_horizon_values_and_refusals():
    inst = Instance.from_arrays([3, 2, 0], [2, 1, 4], 6, [0, 3, 1])
    assert horizon_t1(inst) == 3 + 7
    assert min_horizon(inst) == 5  # a + o = 2, 4, 5
    assert horizon_t2(inst, 12) == 12 - 7 + 5
    hz = exact_horizon(inst)
    assert hz.T == min(hz.T1, hz.T2) and hz.upper_bound == hz.schedule.tel
    assert hz.slack == hz.upper_bound - 7
    lo, hi = start_windows(inst, hz.T, hz.slack)
    assert lo.tolist() == [0, 3, 1] and (hi <= lo + hz.slack).all()
    with pytest.raises(HorizonError, match="too short to hold any schedule"):
        solve_exact(inst, horizon=4)
    with pytest.raises(ValueError):  # HorizonError is a ValueError
        lp_bound(inst, horizon=4)
    with pytest.raises(HorizonError):
        build_model(inst, 4)


def test_horizon_below_min_t1_t2_refused_and_larger_accepted():
    inst = ref_instance(REFERENCE[12])  # ref12: optimum 70, T1 = 32
    hz = exact_horizon(inst)
    if hz.T > min_horizon(inst):
        with pytest.raises(HorizonError, match="not proven"):
            solve_exact(inst, horizon=hz.T - 1)
    res = solve_exact(inst, horizon=hz.T1 + 7, windows=False)
    assert (res.status, res.objective, res.horizon) == (SolveStatus.OPTIMAL, 70, hz.T1 + 7)
