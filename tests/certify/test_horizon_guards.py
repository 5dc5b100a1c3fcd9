"""Issue 22, item 7: every method that keeps a row per round refuses a horizon above
``MAX_HORIZON`` before it allocates anything of that length (arrivals spread over millions of
rounds used to ask for gigabytes and run far past the time limit), and certify reports the
refusal as the method's failure while the others go on."""

from __future__ import annotations

import pytest

from lpsched import run_policy
from lpsched.certify import certify
from lpsched.certify.methods.colgen import colgen_lp_bound
from lpsched.certify.methods.cpsat_intervals import solve_cpsat_intervals
from lpsched.instance import Instance
from lpsched.solvers.options import MAX_HORIZON, check_horizon
from lpsched.solvers.result import LPTooLargeError

# two independent clusters of requests, MAX_HORIZON + 1 rounds apart
SPREAD = Instance.from_arrays(
    [5, 7, 4, 5, 7, 4],
    [3, 2, 4, 3, 2, 4],
    12,
    arrival=[0, 0, 0, 2 * MAX_HORIZON, 2 * MAX_HORIZON, 2 * MAX_HORIZON],
    name="spread",
)


def test_check_horizon_names_the_instance_and_the_limit():
    check_horizon(SPREAD, MAX_HORIZON)
    with pytest.raises(LPTooLargeError, match=r"spread: the model X needs horizon T = 1,000,001"):
        check_horizon(SPREAD, MAX_HORIZON + 1, "the model X")


def test_cpsat_intervals_refuses_a_horizon_above_the_limit():
    with pytest.raises(LPTooLargeError, match="CP-SAT interval model needs horizon"):
        solve_cpsat_intervals(SPREAD, run_policy(SPREAD, "fcfs"), time_limit=5)


def test_colgen_refuses_a_horizon_above_the_limit():
    with pytest.raises(LPTooLargeError, match="column generation's master needs horizon"):
        colgen_lp_bound(SPREAD, run_policy(SPREAD, "fcfs"), time_limit=5)


def test_colgen_refuses_long_decodes_that_need_a_long_horizon():
    # the case: three requests of 10^7 decode rounds (was 30 s and 6.9 GB at 5 s)
    inst = Instance.from_arrays([1, 1, 1], [10**7] * 3, 10**7 + 5)
    with pytest.raises(LPTooLargeError, match="MAX_HORIZON"):
        colgen_lp_bound(inst, run_policy(inst, "fcfs"), time_limit=5)


def test_certify_reports_the_refusals_and_keeps_a_valid_result():
    res = certify(SPREAD, time_limit=5, threads=1)
    assert res.bound <= res.objective
    assert res.schedule.tel == res.objective
    outcome = res.info["methods"]
    assert "MAX_HORIZON" in outcome["cpsat-intervals"]
    assert outcome["cpsat-intervals"].startswith("failed: spread: ")
    assert outcome["mip-overlap"].startswith("failed: spread: ")
