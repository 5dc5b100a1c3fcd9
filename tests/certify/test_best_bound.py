"""best_bound: the LP relaxation when affordable, else the combinatorial bound, saying which."""

from __future__ import annotations

import numpy as np
import pytest

from lpsched.bounds import combinatorial_bound
from lpsched.certify import best_bound, lp_bound
from lpsched.instance import Instance


def test_best_bound_uses_lp_when_small():
    inst = Instance.from_arrays([9, 1, 3, 3, 1, 0], [1, 7, 8, 5, 4, 8], 22)
    b = best_bound(inst, time_limit=30)
    assert b.method == "lp" and b.horizon is not None
    assert b.bound == pytest.approx(lp_bound(inst).bound)
    assert "LP solved" in b.info["reason"] and b.info["combinatorial"] <= b.bound
    assert best_bound(inst, method="combinatorial").method == "combinatorial"
    assert best_bound(inst, method="trivial").bound == 33
    with pytest.raises(ValueError, match="unknown bound method"):
        best_bound(inst, method="magic")


def test_best_bound_falls_back_on_large_instances():
    rng = np.random.default_rng(0)
    n, memory = 2000, 16492
    o = rng.integers(1, 600, n)
    s = rng.integers(0, 2000, n)
    inst = Instance.from_arrays(s, o, memory)
    b = best_bound(inst, time_limit=5)
    assert b.method == "combinatorial" and "LP too large" in b.info["reason"]
    assert b.bound == combinatorial_bound(inst) >= o.sum()
    assert b.runtime_s < 5 + 30  # a hang guard (no LP is built or solved)
