"""The time-model registry: one name, one :class:`~lpsched.timing.model.TimeModel`.

The command line (``--time-model NAME[:key=value,...]``), the Python API
(:func:`~lpsched.timing.seconds.to_seconds` takes a name too) and the schedule files (which
record a model by name and parameters) all go through :func:`parse_time_model` and
:func:`time_model`. Built in: ``unit``, ``linear`` (:mod:`.builtin`) and the fitted profiles of
``lpsched/data/time_profiles.json`` (:mod:`.profiles`, read on the first look-up of a name
that is not registered, so that a malformed profiles file breaks only the look-ups that need
it).

Plug-ins reach the registry as plug-in policies reach theirs (:mod:`lpsched.policies.registry`):
an installed package's entry point in the group ``lpsched.time_models`` (``NAME =
"module:function"``, the entry point's name is the model name, the function a duration
function as for :func:`register_time_model`), and the modules named in ``LPSCHED_PLUGINS``,
which the command line's ``--import MODULE`` imports and sets (:mod:`lpsched.plugins`); both
are loaded on the first look-up of a name that is not registered. :data:`TIME_MODELS` is a
:class:`~lpsched.plugins.Registry`, as the policies' registry is.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

from ..plugins import Registry
from .builtin import LINEAR, UNIT
from .model import TimeModel, TimeModelError, check_name
from .profiles import read_profiles

__all__ = [
    "TIME_MODELS",
    "ENTRY_POINT_GROUP",
    "register_time_model",
    "load_time_model_plugins",
    "time_model_names",
    "describe_time_models",
    "time_model",
    "parse_time_model",
    "parameters_of",
]

#: Entry-point group of plug-in time models: ``NAME = "module:function"`` registers the
#: duration function ``function`` (as for :func:`register_time_model`) as the model ``NAME``.
ENTRY_POINT_GROUP = "lpsched.time_models"
#: Registered time models by name: the built-ins first, then the shipped profiles (read once,
#: on the first look-up of a name not registered, the first listing or the first registration)
#: and the plug-ins as they are loaded. The profiles' names are reserved as the built-ins' are:
#: a plug-in named like one (an entry point or a ``register_time_model`` call) is refused with
#: a PluginError or TimeModelError naming it, on every route (ours: a schedule file records the
#: model by name, which must mean the same model everywhere).
TIME_MODELS: Registry[TimeModel] = Registry(
    "time model",
    (UNIT, LINEAR),
    check_name=check_name,
    error=TimeModelError,
    taken="{kind} {name!r} is already registered (register_time_model(..., replace=True) "
    "replaces it)",
    unknown="unknown {kind} {name!r}; registered: {names} ('lpsched time-models' lists them; "
    "--import MODULE brings your own)",
    group=ENTRY_POINT_GROUP,
    plugin=lambda name, function, description, source: register_time_model(
        name, function, description, source=source
    ),
    extra=read_profiles,
)


def parameters_of(function: Callable[..., Any]) -> dict[str, Any]:
    """The parameters of a duration function, from its signature: every parameter after the
    three loads, ``{name: default}``.

    Raises
    ------
    TimeModelError
        A parameter after the loads without a default, or fewer than three positional
        parameters. Source: ours.
    """
    where = getattr(function, "__qualname__", repr(function))
    try:
        params = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):  # builtins without a signature
        return {}
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(positional) < 3 and not any(p.kind == p.VAR_POSITIONAL for p in params):
        raise TimeModelError(
            f"duration function {where!r} must take the three loads (prefill_tokens, decoding, "
            "kv_tokens) first"
        )
    out: dict[str, Any] = {}
    for p in params[3:]:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.default is p.empty:
            raise TimeModelError(
                f"duration function {where!r}: parameter {p.name!r} needs a default (a number)"
            )
        out[p.name] = p.default
    return out


def register_time_model(
    name: str,
    function: Callable[..., Any],
    summary: str = "",
    parameters: Mapping[str, float] | None = None,
    *,
    docs: Mapping[str, str] | None = None,
    check: Callable[[dict[str, float]], None] | None = None,
    source: str = "",
    replace: bool = False,
) -> TimeModel:
    """Register a time model at run time; ``--time-model NAME``, :func:`time_model` and
    :func:`~lpsched.timing.seconds.to_seconds` then know its name (the command line through
    ``--import MODULE`` or an entry point).

    Parameters
    ----------
    name : str
        Registry name: letters, digits, ``-``, ``_`` or ``.``, not already registered.
    function : callable
        ``function(prefill_tokens, decoding, kv_tokens, **parameters) -> array_like``: seconds
        of each round, elementwise (SPEC section 10). The loads are int64 arrays of shape (T,):
        ``P_t`` prompt tokens prefilled, ``D_t`` requests processed, ``K_t`` KV-cache tokens
        held; the result has shape (T,) or is a scalar, and every duration must be positive
        and finite (checked on every call).
    summary : str
        One line for ``lpsched time-models``; default the first line of the function's
        docstring.
    parameters : mapping of str to float, optional
        Parameter names and default values; default the function's keyword parameters with
        their defaults (:func:`parameters_of`).
    docs : mapping of str to str, optional
        What each parameter means, with its unit.
    check : callable, optional
        ``check(values)`` raising ``ValueError`` for values the model refuses.
    source : str
        Where the model comes from (shown by ``lpsched time-models --json``).
    replace : bool, default False
        Replace a model of this name registered earlier by ``register_time_model`` (re-running
        a notebook cell); the built-in ``unit`` and ``linear`` are never replaced.

    Returns
    -------
    TimeModel
        The registered model, with the default parameter values.

    Raises
    ------
    TimeModelError
        A malformed or already registered name (``replace=True``: a built-in name or a shipped
        profile's, reserved), a function that does not take the three loads, or a default
        value that is not a finite number; also the errors of reading the profiles file.

    Notes
    -----
    Source: ours (mirrors :func:`lpsched.policies.registry.register_policy`).
    """
    TIME_MODELS.check_new(name, replace)
    if not callable(function):
        raise TimeModelError(f"time model {name!r}: function must be callable")
    values = parameters_of(function) if parameters is None else dict(parameters)
    if not summary:
        doc = (inspect.getdoc(function) or "").splitlines()
        summary = doc[0] if doc else getattr(function, "__qualname__", name)
    model = TimeModel(
        name,
        function,
        summary,
        tuple(values.items()),
        tuple(dict(docs or {}).items()),
        check,
        source
        or f"plug-in {getattr(function, '__module__', '?')}."
        f"{getattr(function, '__qualname__', '?')}",
    )
    TIME_MODELS[name] = model
    return model


def load_time_model_plugins(name: str | None = None) -> None:
    """Register the plug-in time models (all, or those named ``name``), as the plug-in policies
    are (:func:`lpsched.policies.registry.load_plugins`): the entry points of the group
    ``lpsched.time_models`` are duration functions, registered as by
    :func:`register_time_model`. Raises PluginError naming each one that fails. Source: ours.
    """
    TIME_MODELS.load_plugins(name)


def time_model_names() -> list[str]:
    """Names of all registered time models, profiles included, in registry order;
    TimeModelError for a malformed profiles file (:func:`~.profiles.read_profiles`). Source:
    ours."""
    return TIME_MODELS.names()


def time_model(name: str, **parameters: Any) -> TimeModel:
    """The registered model ``name``, with some parameters replaced.

    Parameters
    ----------
    name : str
        A registered name (the profiles and plug-ins are loaded on a miss).
    **parameters : float
        Parameter values replacing the model's defaults.

    Returns
    -------
    TimeModel

    Raises
    ------
    KeyError
        An unknown name (the message lists the registered names).
    TimeModelError
        An unknown parameter or a value the model refuses.
    PluginError
        A plug-in of this name that fails to load.

    Notes
    -----
    Source: ours (mirrors :func:`lpsched.policies.registry.parse_policy`).
    """
    model = TIME_MODELS.lookup(name)
    return model.with_parameters(**parameters) if parameters else model


def parse_time_model(spec: str | TimeModel) -> TimeModel:
    """A time model from its command-line form ``NAME`` or ``NAME:key=value,key=value``.

    Parameters
    ----------
    spec : str or TimeModel
        ``"linear:base_s=0.02,prefill_token_s=2e-4"``; a ``TimeModel`` is returned as it is.

    Returns
    -------
    TimeModel
        The registered model ``NAME`` with the values given (:func:`time_model`).

    Raises
    ------
    TimeModelError
        A malformed parameter list (not ``key=value`` pairs, a key given twice, a value that is
        not a number), and as :func:`time_model`: an unknown parameter or a value the model
        refuses.
    KeyError, PluginError
        As :func:`time_model`: an unknown name, a plug-in of this name that fails to load.

    Notes
    -----
    Source: ours.
    """
    if isinstance(spec, TimeModel):
        return spec
    if not isinstance(spec, str):
        raise TimeModelError(f"a time model is a name or NAME:key=value,..., got {spec!r}")
    name, colon, rest = spec.strip().partition(":")
    name = name.strip()
    values: dict[str, float] = {}
    if colon:
        for item in rest.split(","):
            key, eq, text = item.partition("=")
            key, text = key.strip(), text.strip()
            if not eq or not key or not text:
                raise TimeModelError(
                    f"time model {spec!r}: expected key=value pairs after ':', got {item.strip()!r}"
                )
            if key in values:
                raise TimeModelError(f"time model {name!r}: parameter {key!r} given twice")
            try:
                values[key] = float(text)
            except ValueError:
                raise TimeModelError(
                    f"time model {name!r}: parameter {key!r} must be a number, got {text!r}"
                ) from None
    return time_model(name, **values)


def describe_time_models() -> str:
    """The registered time models as text, one line each (name and summary), then one line per
    parameter with its default value and its doc (``lpsched time-models``).

    Raises
    ------
    TimeModelError
        A malformed profiles file (:func:`time_model_names`).

    Notes
    -----
    Source: ours.
    """
    names = time_model_names()
    width = max(len(name) for name in names) + 2
    lines = []
    for model in (TIME_MODELS[name] for name in names):
        lines.append(f"{model.name:{width}s}{model.summary}")
        docs = dict(model.docs)
        for key, value in model.parameters:
            doc = f"  {docs[key]}" if key in docs else ""
            lines.append(f"{'':{width}s}  {key} = {value:g}{doc}")
    return "\n".join(lines)
