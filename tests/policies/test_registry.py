"""The policy registry and the baseline priority lists (SPEC section 4)."""

from __future__ import annotations

import inspect
import re

import pytest

from lpsched.instance import Instance
from lpsched.policies import registry
from lpsched.policies.baselines import fcfs_order, mcsf_order, size_order
from lpsched.policies.registry import (
    POLICIES,
    Policy,
    PolicySelectionError,
    check_policy_options,
    import_plugins,
    options_for,
    parse_policy,
    plugin_modules,
    policy_names,
    run_policy,
)

CORE = ["fcfs", "mcsf", "size", "sorted-f"]
#: Three requests (s, o) = (1, 2), (2, 1), (1, 1) in M = 6 tokens.
HAND = Instance.from_arrays([1, 2, 1], [2, 1, 1], 6)


def test_registry_names():
    names = policy_names()
    assert names[:4] == CORE  # registry order; later families may append
    assert len(set(names)) == len(names)
    for name in names:
        pol = POLICIES[name]
        assert isinstance(pol, Policy)
        assert pol.name == name
        assert pol.description
        assert "+" not in name


def test_sorted_f_options():
    assert set(POLICIES["sorted-f"].options) >= {"solver", "sample_size", "quantile", "seed"}


@pytest.mark.parametrize(
    "spec, name, backfill",
    [
        ("mcsf+backfill", "mcsf", True),
        ("mcsf", "mcsf", False),
        (" fcfs ", "fcfs", False),
        ("sorted-f+backfill", "sorted-f", True),
    ],
)
def test_parse_policy(spec, name, backfill):
    pol, bf = parse_policy(spec)
    assert pol is POLICIES[name]
    assert bf is backfill


@pytest.mark.parametrize("spec", ["nope", "mcsf+fill", "+backfill", "MCSF", "mcsf+backfill+x"])
def test_unknown_policy_lists_names(spec):
    with pytest.raises(KeyError) as info:
        parse_policy(spec)
    msg = str(info.value)
    for name in policy_names():
        assert name in msg
    with pytest.raises(KeyError):
        run_policy(Instance.from_arrays([0], [1], 1), spec)


def test_run_policy_ignores_foreign_options():
    inst = Instance.from_arrays([1, 0, 2], [3, 1, 2], 6, [0, 1, 0])
    a = run_policy(inst, "fcfs", solver="dp", seed=4)
    b = run_policy(inst, "fcfs")
    assert a.start.tolist() == b.start.tolist()
    assert a.policy == "fcfs"
    assert run_policy(inst, "fcfs+backfill").policy == "fcfs+backfill"
    assert a.info["order"].tolist() == [0, 2, 1]


# --------------------------------------------------------------------------- orders

# index:        0  1  2  3  4  5
ARRIVAL = [2, 0, 2, 1, 0, 1]
DECODE = [3, 1, 3, 1, 2, 3]
PREFILL = [0, 3, 1, 2, 1, 0]
# size = s + o: 3, 4, 4, 3, 3, 3
TIES = Instance.from_arrays(PREFILL, DECODE, 10, ARRIVAL)


def test_fcfs_order_ties_by_index():
    # arrival 0: (1, 4); arrival 1: (3, 5); arrival 2: (0, 2)
    assert fcfs_order(TIES).tolist() == [1, 4, 3, 5, 0, 2]


def test_mcsf_order_ties_by_index():
    # o = 1: (1, 3); o = 2: (4,); o = 3: (0, 2, 5)
    assert mcsf_order(TIES).tolist() == [1, 3, 4, 0, 2, 5]


def test_size_order_ties_by_index():
    # size 3: (0, 3, 4, 5); size 4: (1, 2)
    assert size_order(TIES).tolist() == [0, 3, 4, 5, 1, 2]


def test_offline_fcfs_is_index_order():
    inst = Instance.from_arrays([5, 1, 2, 0], [1, 9, 4, 4], 10)
    assert fcfs_order(inst).tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize(
    "name, fn", [("fcfs", fcfs_order), ("mcsf", mcsf_order), ("size", size_order)]
)
def test_registry_runs_the_order(name, fn):
    sched = run_policy(TIES, name)
    assert sched.info["order"].tolist() == fn(TIES).tolist()
    sched.check()


# --------------------------------------------------------------------------- options (issue 22)


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_builtin_options_are_the_keywords_their_functions_take(name):
    """Every keyword a built-in policy's function takes (but the internal ``decode``
    estimates of Sorted-F) is declared, and every declared option is a keyword it takes, so
    ``--option`` reaches all of them and nothing else."""
    lists = {
        "fcfs": fcfs_order,
        "mcsf": mcsf_order,
        "size": size_order,
        "sorted-f": registry.sorted_f_order,
        "sorted-lp": registry.sorted_lp_order,
        "lp-swap": registry.lp_swap_order,
        "volume": registry.volume_order,
        "sorted-f-seconds": registry.sorted_f_seconds_order,
    }
    blind = POLICIES[name].blind  # a blind policy's options are its builder's keywords
    fn = lists.get(name, blind.build if blind is not None else POLICIES[name].run)
    params = list(inspect.signature(fn).parameters.values())[1:]  # after the instance (view)
    keywords = {p.name for p in params} - {"decode"}
    assert set(POLICIES[name].options) == keywords


def test_check_policy_options_names_the_option_and_the_policies():
    check_policy_options(["fcfs", "sorted-f+backfill"], {"quantile": 0.5, "seed": 1})
    check_policy_options(["fcfs"], {})
    with pytest.raises(PolicySelectionError) as info:
        check_policy_options(["fcfs", "sorted-lp", "sorted-lp+backfill"], {"quantile": 0.5})
    assert str(info.value) == (
        "option 'quantile' is declared by none of the selected policies (fcfs, sorted-lp, "
        "sorted-lp+backfill); the options they declare: sorted-lp: horizon, max_nonzeros, lp, "
        "max_iterations"
    )
    with pytest.raises(PolicySelectionError, match="option 'solver': set it elsewhere"):
        check_policy_options(["sorted-f"], {"solver": "dp"}, {"solver": "set it elsewhere"})
    with pytest.raises(KeyError, match="unknown policy"):
        check_policy_options(["nosuch"], {"seed": 1})
    assert options_for(["fcfs", "sorted-lp"], {"seed": 1, "horizon": 9}) == {"horizon": 9}


@pytest.mark.parametrize(
    ("spec", "options", "message"),
    [
        ("gba", {"alpha": 1}, "alpha must be a number > 1"),
        ("gba-d", {"beta": 0}, "beta must be an integer in [1, 2^40]"),
        ("lp-swap", {"max_iterations": 0}, "max_iterations must be a positive integer"),
        ("sorted-lp+backfill", {"max_nonzeros": -1}, "max_nonzeros"),
        ("sorted-f", {"fit": "common-start", "solver": "quantile"}, "fit='peaks' only"),
    ],
)
def test_check_policy_options_refuses_bad_values_before_running(spec, options, message):
    """Each policy's own check (Policy.check) runs on the values given, before any solve; the
    same values make run_policy fail the same way."""
    with pytest.raises(PolicySelectionError) as info:
        check_policy_options([spec], options)
    assert str(info.value).startswith(f"policy {spec.partition('+')[0]!r} with ")
    assert message in str(info.value)
    with pytest.raises(ValueError, match=re.escape(message)):
        run_policy(HAND, spec, **options)
    check_policy_options([spec, "fcfs"], {})  # no values given: nothing to check


def test_plugin_modules_are_the_imported_ones_with_their_folder(own_policy, monkeypatch):
    assert own_policy.module not in plugin_modules()
    import_plugins([own_policy.module])
    assert list(plugin_modules())[-1] == own_policy.module
    assert plugin_modules()[own_policy.module] == str(own_policy.folder)
    monkeypatch.chdir(own_policy.folder.parent)
    import_plugins([own_policy.module])  # once per process: nothing changes
    assert plugin_modules()[own_policy.module] == str(own_policy.folder)
