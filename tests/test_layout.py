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
    res = lpsched.solve_exact(INST, solver="toy", time_limit=30)
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


def _modules() -> list[Path]:
    package = Path(lpsched.__file__).parent
    modules = sorted(package.rglob("*.py"))
    assert len(modules) > 100  # the package, not an empty folder
    return modules


def _name(path: Path) -> str:
    return str(path.relative_to(Path(lpsched.__file__).parent))


def test_no_module_over_800_lines_and_no_issue_numbers():
    """Every module of the package is at most 800 lines, and none refers to an issue by number
    (the CHANGELOG does)."""
    import re

    modules = _modules()
    long = {_name(p): n for p in modules if (n := len(p.read_text().splitlines())) > 800}
    assert long == {}
    numbered = [_name(p) for p in modules if re.search(r"\bissues? #?\d+", p.read_text())]
    assert numbered == []


def _body_lines(fn) -> int:
    """Lines of a function's body after its docstring."""
    import ast

    body = fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        if isinstance(body[0].value.value, str):
            body = body[1:]
    return 0 if not body else body[-1].end_lineno - body[0].lineno + 1


def test_body_lines_count_after_the_docstring():
    import ast

    fn = ast.parse('def f():\n    """Doc.\n\n    More."""\n    a = 1\n\n    return a\n').body[0]
    assert _body_lines(fn) == 3


def test_no_function_over_100_lines_of_body():
    """No function (method, nested function) has more than 100 lines after its docstring."""
    import ast

    long = {
        f"{_name(p)}:{node.name}": n
        for p in _modules()
        for node in ast.walk(ast.parse(p.read_text()))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and (n := _body_lines(node)) > 100
    }
    assert long == {}


def test_no_private_name_crosses_modules():
    """No module imports another module's private name (``from .x import _y``): a name two
    modules share is public, documented where it is defined."""
    import ast

    crossing = [
        f"{_name(p)}:{node.lineno} {node.module} {alias.name}"
        for p in _modules()
        for node in ast.walk(ast.parse(p.read_text()))
        if isinstance(node, ast.ImportFrom) and (node.level > 0 or "lpsched" in (node.module or ""))
        for alias in node.names
        if alias.name.startswith("_") and not alias.name.startswith("__")
    ]
    assert crossing == []


def test_the_layer_contracts_hold():
    """pyproject.toml's import-linter contracts (the layers of docs/architecture.md, the
    research wall, no cycle) hold, and none declares an exception (``ignore_imports``)."""
    import tomllib

    lint = pytest.importorskip("importlinter.cli", reason="import-linter is a dev dependency")
    root = Path(lpsched.__file__).parents[1]
    config = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["importlinter"]
    assert all("ignore_imports" not in c for c in config["contracts"])
    assert lint.lint_imports(config_filename=str(root / "pyproject.toml"), no_cache=True) == 0
