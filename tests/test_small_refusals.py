"""Small refusals: every bad value is refused naming what to pass (the option and policy, the
file and line, a parameter that exists), and shown so that a string never reads as a number."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from lpsched.certify import certify
from lpsched.certify.methods.aggregated import aggregated_lp_bound
from lpsched.cli import main
from lpsched.instance import Instance, InstanceError
from lpsched.io import read_schedule, write_instance, write_schedule
from lpsched.policies.registry import run_policy
from lpsched.timing import TimeModel, TimeModelError, profiles, to_seconds

INST = Instance.from_arrays([2, 3, 1], [2, 1, 3], 8, ids=["A", "B", "C"], name="small")


def test_a_negative_seed_names_the_option_and_the_policy(tmp_path):
    named = "policy 'sorted-f' with seed=-1: option seed must be a non-negative integer"
    with pytest.raises(ValueError, match=named):
        run_policy(INST, "sorted-f", seed=-1)
    write_instance(INST, tmp_path / "i.json")
    r = CliRunner().invoke(
        main, ["run", str(tmp_path / "i.json"), "--policies", "sorted-f", "--option", "seed=-1"]
    )
    assert r.exit_code == 2 and named in r.output


def test_a_syntax_error_in_the_profiles_file_names_the_file_and_line(tmp_path, monkeypatch):
    bad = tmp_path / "bad_profiles.json"
    bad.write_text('{"profiles": [\n  {"name": "x",,}\n]}\n')
    for call in (lambda: profiles.read_profiles(bad), lambda: profiles.read_profiles()):
        monkeypatch.setattr(profiles, "PROFILES_FILE", str(bad))
        with pytest.raises(TimeModelError) as err:
            call()
        assert "bad_profiles.json" in str(err.value) and "line 2" in str(err.value)
        assert "None" not in str(err.value)


def test_too_many_rounds_names_a_parameter_that_exists():
    sched = run_policy(INST, "fcfs")
    with pytest.raises(ValueError) as err:
        to_seconds(sched, TimeModel("one", lambda P, D, K: np.ones(P.shape)), max_rounds=1)
    text = str(err.value)
    assert "to_seconds(..., max_rounds=" in text and "the command line" in text


def test_a_string_in_a_summary_field_is_shown_as_a_string(tmp_path):
    sched = run_policy(INST, "fcfs")
    write_schedule(sched, tmp_path / "s.json")
    doc = json.loads((tmp_path / "s.json").read_text())
    doc["tel"] = str(sched.tel)
    (tmp_path / "s.json").write_text(json.dumps(doc))
    with pytest.raises(InstanceError, match=rf"field 'tel' is the string '{sched.tel}'"):
        read_schedule(tmp_path / "s.json", INST)


@pytest.mark.parametrize("value", [0.01 + 0j, "0.01", True, [np.bool_(True)] * 3])
def test_time_models_that_return_no_real_number_are_refused(value):
    model = TimeModel("odd", lambda P, D, K: value)
    with pytest.raises(TimeModelError, match="time model 'odd' returned"):
        model.durations([1, 2, 3], [1, 1, 1], [3, 4, 5])


@pytest.mark.parametrize("value", ["0.5", True, 0.5 + 0j, None])
def test_arrival_s_from_python_is_refused_as_the_file_reader_refuses_it(value):
    with pytest.raises(InstanceError, match=r"request 'A': field 'arrival_s' must be a number"):
        Instance.from_arrays([1], [1], 4, ids=["A"], arrival_s=[value])


def test_tau_at_refuses_rounds_that_are_not_whole():
    secs = to_seconds(run_policy(INST, "fcfs"), TimeModel("one", lambda P, D, K: np.ones(P.shape)))
    assert secs.tau_at([2.0]).tolist() == [2.0]
    for rounds in ([1.7], ["1"], [True]):
        with pytest.raises(ValueError, match="rounds must be whole numbers"):
            secs.tau_at(rounds)


def test_certify_a_path_says_what_to_pass():
    with pytest.raises(TypeError, match=r"an Instance.*read_instance"):
        certify("instances/exact/mix12-s1.json")


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"max_iterations": 1.5}, "max_iterations"),
        ({"max_iterations": 0}, "max_iterations"),
        ({"windows": "no"}, "windows"),
        ({"seed_policies": "fcfs"}, "seed_policies"),
        ({"seed_policies": ["fcfs", 3]}, "seed_policies"),
    ],
)
def test_aggregated_lp_bound_refuses_options_by_name(kwargs, name):
    with pytest.raises((TypeError, ValueError), match=name):
        aggregated_lp_bound(INST, **kwargs)
