"""``lpsched traces``: the public traces the workloads come from, listed, fetched into the cache,
and the cache folder."""

from __future__ import annotations

import json

import click

from .. import datasets
from .common import RegistryChoice, bad_input, json_option


@click.group()
def traces() -> None:
    """The public traces the workloads come from: list, fetch into the cache, show the cache.

    The cache is $LPSCHED_DATA_DIR, else the platform's user cache folder; $LPSCHED_TRACES_URL
    replaces the files' URLs by BASE/FILE (a mirror)."""


@traces.command(name="list")
@json_option()
def traces_list(as_json: bool) -> None:
    """The registered traces: name, file, rows, licence, source and whether they are cached."""
    if as_json:
        rows = datasets.describe_traces()
        click.echo(json.dumps({"cache": str(datasets.cache_dir()), "traces": rows}))
    else:
        click.echo(datasets.traces_table())


@traces.command(name="fetch")
@click.argument("names", nargs=-1, type=RegistryChoice(datasets.TRACES), metavar="[NAME]...")
@bad_input
def traces_fetch(names: tuple[str, ...]) -> None:
    """Download the traces NAMES (default: all; 'lpsched traces list' names them) into the
    cache and check their sha256; files already there with the right hash are kept."""
    for name, path in datasets.fetch(names or None, progressbar=True).items():
        click.echo(f"{name}: {path}")


@traces.command(name="path")
def traces_path() -> None:
    """Print the cache folder the reproductions read the traces from."""
    click.echo(datasets.cache_dir())
