"""The guide of docs/architecture.md holds: a toy policy, solver back end, bound method, time
model and reproduction each need one module (here: a function in this file) and one registry
entry, and nothing else, to reach the Python API and the command line; and the research wall
holds."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from reference.shipped import MIX10

import lpsched
from lpsched.certify import plan as certify_plan
from lpsched.certify.method import Method
from lpsched.certify.methods import METHODS, register_method
from lpsched.cli import main
from lpsched.executor import execute
from lpsched.formulations.time_indexed import TimeIndexedMatrix
from lpsched.io import read_instance
from lpsched.policies.registry import POLICIES, register_policy, run_policy
from lpsched.research.reproductions.registry import (
    REPRODUCTIONS,
    Reproduction,
    register_reproduction,
)
from lpsched.solvers import solve
from lpsched.solvers.backends.highs import solve_mip as highs_mip
from lpsched.solvers.result import Answer, SolveStatus
from lpsched.sweeps.engine import Sweep, Task, run_sweep
from lpsched.sweeps.tables import markdown_table, write_report
from lpsched.timing import TIME_MODELS

INST_FILE = MIX10  # proven optimum 74
INST = read_instance(INST_FILE)


@pytest.fixture
def inst_file():
    return INST_FILE


@pytest.fixture
def clean_registries():
    policies, reproductions, methods = set(POLICIES), set(REPRODUCTIONS), set(METHODS)
    models = set(TIME_MODELS)
    yield
    for name in set(TIME_MODELS) - models:
        del TIME_MODELS[name]
    for name in set(POLICIES) - policies:
        del POLICIES[name]
    for name in set(REPRODUCTIONS) - reproductions:
        del REPRODUCTIONS[name]
    for name in set(METHODS) - methods:
        del METHODS[name]


def test_toy_policy(clean_registries, inst_file):
    def longest_prefill_first(instance):
        return np.argsort(-instance.prefill, kind="stable")

    register_policy("lpf", longest_prefill_first, "longest prefill first")
    assert run_policy(INST, "lpf+backfill").check().tel > 0
    with pytest.raises(ValueError, match="already registered"):
        register_policy("lpf", longest_prefill_first)
    # a re-run notebook cell replaces its own policy; the built-ins are never replaced
    register_policy("lpf", lambda instance: np.arange(instance.n), replace=True)
    assert run_policy(INST, "lpf").tel == execute(INST, np.arange(INST.n)).tel
    register_policy("lpf", longest_prefill_first, "longest prefill first", replace=True)
    with pytest.raises(ValueError, match="'mcsf' is built in"):
        register_policy("mcsf", longest_prefill_first, replace=True)
    out = CliRunner().invoke(main, ["run", str(inst_file), "--policies", "lpf,mcsf", "--json"])
    assert out.exit_code == 0, out.output
    assert [r["policy"] for r in json.loads(out.output)["results"]] == ["lpf", "mcsf"]


def test_toy_time_model(clean_registries, inst_file):
    """A time model is one function and one ``register_time_model`` call."""

    def per_request(prefill_tokens, decoding, kv_tokens, request_s=0.001):
        return 0.01 + request_s * decoding

    lpsched.register_time_model("toy-clock", per_request, "a fixed cost plus one per request")
    sched = run_policy(INST, "mcsf")
    secs = lpsched.to_seconds(sched, "toy-clock:request_s=0.002")
    assert secs.makespan_s > 0.01 * sched.makespan
    args = ["run", str(inst_file), "--policies", "mcsf", "--json", "--time-model", "toy-clock"]
    out = CliRunner().invoke(main, args)
    assert out.exit_code == 0, out.output
    got = json.loads(out.output)
    assert got["time_model"] == {"name": "toy-clock", "parameters": {"request_s": 0.001}}
    assert got["results"][0]["tel_s"] == lpsched.to_seconds(sched, "toy-clock").tel_s
    out = CliRunner().invoke(main, ["time-models"])
    assert "toy-clock" in out.output and "request_s = 0.001" in out.output


def test_toy_solver_back_end(monkeypatch, inst_file):
    calls = []

    def toy_mip(mat: TimeIndexedMatrix, **options) -> Answer:
        calls.append(mat.ncol)
        return highs_mip(mat, **options)  # a toy: delegate, but through the registry

    monkeypatch.setitem(solve.SOLVERS, "toy", toy_mip)
    res = solve.solve_exact(INST, solver="toy", time_limit=30)
    assert (res.status, res.objective, res.solver) == (SolveStatus.OPTIMAL, 74, "toy")
    out = CliRunner().invoke(main, ["exact", str(inst_file), "--solver", "toy", "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["solver"] == "toy" and len(calls) == 2


def test_toy_reproduction(clean_registries, tmp_path):
    def run(out_dir, *, seeds=(0, 1), **engine):
        def compute(params, missing):
            for key in missing:
                yield {**key, "tel": run_policy(INST, key["policy"]).tel}

        tasks = [Task({"seed": s}, ({"policy": "fcfs"}, {"policy": "mcsf"})) for s in seeds]
        sweep = Sweep("toy", ["seed", "policy", "tel"], ["seed", "policy"], tasks, compute)
        rows = run_sweep(sweep, out_dir, **engine)
        return write_report(out_dir, "toy", markdown_table(rows, ["seed", "policy", "tel"]))

    register_reproduction(Reproduction("toy", "a toy", run))
    out = CliRunner().invoke(main, ["reproduce", "toy", "--out", str(tmp_path), "--seeds", "3"])
    assert out.exit_code == 0, out.output
    assert "|      3 | fcfs" in out.output
    assert (tmp_path / "toy.csv").read_text().count("\n") == 3  # header and two rows


def test_toy_bound_method(clean_registries, monkeypatch, inst_file):
    """A lower-bound method is one module (here: ``oracle``) and one registry line (here:
    ``register_method``); the plans name it, and ``lpsched bound --method`` offers it."""
    runs = []

    def oracle(instance, schedule, options, observer):
        # a toy that knows the proven optimum of mix10-s1 (instances/README.md): a valid bound
        runs.append((schedule.tel, options.time_limit))
        observer.on_bound(74.0)

    register_method(Method("oracle", "lower", "the proven optimum, from the catalogue", oracle))
    with pytest.raises(ValueError, match="exists already"):
        register_method(Method("oracle", "lower", "again", oracle))
    out = CliRunner().invoke(main, ["bound", str(inst_file), "--method", "oracle", "--json"])
    assert out.exit_code == 0, out.output
    got = json.loads(out.output)
    assert (got["method"], got["bound"]) == ("oracle", 74.0)
    monkeypatch.setitem(certify_plan.PLANS, "small", (("oracle", 1.0),))
    res = lpsched.certify(INST, time_limit=30)
    assert (res.bound, res.bound_method) == (74.0, "oracle") and res.objective >= 74
    assert res.status == ("optimal" if res.objective == 74 else "gap")
    assert res.info["plan"]["methods"] == ["oracle"] and len(runs) == 2
    assert runs[-1][0] >= 74 and 0 < runs[-1][1] <= 30


def test_the_research_wall():
    """``import lpsched``, certify, the sweeps and plotting load nothing of lpsched.research:
    only the command line imports it (pyproject.toml's import-linter wall)."""
    import subprocess
    import sys

    code = (
        "import sys, lpsched, lpsched.certify.methods, lpsched.sweeps.engine, lpsched.plotting; "
        "print([m for m in sys.modules if m.startswith('lpsched.research')])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_method_registry_is_its_modules():
    """The guide's two steps are all there is: every module of certify/methods/ is named in
    MODULES, and METHODS holds exactly their METHODs, in that order."""
    import importlib

    from lpsched.certify import methods

    folder = Path(methods.__file__).parent
    files = {p.stem for p in folder.glob("*.py")} - {"__init__"}
    assert set(methods.MODULES) == files
    built = [
        importlib.import_module(f"lpsched.certify.methods.{m}").METHOD for m in methods.MODULES
    ]
    assert [m for m in METHODS.values() if m in built] == built


def test_no_module_over_800_lines_and_no_issue_numbers():
    """The house rules that hold today (issue 32 tightens the rest): every module of the
    package is at most 800 lines, and none refers to an issue by number (the CHANGELOG does)."""
    import re

    package = Path(lpsched.__file__).parent
    modules = sorted(package.rglob("*.py"))
    assert len(modules) > 100  # the package, not an empty folder
    long = {
        str(p.relative_to(package)): n
        for p in modules
        if (n := len(p.read_text().splitlines())) > 800
    }
    assert long == {}
    numbered = [
        str(p.relative_to(package)) for p in modules if re.search(r"\bissues? #?\d+", p.read_text())
    ]
    assert numbered == []
