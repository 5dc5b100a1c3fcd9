"""Rows read back that contradict themselves, their siblings or their instance are refused in
every sweep; a plug-in's source is part of the rows' provenance; the worker count is capped."""

from __future__ import annotations

import csv
import importlib
import math
import sys

import numpy as np
import pytest

from lpsched.policies import registry
from lpsched.sweeps.engine import Sweep, Task, run_sweep
from lpsched.sweeps.provenance import provenance
from lpsched.timing.registry import TIME_MODELS, register_time_model

FIELDS = ["x", "p", "y", "z"]


def rows_of(params, missing):
    for key in missing:
        yield {**key, "y": params["x"] + 1, "z": 2.5}


def _file(path):
    with path.open() as fh:
        return list(csv.DictReader(fh))


def _edit(path, line, old, new):
    """Replace ``old`` in line ``line`` (0: the header), or in the line that starts with
    ``line`` (a row's key)."""
    lines = path.read_text().splitlines(keepends=True)
    if isinstance(line, str):
        line = next(i for i, text in enumerate(lines) if text.startswith(line))
    assert old in lines[line]
    lines[line] = lines[line].replace(old, new, 1)
    path.write_text("".join(lines))


def _tasks():
    return [Task({"x": i}, ({"p": "a"}, {"p": "b"})) for i in range(2)]


@pytest.mark.parametrize("cell", ["inf", "-inf", "1e999", "nan", "Infinity"])
def test_a_non_finite_number_in_an_untyped_column_is_rejected(tmp_path, cell):
    """The engine's own check, for every sweep (here ``z`` has no parser)."""
    sweep = Sweep("r", FIELDS, ["x", "p"], _tasks(), rows_of, types={"y": int})
    run_sweep(sweep, tmp_path, progress=False)
    _edit(tmp_path / "r.csv", 1, ",2.5,", f",{cell},")
    messages = []
    rows = run_sweep(sweep, tmp_path, progress=False, report=messages.append)
    assert any("line 2: field 'z' is not a finite number" in m for m in messages)
    assert [r["z"] for r in rows] == ["2.5"] * 4


def test_rows_that_contradict_their_siblings_or_their_order_are_recomputed(tmp_path):
    from lpsched.sweeps.checks import RowRules

    rules = RowRules(order=[("y", "z")], shared=["z"], expect=lambda v: {"y": int(v["x"]) + 1})

    def compute(params, missing):
        for key in missing:
            yield {**key, "y": params["x"] + 1, "z": 47.9}

    sweep = Sweep("r", FIELDS, ["x", "p"], _tasks(), compute, types={"y": int}, rules=rules)
    run_sweep(sweep, tmp_path, progress=False)
    path = tmp_path / "r.csv"
    _edit(path, 1, ",47.9,", ",10,")  # beside 47.9 in the task's other row
    messages = []
    run_sweep(sweep, tmp_path, progress=False, report=messages.append)
    assert any("the rows of one task differ in z (10 and 47.9)" in m for m in messages)
    assert [r["z"] for r in _file(path)] == ["47.9"] * 4
    _edit(path, "1,a,", ",47.9,", ",1.5,")  # both rows of x = 1 say so: z below y = 2
    _edit(path, "1,b,", ",47.9,", ",1.5,")
    messages.clear()
    run_sweep(sweep, tmp_path, progress=False, report=messages.append)
    assert any("y 2 is above z 1.5" in m for m in messages)
    _edit(path, "0,a,", "0,a,1,", "0,a,3,")  # the instance x = 0 gives y = 1
    messages.clear()
    run_sweep(sweep, tmp_path, progress=False, report=messages.append)
    assert any("y 3 disagrees with its own instance, which gives 1" in m for m in messages)
    assert sorted(r["y"] for r in _file(path)) == ["1", "1", "2", "2"]


PLUGIN = """
import numpy as np
from lpsched.policies.registry import register_policy


def order(instance):
    return np.argsort({key}, kind="stable")


register_policy("prov-test", order, replace=True)
"""


def _policy_rows(params, missing):
    from lpsched.generators.small import EXACT_WORKLOADS
    from lpsched.policies.registry import run_policy

    inst = EXACT_WORKLOADS["scaled-mix"](8, params["seed"], memory=50)
    for key in missing:
        yield {**key, "tel": run_policy(inst, key["policy"]).tel}


@pytest.fixture
def plugin_module(tmp_path, monkeypatch):
    saved = dict(registry.POLICIES)
    monkeypatch.syspath_prepend(str(tmp_path))
    path = tmp_path / "prov_plugin.py"

    def write(key):
        path.write_text(PLUGIN.format(key=key))
        sys.modules.pop("prov_plugin", None)
        importlib.invalidate_caches()
        importlib.import_module("prov_plugin")

    yield write
    sys.modules.pop("prov_plugin", None)
    registry.POLICIES.clear()
    registry.POLICIES.update(saved)


def test_a_changed_plugin_policy_reruns_its_rows(tmp_path, plugin_module):
    plugin_module("instance.prefill")
    sweep = Sweep(
        "p",
        ["seed", "policy", "tel"],
        ["seed", "policy"],
        [Task({"seed": s}, ({"policy": "prov-test"}, {"policy": "fcfs"})) for s in range(3)],
        _policy_rows,
    )
    first = run_sweep(sweep, tmp_path, progress=False)
    assert "+plug-ins-" in first[0]["commit"]
    plugin_module("-instance.decode")  # another body under the same name
    messages = []
    again = run_sweep(sweep, tmp_path, progress=False, report=messages.append)
    # the plug-in's rows only: a shipped policy's rows keep their provenance beside it
    assert any("3 row(s) were computed under other parameters or versions" in m for m in messages)
    assert any("reused 3 of 6" in m for m in messages)
    assert "+plug-ins-" not in next(r for r in first if r["policy"] == "fcfs")["commit"]
    assert [r["tel"] for r in again if r["policy"] == "fcfs"] == [
        r["tel"] for r in first if r["policy"] == "fcfs"
    ]
    assert [r["tel"] for r in again if r["policy"] == "prov-test"] != [
        r["tel"] for r in first if r["policy"] == "prov-test"
    ]
    messages.clear()
    run_sweep(sweep, tmp_path, progress=False, report=messages.append)
    assert any("reused 6 of 6" in m for m in messages)  # the same body: reused


def test_time_model_sources_and_functions_without_source(monkeypatch):
    from lpsched.sweeps.provenance import plugin_digest, source_digest

    saved = dict(TIME_MODELS)
    try:
        namespace: dict = {}
        exec("def slow(p, d, k, c=1.0):\n    return c + 0 * d\n", namespace)  # no source file
        register_time_model("prov-tm", namespace["slow"], replace=True)
        before = provenance({"time_model": {"name": "prov-tm"}})["commit"]
        exec("def slow(p, d, k, c=1.0):\n    return 2 * c + 0 * d\n", namespace)
        register_time_model("prov-tm", namespace["slow"], replace=True)
        after = provenance({"time_model": {"name": "prov-tm"}})["commit"]
        assert "+plug-ins-" in before and before != after
        assert plugin_digest(["prov-tm:c=2"]) == plugin_digest(["prov-tm"])
    finally:
        TIME_MODELS.clear()
        TIME_MODELS.update(saved)
    # shipped code only: no plug-in part (the commit stands for it)
    assert "+plug-ins" not in provenance({"time_model": {"name": "linear"}, "p": "fcfs"})["commit"]
    # a C function has no source: its name and its module's version stand for it
    assert source_digest(np.add) == source_digest(np.add) != source_digest(np.subtract)
    assert len(source_digest(math.sqrt)) == 12


def test_workers_outside_the_range_are_refused(tmp_path):
    from lpsched.sweeps.workers import MAX_WORKERS

    sweep = Sweep("r", FIELDS, ["x", "p"], _tasks(), rows_of)
    for workers in (0, MAX_WORKERS + 1, 100_000, True):
        with pytest.raises(ValueError, match=rf"workers must be an integer in 1\.\.{MAX_WORKERS}"):
            run_sweep(sweep, tmp_path, progress=False, workers=workers)
    assert not (tmp_path / "r.csv").exists()
    with pytest.raises(ValueError, match="workers must be an integer >= 1"):  # a remote cluster
        run_sweep(sweep, tmp_path, progress=False, workers=0, scheduler="tcp://127.0.0.1:1")
