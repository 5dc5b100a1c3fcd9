"""The time-model contract, the built-in models, the profiles and the registry (SPEC section 10).

Checked: ``durations`` validates its input and output (shapes, positive finite seconds) with
messages that name the model; ``linear`` refuses coefficients that could make a round last 0 s;
the command-line form ``NAME:key=value,...`` and its errors; a plug-in registered with
``register_time_model`` (parameters from the signature) and through an entry point of the group
``lpsched.time_models``; the shipped profiles and a malformed profiles file.
"""

from __future__ import annotations

import json
from importlib import metadata

import numpy as np
import pytest

import lpsched
from lpsched.io import default_instance
from lpsched.plugins import PluginError, _loaded
from lpsched.policies.registry import run_policy
from lpsched.timing import (
    TIME_MODELS,
    TimeModel,
    TimeModelError,
    parse_time_model,
    register_time_model,
    registry,
    time_model,
    time_model_names,
    to_seconds,
)
from lpsched.timing.builtin import LINEAR_DEFAULTS
from lpsched.timing.profiles import read_profiles


@pytest.fixture
def clean_models(monkeypatch):
    """Undo the models and tried entry points a test leaves."""
    models, loaded = dict(TIME_MODELS), set(_loaded)
    monkeypatch.delenv("LPSCHED_PLUGINS", raising=False)
    yield
    TIME_MODELS.clear()
    TIME_MODELS.update(models)
    _loaded.clear()
    _loaded.update(loaded)


def test_builtins_and_their_defaults():
    unit, lin = time_model("unit"), time_model("linear")
    assert unit.values == {} and unit.spec == "unit"
    assert lin.values == LINEAR_DEFAULTS and lin.values["base_s"] > 0
    assert set(dict(lin.docs)) == set(LINEAR_DEFAULTS)
    assert time_model_names()[:3] == ["unit", "linear", "llama2-70b-a100x2"]
    P, D, K = np.array([0, 100]), np.array([0, 3]), np.array([0, 500])
    assert unit.durations(P, D, K).tolist() == [1.0, 1.0]
    expected = [
        0.01,
        0.01 + 1e-4 * 100 + 1e-9 * 100**2 + 1e-4 * 3 + 2e-7 * 500,
    ]
    assert lin.durations(P, D, K) == pytest.approx(expected)
    assert lin.duration(100, 3, 500) == pytest.approx(expected[1]) and lin.idle_s == 0.01
    # P^2 is computed in float64: no int64 overflow for a huge prefill
    assert np.isfinite(lin.duration(2**40, 0, 0))


def test_parameters_on_the_command_line_form():
    m = parse_time_model("linear:base_s=0.02, prefill_token_s=2e-4")
    assert m.values == {**LINEAR_DEFAULTS, "base_s": 0.02, "prefill_token_s": 2e-4}
    assert parse_time_model(m.spec) == m  # the spec reads back exactly
    assert parse_time_model(m) is m
    assert m != time_model("linear") and hash(m) == hash(parse_time_model(m.spec))
    assert m.to_dict() == {"name": "linear", "parameters": m.values}


@pytest.mark.parametrize(
    ("spec", "error", "match"),
    [
        ("linar", KeyError, "unknown time model 'linar'; registered: unit, linear"),
        ("linear:bse=1", TimeModelError, "has no parameter 'bse'; its parameters: base_s, "),
        ("linear:base_s=x", TimeModelError, "parameter 'base_s' must be a number, got 'x'"),
        ("linear:base_s=nan", TimeModelError, "'base_s' must be a finite number"),
        ("linear:base_s=inf", TimeModelError, "'base_s' must be a finite number"),
        ("linear:base_s=0", TimeModelError, "base_s must be > 0 seconds"),
        ("linear:kv_token_s=-1e-9", TimeModelError, "kv_token_s must be >= 0"),
        ("linear:base_s", TimeModelError, "expected key=value pairs"),
        ("linear:base_s=1,base_s=2", TimeModelError, "'base_s' given twice"),
        ("unit:x=1", TimeModelError, "has no parameter 'x'; its parameters: none"),
    ],
)
def test_bad_specs_raise_clear_errors(spec, error, match):
    with pytest.raises(error, match=match):
        parse_time_model(spec)


def test_durations_are_validated():
    def bad(prefill_tokens, decoding, kv_tokens, sign=1.0):
        return sign * (1.0 + decoding) - 2.0 * (decoding == 1)

    m = TimeModel("bad", bad, parameters=(("sign", 1.0),))
    assert m.durations([0, 0], [0, 2], [0, 0]).tolist() == [1.0, 3.0]
    with pytest.raises(TimeModelError, match=r"'bad' gives 0.0 s for a round with P = 0.*D = 1"):
        m.durations([0], [1], [0])
    with pytest.raises(TimeModelError, match="gives -1.0 s"):
        m.with_parameters(sign=-1.0).durations([0], [0], [0])
    with pytest.raises(TimeModelError, match="one shape"):
        m.durations([0, 1], [0], [0])
    with pytest.raises(TimeModelError, match="must be numbers"):
        m.durations(["a"], [0], [0])
    nan = TimeModel("nan", lambda P, D, K: np.full(P.shape, np.nan))
    with pytest.raises(TimeModelError, match="'nan' gives nan s"):
        nan.durations([1], [1], [1])
    short = TimeModel("short", lambda P, D, K: np.ones(1))
    with pytest.raises(TimeModelError, match=r"shape \(1,\) for 3 rounds"):
        short.durations([0] * 3, [0] * 3, [0] * 3)

    def boom(P, D, K):
        raise RuntimeError("no GPU")

    with pytest.raises(TimeModelError, match="'boom' failed: RuntimeError: no GPU"):
        TimeModel("boom", boom).duration(0, 0, 0)
    assert TimeModel("flat", lambda P, D, K: 0.02).durations([0, 5], [1, 2], [3, 4]).tolist() == [
        0.02,
        0.02,
    ]  # a scalar is broadcast
    with pytest.raises(TimeModelError, match="name must be letters"):
        TimeModel("a b", bad)
    with pytest.raises(TimeModelError, match="must be a number, got True"):
        TimeModel("b", bad, parameters=(("sign", True),))


def test_a_time_model_that_exits_or_prints(capsys):
    """An attacker's pass: ``sys.exit(3)`` inside a time model ended ``run`` with exit 3 and
    no word, and its ``print`` went into ``--json``. Now an error naming it, and stderr."""
    import sys

    def leaves(P, D, K):
        sys.exit(3)

    def chatty(P, D, K):
        print("computing a round")
        return np.ones(P.shape)

    with pytest.raises(TimeModelError, match=r"'leaves' called sys.exit\(3\)"):
        TimeModel("leaves", leaves).duration(0, 0, 0)
    assert TimeModel("chatty", chatty).duration(1, 1, 1) == 1.0
    out = capsys.readouterr()
    assert out.out == "" and "computing a round" in out.err


def test_register_time_model_plugin(clean_models):
    def flat(prefill_tokens, decoding, kv_tokens, round_s=0.02, per_token_s=0.0):
        """A fixed round plus a cost per prefill token."""
        return round_s + per_token_s * prefill_tokens

    m = lpsched.register_time_model("flat", flat)
    assert m.values == {"round_s": 0.02, "per_token_s": 0.0}
    assert m.summary == "A fixed round plus a cost per prefill token."
    assert "flat" in time_model_names() and parse_time_model("flat:round_s=0.5").values == {
        "round_s": 0.5,
        "per_token_s": 0.0,
    }
    sched = run_policy(default_instance(), "mcsf")
    sec = to_seconds(sched, "flat:round_s=0.5")
    np.testing.assert_allclose(sec.latency_s, 0.5 * sched.latency)
    with pytest.raises(TimeModelError, match="already registered"):
        register_time_model("flat", flat)
    register_time_model("flat", lambda P, D, K: 1.0, "constant", {}, replace=True)
    assert time_model("flat").summary == "constant"
    with pytest.raises(TimeModelError, match="'linear' is built in"):
        register_time_model("linear", flat, replace=True)
    with pytest.raises(TimeModelError, match="needs a default"):
        register_time_model("nodefault", lambda P, D, K, x: P)
    with pytest.raises(TimeModelError, match="must take the three loads"):
        register_time_model("twoloads", lambda P, D: P)


def _entry_points(monkeypatch, *specs):
    """Make the group ``lpsched.time_models`` hold exactly ``specs`` (name, value)."""
    eps = metadata.EntryPoints(
        metadata.EntryPoint(name, value, registry.ENTRY_POINT_GROUP) for name, value in specs
    )

    def entry_points(**kw):
        assert kw == {"group": registry.ENTRY_POINT_GROUP}
        return eps

    monkeypatch.setattr(metadata, "entry_points", entry_points)


def test_entry_point_plugins_load_lazily_by_name(clean_models, monkeypatch, tmp_path):
    (tmp_path / "ep_time.py").write_text(
        "def per_request(prefill_tokens, decoding, kv_tokens, request_s=0.001):\n"
        '    """Seconds per request in the round."""\n'
        "    return 0.005 + request_s * decoding\n\nNOT_CALLABLE = 3\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    _entry_points(
        monkeypatch,
        ("per-request", "ep_time:per_request"),
        ("three", "ep_time:NOT_CALLABLE"),
        ("bad", "no_such_mod_xyz:f"),
    )
    time_model("linear")  # a registered name loads nothing
    assert "per-request" not in TIME_MODELS
    m = time_model("per-request", request_s=0.002)
    assert m.summary == "Seconds per request in the round. [plug-in unknown]"
    assert m.duration(0, 3, 0) == pytest.approx(0.011)
    with pytest.raises(PluginError, match="'three = ep_time:NOT_CALLABLE'.*int object is not"):
        time_model("three")
    with pytest.raises(KeyError, match="unknown time model 'three'"):
        time_model("three")  # tried once: now simply unknown
    with pytest.raises(PluginError, match="'bad = no_such_mod_xyz:f'.*ModuleNotFoundError"):
        registry.load_time_model_plugins()


def test_shipped_profiles():
    (prof,) = [m for m in read_profiles() if m.name == "llama2-70b-a100x2"]
    assert set(prof.values) == set(LINEAR_DEFAULTS) and prof.values["base_s"] > 0
    assert "Llama-2-70B" in prof.summary and "A100" in prof.summary
    assert time_model("llama2-70b-a100x2").values == prof.values
    assert time_model("llama2-70b-a100x2", base_s=0.05).values["base_s"] == 0.05
    assert prof.function is time_model("linear").function


@pytest.mark.parametrize(
    ("content", "match"),
    [
        ("[]", "needs a list 'profiles'"),
        ("{", "cannot read"),
        ('{"profiles": [{"name": "x"}]}', "profile 0: missing 'model', 'gpu', 'form'"),
        (
            '{"profiles": [{"name": "x", "model": "m", "gpu": "g", "form": "cubic", '
            '"coefficients": {"base_s": 1}}]}',
            "form 'cubic' is not known",
        ),
        (
            '{"profiles": [{"name": "x", "model": "m", "gpu": "g", "form": "linear", '
            '"coefficients": {"base_s": 1, "gpu_s": 2}}]}',
            "unknown coefficient 'gpu_s'",
        ),
        (
            '{"profiles": [{"name": "x", "model": "m", "gpu": "g", "form": "linear", '
            '"coefficients": {"base_s": 0}}]}',
            r"\('x'\): time model 'x': base_s must be > 0",
        ),
        (
            '{"profiles": [{"name": "x", "model": "m", "gpu": "g", "form": "linear", '
            '"coefficients": {"base_s": 1}, "extra": 1}]}',
            "unknown key 'extra'",
        ),
    ],
)
def test_malformed_profiles_are_named(tmp_path, content, match):
    path = tmp_path / "p.json"
    path.write_text(content)
    with pytest.raises(TimeModelError, match=match):
        read_profiles(path)


def test_a_profile_file_of_two(tmp_path):
    prof = {
        "name": "toy-gpu",
        "model": "Toy-1B",
        "gpu": "1 x T4",
        "form": "linear",
        "coefficients": {"base_s": 0.004, "prefill_token_s": 2e-5},
        "source": {"note": "made up"},
        "fit": {"r2": 0.9},
    }
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"profiles": [prof, {**prof, "name": "toy-gpu2"}]}))
    a, b = read_profiles(path)
    assert (a.name, b.name) == ("toy-gpu", "toy-gpu2")
    assert a.values == {
        **dict.fromkeys(LINEAR_DEFAULTS, 0.0),
        "base_s": 0.004,
        "prefill_token_s": 2e-5,
    }
    assert a.summary == "Toy-1B on 1 x T4, fitted linear (made up)"
    path.write_text(json.dumps({"profiles": [prof, prof]}))
    with pytest.raises(TimeModelError, match="'toy-gpu' given twice"):
        read_profiles(path)


def test_a_plugin_named_like_a_shipped_profile_is_refused_everywhere(
    clean_models, monkeypatch, tmp_path
):
    """A plug-in time model named like a shipped profile was listed by ``time-models`` (the
    plug-ins loaded first) but not used by ``run`` (the profile found first). Now the name is
    reserved: every route refuses the clash, naming the entry point."""
    (tmp_path / "ep_clash.py").write_text(
        "def mine(prefill_tokens, decoding, kv_tokens):\n    return 1.0\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    _entry_points(monkeypatch, ("llama2-70b-a100x2", "ep_clash:mine"))
    message = r"'llama2-70b-a100x2 = ep_clash:mine'.*is shipped with lpsched"
    with pytest.raises(PluginError, match=message):  # run's route: a look-up by name
        time_model("llama2-70b-a100x2")
    with pytest.raises(PluginError, match=message):  # time-models' route: load them all
        registry.load_time_model_plugins()
    with pytest.raises(PluginError, match=message):  # and again: never silently the profile
        parse_time_model("llama2-70b-a100x2")
    with pytest.raises(TimeModelError, match="shipped with lpsched"):
        register_time_model("llama2-70b-a100x2", lambda P, D, K: 1.0, replace=True)


def test_a_plugin_module_claiming_a_shipped_profile_is_refused_on_lookup(
    clean_models, monkeypatch, tmp_path
):
    """``LPSCHED_PLUGINS=mod`` where mod registers ``llama2-70b-a100x2``: ``run --time-model
    llama2-70b-a100x2`` used the shipped profile and never imported the module."""
    (tmp_path / "tm_shipped_clash.py").write_text(
        "import lpsched\n"
        "lpsched.register_time_model('llama2-70b-a100x2', lambda P, D, K: 1.0, 'mine')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    _entry_points(monkeypatch)
    monkeypatch.setenv("LPSCHED_PLUGINS", "tm_shipped_clash")
    with pytest.raises(PluginError, match="tm_shipped_clash.*shipped with lpsched"):
        time_model("llama2-70b-a100x2")
