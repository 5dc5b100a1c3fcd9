"""``online-load`` in seconds (``time_model=``): its own CSV with the model in the parameters,
the load measured in seconds, resumable; the round study is untouched (its rows are pinned by
test_recorded.py)."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from lpsched.generators.arrivals import nominal_capacity, seconds_capacity
from lpsched.generators.workloads import generate
from lpsched.research.reproductions import online_load
from lpsched.timing import time_model

LINEAR = "linear:base_s=0.05,prefill_token_s=1e-3,kv_token_s=1e-6"


def _rows(path):
    with path.open() as fh:
        return list(csv.DictReader(fh))


def test_seconds_rows_parameters_and_resume(tmp_path):
    opts = dict(n=80, seeds=(0, 1), loads=(0.5, 1.5), trace_dir=None, workers=1, progress=False)
    text = online_load.run(tmp_path, time_model=LINEAR, **opts)
    assert "latencies in seconds from arrival" in text and "What the rounds cost" in text
    rows = _rows(tmp_path / "online-load-seconds.csv")
    assert len(rows) == 2 * 2 * 3
    assert not (tmp_path / "online-load.csv").exists()
    assert (tmp_path / "online-load-seconds-poisson.png").exists()
    model = time_model("linear", base_s=0.05, prefill_token_s=1e-3, kv_token_s=1e-6)
    for r in rows:
        params = json.loads(r["params"])
        assert params["time_model"] == model.to_dict()
        assert 0 < float(r["p50_latency_s"]) <= float(r["p99_latency_s"])
    # the load is in seconds: rate = rho * nominal capacity / saturated round
    base = generate("paper-mix", 80, 16492, seed=1)
    cap_s, d_bar = seconds_capacity(base, model)
    one = next(r for r in rows if r["seed"] == "1" and r["load"] == "1.5")
    assert float(one["rate_s"]) == pytest.approx(1.5 * cap_s, rel=1e-5)
    assert float(one["round_ms"]) == pytest.approx(1000 * d_bar, rel=1e-5)
    before = (tmp_path / "online-load-seconds.csv").read_text()
    online_load.run(tmp_path, time_model=LINEAR, **opts)  # resumed: nothing recomputed
    assert (tmp_path / "online-load-seconds.csv").read_text() == before


def test_seconds_capacity_under_unit_is_the_round_capacity():
    inst = generate("conversation", 120, 16492, seed=2)
    cap_s, d_bar = seconds_capacity(inst, "unit")
    assert d_bar == 1.0
    assert cap_s == nominal_capacity(inst.prefill, inst.decode, 16492)


def test_seconds_arrivals_are_the_round_draws_unrounded():
    rounds = generate("conversation", 50, 16492, seed=4, arrival_rate=0.2)
    secs = generate("conversation", 50, 16492, seed=4, arrival_rate_s=0.2)
    assert np.array_equal(np.floor(secs.arrival_s).astype(np.int64), rounds.arrival)
    assert secs.arrival.tolist() == [0] * 50
    with pytest.raises(ValueError, match="not both"):
        generate("conversation", 5, 16492, arrival_rate=0.2, arrival_rate_s=0.2)
