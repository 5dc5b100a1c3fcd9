"""lpsched.solvers.solve: validation of the options shared by the solve functions."""

from __future__ import annotations

import numpy as np
import pytest

from lpsched.certify import best_bound, lp_bound, solve_exact, solve_lp
from lpsched.instance import Instance
from lpsched.solvers.options import AUTO_LP_MAX_NONZEROS, LP_MAX_NONZEROS, check_max_nonzeros

INST = Instance.from_arrays([9, 1, 3], [1, 7, 8], 22)


@pytest.mark.parametrize("bad", [0, -1, 2.0, 1e7, "1000", True, [1000]])
def test_max_nonzeros_rejects_all_but_positive_integers(bad):
    for call in (
        lambda: solve_exact(INST, max_nonzeros=bad, time_limit=5),
        lambda: solve_lp(INST, max_nonzeros=bad),
        lambda: lp_bound(INST, max_nonzeros=bad),
        lambda: best_bound(INST, max_nonzeros=bad),
    ):
        with pytest.raises(ValueError, match=r"^max_nonzeros must be a positive integer"):
            call()


def test_max_nonzeros_none_means_the_default():
    assert check_max_nonzeros(None) == LP_MAX_NONZEROS
    assert check_max_nonzeros(None, AUTO_LP_MAX_NONZEROS) == AUTO_LP_MAX_NONZEROS
    assert check_max_nonzeros(np.int32(7)) == 7 and type(check_max_nonzeros(np.int32(7))) is int
    default = solve_exact(INST, time_limit=5).objective
    assert solve_exact(INST, max_nonzeros=None, time_limit=5).objective == default
    assert best_bound(INST, max_nonzeros=None).bound > 0
