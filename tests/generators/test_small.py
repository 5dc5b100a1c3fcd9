"""Small random instances for exact studies (lpsched.generators.small)."""

from __future__ import annotations

import pytest

from lpsched.generators.small import RATIO_WORKLOADS, small_instance


@pytest.mark.parametrize("workload", RATIO_WORKLOADS)
@pytest.mark.parametrize("memory", [8, 16, 40])
def test_small_instances(workload, memory):
    a = small_instance(workload, 7, memory, seed=3)
    b = small_instance(workload, 7, memory, seed=3)
    assert a.n == 7 and a.memory == memory and a.offline
    assert (a.prefill + a.decode <= memory).all() and (a.decode >= 1).all()
    assert (a.prefill >= 0).all()
    assert a.prefill.tolist() == b.prefill.tolist() and a.decode.tolist() == b.decode.tolist()
    assert a.metadata["workload"] == workload


def test_small_instance_shapes_of_workloads():
    hp = small_instance("heavy-prefill", 50, 32, seed=0)
    hd = small_instance("heavy-decode", 50, 32, seed=0)
    assert hp.prefill.mean() > 4 * hp.decode.mean()
    assert hd.decode.mean() > 4 * hd.prefill.mean()
    assert (hd.decode >= 8).all() and (hp.decode <= 4).all()


@pytest.mark.parametrize(
    "bad",
    [
        dict(workload="nope", n=3, memory=10),
        dict(workload="uniform", n=0, memory=10),
        dict(workload="mix", n=3, memory=1),
    ],
)
def test_small_instance_errors(bad):
    with pytest.raises(ValueError):
        small_instance(**bad)
