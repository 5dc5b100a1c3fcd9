"""The adversarial search and the catalogue of shipped adversarial instances."""

from __future__ import annotations

import pytest
from reference.shipped import ADVERSARIAL

from lpsched.certify import solve_exact
from lpsched.io import read_instance
from lpsched.policies.registry import run_policy
from lpsched.research.adversarial import (
    adversarial_search,
    catalogue_rows,
    save_adversarial,
)


def test_adversarial_search_small():
    res = adversarial_search(n=4, memory=10, steps=15, restarts=2, seed=1)
    assert res.ratio >= 1 and res.evaluations == 2 * 16
    assert all(b >= a for a, b in zip(res.history[:-1], res.history[1:], strict=True))
    md = res.instance.metadata
    assert (
        md["ratio"] == res.ratio
        and md["opt"] == res.opt
        and "adversarial_search(" in md["found_by"]
    )
    # the ratio is reproducible from the instance alone
    assert run_policy(res.instance, "sorted-f").tel == res.tel
    assert solve_exact(res.instance).objective == res.opt
    again = adversarial_search(n=4, memory=10, steps=15, restarts=2, seed=1)
    assert (
        again.ratio == res.ratio
        and again.instance.prefill.tolist() == res.instance.prefill.tolist()
    )


def test_adversarial_search_errors():
    with pytest.raises(KeyError, match="unknown policy"):
        adversarial_search("nope", steps=1)
    with pytest.raises(ValueError):
        adversarial_search(restarts=0)


def test_save_and_catalogue(tmp_path):
    res = adversarial_search(n=3, memory=8, steps=5, restarts=1, seed=0)
    path = save_adversarial(res, tmp_path, name="x")
    assert read_instance(path).metadata["opt"] == res.opt
    rows = catalogue_rows(tmp_path)
    assert rows[0]["name"] == "x" and rows[0]["best known TEL"] == res.opt
    assert rows[0]["proven optimal"] == "yes"


def test_shipped_adversarial_instances_reproduce():
    files = sorted(ADVERSARIAL.glob("*.json"))
    assert files
    for f in files:
        inst = read_instance(f)
        md = inst.metadata
        tel = run_policy(inst, md["policy"]).check().tel
        assert tel == md["tel"]
        res = solve_exact(inst, time_limit=30)
        assert res.objective == md["opt"]
        assert md["ratio"] == pytest.approx(tel / md["opt"])
        assert (str(res.status) == "optimal") == md["optimal"]
