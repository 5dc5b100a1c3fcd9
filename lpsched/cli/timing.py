"""``lpsched time-models``: the registered time models (SPEC section 10) and their parameters."""

from __future__ import annotations

import json

import click

from ..timing.registry import (
    TIME_MODELS,
    describe_time_models,
    load_time_model_plugins,
    time_model_names,
)
from .common import bad_input, import_option, json_option, plugin_errors_after


@click.command(name="time-models")
@import_option
@json_option("one JSON list (name, summary, parameters, docs, source)")
@bad_input
def list_time_models(as_json: bool) -> None:
    """List the registered time models, profiles and plug-ins included (entry points
    'lpsched.time_models'), each with its parameters and their default values.

    Use one with --time-model NAME, or NAME:key=value,... to change parameters (run,
    schedule, check, plot). A plug-in that fails to load is reported on standard error after
    the list (exit 1); the others are listed.
    """
    with plugin_errors_after(load_time_model_plugins):
        if as_json:
            click.echo(json.dumps([TIME_MODELS[name].describe() for name in time_model_names()]))
        else:
            click.echo(describe_time_models())
