"""Prediction-interval generators (SPEC section 6): containment, hand cases, capping."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import instances
from hypothesis import given, settings
from hypothesis import strategies as st

from lpsched.generators.intervals import binned, exact, multiplicative, no_information
from lpsched.instance import Instance, InstanceError


def _inst(prefill, decode, memory):
    return Instance.from_arrays(prefill, decode, memory)


def test_exact_is_the_truth():
    inst = exact(_inst([0, 3], [4, 2], 10))
    assert inst.decode_lo.tolist() == [4, 2] and inst.decode_hi.tolist() == [4, 2]
    assert inst.metadata["intervals"]["kind"] == "exact"


def test_multiplicative_centered_hand_case_and_cap():
    # o = 10, eps = 1, centred: [floor(10/2), ceil(10*2)] = [5, 20]; M - s = 15 caps u to 15.
    # o = 3: [floor(1.5), 6] = [1, 6] (M - s = 17, no cap).
    inst = _inst([5, 3], [10, 3], 20)
    out = multiplicative(inst, 1.0, centered=True)
    assert out.decode_lo.tolist() == [5, 1]
    assert out.decode_hi.tolist() == [15, 6]
    assert out.metadata["intervals"]["capped"] == 1
    with pytest.raises(InstanceError, match="r0.*decode_hi"):
        multiplicative(inst, 1.0, centered=True, cap=False)


def test_multiplicative_zero_eps_is_exact():
    inst = _inst([1, 2, 3], [5, 7, 1], 20)
    out = multiplicative(inst, 0.0, seed=3)
    assert out.decode_lo.tolist() == [5, 7, 1] and out.decode_hi.tolist() == [5, 7, 1]


def test_multiplicative_rejects_negative_eps():
    with pytest.raises(ValueError):
        multiplicative(_inst([0], [1], 5), -0.1)


@settings(max_examples=150, deadline=None)
@given(instances(arrivals=False), st.floats(0, 5), st.integers(0, 10))
def test_multiplicative_contains_o_and_respects_memory(inst, eps, seed):
    out = multiplicative(inst, eps, seed=seed)
    lo, hi, o = out.decode_lo, out.decode_hi, out.decode
    assert np.all(lo >= 1) and np.all(lo <= o) and np.all(o <= hi)
    assert np.all(out.prefill + hi <= out.memory)
    # width before capping is about o_hat ((1+eps) - 1/(1+eps)): never below the rounding slack
    assert np.all(hi - lo <= np.ceil(o * (1 + eps) ** 2) + 1)


def test_binned_hand_case():
    # edges 1, 2, 4, 8: o = 5 -> [4, 7]; o = 1 -> [1, 1]; o = 9 -> [8, M - s = 11]
    inst = _inst([0, 0, 1], [5, 1, 9], 12)
    out = binned(inst, [1, 2, 4, 8])
    assert out.decode_lo.tolist() == [4, 1, 8]
    assert out.decode_hi.tolist() == [7, 1, 11]
    assert out.metadata["intervals"]["capped"] == 1
    with pytest.raises(InstanceError):
        binned(inst, [1, 2, 4, 8], cap=False)


@pytest.mark.parametrize("edges", [[2, 4], [1, 1, 3], []])
def test_binned_rejects_bad_edges(edges):
    with pytest.raises(ValueError):
        binned(_inst([0], [3], 5), edges)


def test_no_information_hand_case():
    # U = max o = 6; u_i = min(6, M - s_i): M - s = [10, 4 + ... ]
    inst = _inst([0, 6, 2], [6, 4, 1], 10)
    out = no_information(inst)
    assert out.decode_lo.tolist() == [1, 1, 1]
    assert out.decode_hi.tolist() == [6, 4, 6]
    assert out.metadata["intervals"]["capped"] == 1
    with pytest.raises(ValueError):
        no_information(inst, upper=5)
