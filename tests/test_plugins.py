"""Plug-in policies reach the command line and the sweep workers: an installed package's entry
point (group ``lpsched.policies``), and ``--import MODULE`` of a module that calls
``register_policy``.

The installed package is ``tests/plugin_pkg`` (``lpsched-lpf``, policy ``lpf``: longest prefill
first), built and installed by pip offline into a folder of its own that the subprocesses get on
``PYTHONPATH``: the same discovery as site-packages (``importlib.metadata`` reads its
``entry_points.txt``), without touching the environment other tests run in.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from reference.shipped import MIX10

from lpsched import plugins
from lpsched.cli import main
from lpsched.executor import execute
from lpsched.generators.workloads import generate
from lpsched.io import read_instance
from lpsched.policies import registry
from lpsched.policies.registry import POLICIES, PluginError, load_plugins, parse_policy

ROOT = Path(__file__).resolve().parents[1]
INST_FILE = MIX10
INST = read_instance(INST_FILE)
LPSCHED = Path(sys.executable).with_name("lpsched")  # the console script of this environment
LPF = np.argsort(-INST.prefill, kind="stable")  # longest prefill first, ties by index
#: TEL of longest prefill first on mix10-s1, strict and with backfill, from the executor
LPF_TEL = execute(INST, LPF).tel, execute(INST, LPF, backfill=True).tel

MODULE = """
import numpy as np
import lpsched

def shortest_prefill_first(instance):
    return np.argsort(instance.prefill, kind="stable")

lpsched.register_policy("spf", shortest_prefill_first, "shortest prefill first")
"""
SPF = np.argsort(INST.prefill, kind="stable")


def _run(args, cwd, env_extra=None):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", registry.PLUGINS_ENV)}
    env.update(env_extra or {})
    return subprocess.run(
        [str(LPSCHED), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.fixture
def clean_registry(monkeypatch):
    """Undo the policies, tried plug-ins, ``sys.path`` and ``LPSCHED_PLUGINS`` a test leaves."""
    policies, loaded, imported = dict(POLICIES), set(plugins._loaded), dict(plugins._imported)
    monkeypatch.setenv(registry.PLUGINS_ENV, "")  # restored (or removed) afterwards
    monkeypatch.setattr(sys, "path", [*sys.path])
    yield
    POLICIES.clear()
    POLICIES.update(policies)
    plugins._loaded.clear()
    plugins._loaded.update(loaded)
    plugins._imported.clear()
    plugins._imported.update(imported)


@pytest.fixture(scope="module")
def plugin_site(tmp_path_factory):
    """``tests/plugin_pkg`` installed by pip (no network, no build isolation) into a folder of
    its own; the source is copied first so that the build leaves nothing in the checkout."""
    if not LPSCHED.exists():
        pytest.skip(f"no console script {LPSCHED} in this environment")
    tmp = tmp_path_factory.mktemp("plugin")
    src, site = tmp / "src", tmp / "site"
    shutil.copytree(ROOT / "tests" / "plugin_pkg", src)
    cmd = [sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation"]
    res = subprocess.run(
        [*cmd, "--no-index", "--quiet", "--target", str(site), str(src)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if res.returncode != 0:
        pytest.skip(f"pip cannot build and install tests/plugin_pkg offline: {res.stderr[-800:]}")
    return site


# ------------------------------------------------------------------ the installed package


def test_installed_plugin_runs_from_the_command_line(plugin_site, tmp_path):
    res = _run(
        ["run", str(INST_FILE), "--policies", "lpf,lpf+backfill,mcsf", "--json"],
        tmp_path,
        {"PYTHONPATH": str(plugin_site)},
    )
    assert res.returncode == 0, res.stderr
    tel = {r["policy"]: r["tel"] for r in json.loads(res.stdout)["results"]}
    assert (tel["lpf"], tel["lpf+backfill"]) == LPF_TEL
    assert LPF_TEL == (127, 93)  # recorded once from the executor; a change is a regression


def test_installed_plugin_time_model_from_the_command_line(plugin_site, tmp_path):
    """The entry point of the group ``lpsched.time_models`` (SPEC section 10): listed, and
    usable by name with its parameters."""
    site = {"PYTHONPATH": str(plugin_site)}
    res = _run(["time-models"], tmp_path, site)
    assert res.returncode == 0, res.stderr
    line = next(x for x in res.stdout.splitlines() if x.startswith("fixed-round "))
    assert line.split(None, 1)[1] == (
        "A fixed round: every round lasts round_s seconds, whatever its load. "
        "[plug-in lpsched-lpf 0.1.0]"
    )
    args = ["run", str(INST_FILE), "--policies", "lpf", "--json"]
    res = _run([*args, "--time-model", "fixed-round:round_s=0.5"], tmp_path, site)
    assert res.returncode == 0, res.stderr
    (row,) = json.loads(res.stdout)["results"]
    assert row["tel_s"] == 0.5 * row["tel"] == 0.5 * LPF_TEL[0]
    res = _run([*args, "--time-model", "fixed-round"], tmp_path)
    assert res.returncode == 2 and "unknown time model 'fixed-round'" in res.stderr


def test_installed_plugin_is_listed_and_absent_without_the_package(plugin_site, tmp_path):
    res = _run(["policies"], tmp_path, {"PYTHONPATH": str(plugin_site)})
    assert res.returncode == 0, res.stderr
    line = next(x for x in res.stdout.splitlines() if x.startswith("lpf "))
    assert line.split(None, 1)[1] == (
        "Longest prefill first: requests by prefill length s_i, longest first, ties by index. "
        "[plug-in lpsched-lpf 0.1.0]"
    )
    res = _run(["run", str(INST_FILE), "--policies", "lpf"], tmp_path)
    assert res.returncode == 2 and "unknown policy 'lpf'" in res.stderr


def test_installed_plugin_reaches_sweep_workers(plugin_site, tmp_path):
    """A sweep that takes policy names, on two worker processes (forkserver): each worker
    finds the entry point on its own first look-up of ``lpf``."""
    script = tmp_path / "sweep.py"
    script.write_text(
        textwrap.dedent(
            """
            import json, sys
            from lpsched.research.reproductions.headline import policy_comparison

            if __name__ == "__main__":
                rows = policy_comparison(sys.argv[1], "plug", ["mix-80-20"], [16492], [0, 1],
                                         n=30, policies=("mcsf", "lpf"), workers=2,
                                         progress=False)
                print(json.dumps([[r["seed"], r["policy"], int(r["tel"])] for r in rows]))
            """
        )
    )
    env = {k: v for k, v in os.environ.items() if k != registry.PLUGINS_ENV}
    env["PYTHONPATH"] = str(plugin_site)
    res = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "out")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr
    got = {(s, p): tel for s, p, tel in json.loads(res.stdout.splitlines()[-1])}
    for seed in (0, 1):
        inst = generate("mix-80-20", 30, 16492, seed=seed)
        assert (
            got[(str(seed), "lpf")] == execute(inst, np.argsort(-inst.prefill, kind="stable")).tel
        )


# ------------------------------------------------------------------ --import MODULE


def test_import_option_from_pythonpath_and_current_directory(tmp_path):
    mods, elsewhere = tmp_path / "mods", tmp_path / "elsewhere"
    mods.mkdir()
    elsewhere.mkdir()
    (mods / "my_spf.py").write_text(MODULE)
    args = ["run", str(INST_FILE), "--import", "my_spf", "--policies", "spf,spf+backfill", "--json"]
    expected = {
        "spf": execute(INST, SPF).tel,
        "spf+backfill": execute(INST, SPF, backfill=True).tel,
    }
    for cwd, extra in ((elsewhere, {"PYTHONPATH": str(mods)}), (mods, {})):
        res = _run(args, cwd, extra)
        assert res.returncode == 0, res.stderr
        assert {r["policy"]: r["tel"] for r in json.loads(res.stdout)["results"]} == expected
    res = _run(["schedule", str(INST_FILE), "--policy", "spf", "--import", "my_spf"], mods)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["tel"] == expected["spf"]
    res = _run(["policies", "--import", "my_spf"], mods)
    listed = dict(line.split(None, 1) for line in res.stdout.splitlines())
    assert listed["spf"] == "shortest prefill first"


def test_import_option_reaches_sweep_workers(tmp_path):
    """``import_plugins`` (what ``--import`` calls) records the module, and the sweep passes it
    to its forkserver workers, which import it before their tasks: also when
    ``LPSCHED_PLUGINS`` is gone from the environment (issue 22, item 12: a forkserver started
    before the import never has it)."""
    (tmp_path / "my_spf.py").write_text(MODULE)
    script = tmp_path / "sweep.py"
    script.write_text(
        textwrap.dedent(
            """
            import json, os, sys
            from lpsched.sweeps.engine import SweepWorkerError
            from lpsched.research.reproductions.headline import policy_comparison
            from lpsched.policies.registry import import_plugins

            if __name__ == "__main__":
                import_plugins(["my_spf"])
                if sys.argv[2] == "drop":
                    del os.environ["LPSCHED_PLUGINS"]
                rows = policy_comparison(sys.argv[1], "plug", ["mix-80-20"], [16492], [0, 1],
                                         n=30, policies=("spf",), workers=2, progress=False)
                print(json.dumps([[r["seed"], int(r["tel"])] for r in rows]))
            """
        )
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", registry.PLUGINS_ENV)}

    def sweep(mode):
        return subprocess.run(
            [sys.executable, str(script), str(tmp_path / mode), mode],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    res = sweep("keep")
    assert res.returncode == 0, res.stderr
    got = dict(json.loads(res.stdout.splitlines()[-1]))
    for seed in (0, 1):
        inst = generate("mix-80-20", 30, 16492, seed=seed)
        assert got[str(seed)] == execute(inst, np.argsort(inst.prefill, kind="stable")).tel
    res = sweep("drop")
    assert res.returncode == 0, res.stderr
    assert dict(json.loads(res.stdout.splitlines()[-1])) == got


def test_import_option_errors(clean_registry, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "broken_mod.py").write_text("raise RuntimeError('boom')\n")
    runner = CliRunner()
    for module, why in (
        ("no_such_mod_xyz", "ModuleNotFoundError: No module named 'no_such_mod_xyz'"),
        ("broken_mod", "RuntimeError: boom"),
    ):
        res = runner.invoke(main, ["run", str(INST_FILE), "--import", module])
        assert res.exit_code == 2
        assert f"plug-in module '{module}' failed to import: {why}" in res.output


# ------------------------------------------------------------------ entry-point contract


def _entry_points(monkeypatch, *specs):
    """Make the group ``lpsched.policies`` hold exactly ``specs`` (name, value)."""
    eps = metadata.EntryPoints(
        metadata.EntryPoint(name, value, registry.ENTRY_POINT_GROUP) for name, value in specs
    )

    def entry_points(**kw):
        assert kw == {"group": registry.ENTRY_POINT_GROUP}
        return eps

    monkeypatch.setattr(metadata, "entry_points", entry_points)


def test_entry_points_load_lazily_by_name(clean_registry, monkeypatch, tmp_path):
    (tmp_path / "ep_mod.py").write_text(MODULE.replace('lpsched.register_policy("spf"', "#"))
    monkeypatch.syspath_prepend(str(tmp_path))
    _entry_points(
        monkeypatch, ("ep-spf", "ep_mod:shortest_prefill_first"), ("bad", "no_such_mod_xyz:f")
    )
    assert "ep-spf" not in POLICIES
    parse_policy("mcsf")  # a registered name loads nothing
    assert "ep-spf" not in POLICIES
    policy, backfill = parse_policy("ep-spf+backfill")
    assert (policy.name, backfill) == ("ep-spf", True)
    assert policy.description == "ep_mod:shortest_prefill_first [plug-in unknown]"
    assert policy.run(INST).tel == execute(INST, SPF).tel
    with pytest.raises(KeyError, match="unknown policy 'nosuch'"):
        parse_policy("nosuch")  # the broken entry point 'bad' is not touched


def test_broken_entry_points_name_themselves(clean_registry, monkeypatch, tmp_path):
    (tmp_path / "ep_obj.py").write_text("NOT_CALLABLE = 3\n\ndef fcfs(instance):\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    _entry_points(
        monkeypatch,
        ("bad", "no_such_mod_xyz:f"),
        ("three", "ep_obj:NOT_CALLABLE"),
        ("fcfs", "ep_obj:fcfs"),
    )
    res = CliRunner().invoke(main, ["run", str(INST_FILE), "--policies", "bad"])
    assert res.exit_code == 1
    assert res.output.strip() == (
        "lpsched: error: plug-in policy entry point 'bad = no_such_mod_xyz:f' (group "
        "lpsched.policies, distribution unknown): ModuleNotFoundError: No module named "
        "'no_such_mod_xyz'"
    )
    with pytest.raises(PluginError, match="'three = ep_obj:NOT_CALLABLE'.*int object is not"):
        parse_policy("three")
    with pytest.raises(
        PluginError, match="'fcfs = ep_obj:fcfs'.*built in and cannot be registered"
    ):
        load_plugins()  # listing loads every entry point: the clash with a built-in is named
    res = CliRunner().invoke(main, ["run", str(INST_FILE), "--policies", "three"])
    assert res.exit_code == 2  # each entry point is tried once: now simply unknown


def test_policies_lists_the_others_when_a_plugin_fails(clean_registry, monkeypatch, tmp_path):
    (tmp_path / "ep_mod.py").write_text(MODULE.replace('lpsched.register_policy("spf"', "#"))
    monkeypatch.syspath_prepend(str(tmp_path))
    _entry_points(
        monkeypatch,
        ("bad", "no_such_mod_xyz:f"),
        ("ep-spf", "ep_mod:shortest_prefill_first"),
        ("fcfs", "ep_mod:shortest_prefill_first"),
    )
    res = CliRunner().invoke(main, ["policies"])
    assert res.exit_code == 1
    listed = [line.split()[0] for line in res.stdout.splitlines()]
    assert listed[:2] == ["fcfs", "mcsf"] and "ep-spf" in listed and "bad" not in listed
    errors = [line for line in res.stderr.splitlines() if line.startswith("lpsched: error:")]
    assert len(errors) == 2
    assert "'bad = no_such_mod_xyz:f'" in errors[0] and "ModuleNotFoundError" in errors[0]
    assert "'fcfs = ep_mod:shortest_prefill_first'" in errors[1] and "built in" in errors[1]


def test_unknown_policy_names_installed_plugins(clean_registry, monkeypatch):
    _entry_points(monkeypatch, ("not-loaded", "no_such_mod_xyz:f"))
    with pytest.raises(KeyError, match="installed plug-ins not loaded: not-loaded"):
        parse_policy("nosuch")


def test_plugins_env_finds_modules_in_the_current_directory(tmp_path):
    (tmp_path / "my_policies.py").write_text(MODULE)
    res = _run(
        ["run", str(INST_FILE), "--policies", "spf", "--json"],
        cwd=tmp_path,
        env_extra={registry.PLUGINS_ENV: "my_policies"},
    )
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["results"][0]["tel"] == execute(INST, SPF).tel


def test_a_failing_plugin_policy_is_named(clean_registry):
    def raises(instance):
        raise RuntimeError("boom")

    def not_a_list(instance):
        return np.zeros(instance.n, dtype=int)

    registry.register_policy("raises", raises)
    registry.register_policy("not-a-list", not_a_list)
    with pytest.raises(registry.PolicyError, match=r"'raises' \(.*raises\) failed: RuntimeError"):
        registry.run_policy(INST, "raises+backfill")
    with pytest.raises(registry.PolicyError, match="'not-a-list'.*not a permutation of range"):
        registry.run_policy(INST, "not-a-list")
    res = CliRunner().invoke(main, ["run", str(INST_FILE), "--policies", "raises"])
    assert res.exit_code == 1 and res.exception.__class__ is SystemExit
    assert "policy 'raises'" in res.stderr and "Traceback" not in res.output


def test_a_plugin_cannot_change_the_instance(clean_registry):
    """Issue 22, item 3: a plug-in that unfroze the arrays rewrote the decode lengths (MC-SF
    run after it reported TEL 14 instead of 76), the memory, or made a request larger than M
    (the executor then looped forever). It gets a private copy."""
    from lpsched.instance import Instance

    inst = Instance.from_arrays([3, 1, 4, 1, 5], [9, 2, 6, 5, 3], 12, name="frozen")
    before = (inst.prefill.copy(), inst.decode.copy(), inst.memory)
    mcsf = registry.run_policy(inst, "mcsf").tel

    def vandal(instance):
        for field in (instance.prefill, instance.decode):
            field.setflags(write=True)
            field[:] = 1
        instance.prefill[0] = 10**6  # larger than M
        object.__setattr__(instance, "memory", 10**6)
        return np.arange(instance.n)

    registry.register_policy("vandal", vandal)
    sched = registry.run_policy(inst, "vandal").check()
    assert np.array_equal(inst.prefill, before[0]) and np.array_equal(inst.decode, before[1])
    assert inst.memory == before[2] and not inst.decode.flags.writeable
    assert sched.instance is inst and sched.tel >= int(inst.decode.sum())
    assert registry.run_policy(inst, "mcsf").tel == mcsf


def test_the_current_folder_is_searched_only_while_a_plug_in_imports(
    clean_registry, tmp_path, monkeypatch
):
    """Issue 22, item 9: --import left the current folder first on sys.path for the whole run,
    so a stray module there (a 'highspy.py') shadowed the library; item 13: a file path gets
    'give a module name', not Python's import error."""
    (tmp_path / "cwd_only_plugin.py").write_text("VALUE = 1\n")
    (tmp_path / "stray_shadow_mod.py").write_text("raise SystemExit('the stray module ran')\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    registry.import_plugins(["cwd_only_plugin"])
    assert "cwd_only_plugin" in sys.modules and str(tmp_path) not in sys.path
    with pytest.raises(ImportError):
        __import__("stray_shadow_mod")
    with pytest.raises(PluginError, match="give a module name"):
        registry.import_plugins(["cwd_only_plugin.py"])


# ------------------------------------------------------------------ a plug-in that misbehaves

NOISY = """
import os, sys
import numpy as np
import lpsched

print("noisy: imported")

def noisy(instance):
    print("noisy: called")
    if os.environ.get("NOISY_EXIT"):
        sys.exit(3)
    if os.environ.get("NOISY_INTERRUPT"):
        raise KeyboardInterrupt
    return np.argsort(instance.prefill, kind="stable")

lpsched.register_policy("noisy", noisy, "shortest prefill first, loudly")
"""


def test_a_plugins_print_goes_to_stderr_not_into_the_json(tmp_path):
    """Issue 22, item 10: what a plug-in prints on import or when called is on standard error;
    standard output holds exactly the JSON (``run --json``) or the schedule (``schedule``)."""
    (tmp_path / "noisy.py").write_text(NOISY)
    res = _run(
        ["run", str(INST_FILE), "--import", "noisy", "--policies", "noisy", "--json"], tmp_path
    )
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["results"][0]["tel"] == execute(INST, SPF).tel
    assert "noisy: imported" in res.stderr and "noisy: called" in res.stderr
    res = _run(["schedule", str(INST_FILE), "--import", "noisy", "--policy", "noisy"], tmp_path)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["tel"] == execute(INST, SPF).tel
    # loaded through LPSCHED_PLUGINS while the policy names are checked
    res = _run(
        ["run", str(INST_FILE), "--policies", "noisy", "--json"],
        tmp_path,
        {registry.PLUGINS_ENV: "noisy"},
    )
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["results"][0]["policy"] == "noisy"


def test_a_plugins_sys_exit_is_an_error_that_names_it(tmp_path):
    """Issue 22, item 10: ``sys.exit(3)`` in a plug-in used to end ``run`` silently with
    exit 3; now it is one error line naming the policy (exit 1), or the module when it exits
    on import (a usage error of --import, exit 2)."""
    (tmp_path / "noisy.py").write_text(NOISY)
    args = ["run", str(INST_FILE), "--import", "noisy", "--policies", "noisy,mcsf"]
    res = _run(args, tmp_path, {"NOISY_EXIT": "1"})
    assert res.returncode == 1
    assert "policy 'noisy' (noisy.noisy) called sys.exit(3)" in res.stderr
    (tmp_path / "leaver.py").write_text("import sys\nsys.exit(4)\n")
    res = _run(["run", str(INST_FILE), "--import", "leaver"], tmp_path)
    assert res.returncode == 2
    assert "plug-in module 'leaver' called sys.exit(4) while importing" in res.stderr


def test_a_keyboard_interrupt_in_a_plugin_exits_130(tmp_path):
    """Issue 22, item 10: click's ``Aborted!`` with exit 1 became ``lpsched: interrupted``
    with exit 130 (every command, also those without a handler of their own)."""
    (tmp_path / "noisy.py").write_text(NOISY)
    for args in (
        ["run", str(INST_FILE), "--import", "noisy", "--policies", "noisy"],
        ["schedule", str(INST_FILE), "--import", "noisy", "--policy", "noisy", "-o", "s.json"],
    ):
        res = _run(args, tmp_path, {"NOISY_INTERRUPT": "1"})
        assert res.returncode == 130, res.stderr
        assert "lpsched: interrupted" in res.stderr and "Aborted!" not in res.stderr
    assert not (tmp_path / "s.json").exists()


@pytest.mark.parametrize("name", ["inf", "nan", "Infinity", "1e3", "7"])
def test_a_name_that_reads_as_a_number_is_refused(name):
    """A policy named "inf" would be read back from a results CSV as a number, and the row
    refused as not finite; such names are refused when registered."""
    with pytest.raises(ValueError, match="must not read as a number"):
        registry.register_policy(name, lambda instance: list(range(instance.n)))
