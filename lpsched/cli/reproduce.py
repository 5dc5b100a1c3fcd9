"""``lpsched reproduce NAME``: a paper table from the reproductions' registry, its rows written
as they finish so that a rerun resumes."""

from __future__ import annotations

import inspect
import math
import os
import sys
from pathlib import Path
from typing import Any

import click

from ..research.reproductions.choices import StudyChoiceError
from ..research.reproductions.registry import REPRODUCTIONS, accepts
from ..sweeps.engine import SweepWorkerError
from .common import (
    RegistryChoice,
    bad_input,
    interrupted,
    policy_names,
    policy_options,
    signals_as_interrupt,
    solver_chatter_to_stderr,
    verbose_flag,
)


def _integers(text: str, option: str, least: int) -> list[int]:
    """The comma-separated integers >= ``least`` of ``--seeds`` or ``--sizes``, each once."""
    try:
        values = [int(s) for s in text.split(",")]
    except ValueError:
        values = []
    if not values or min(values) < least:
        raise click.BadParameter(
            f"expected comma-separated integers >= {least}, got {text!r}", param_hint=option
        )
    return list(dict.fromkeys(values))


def _time_limits(text: str) -> float | dict[int, float]:
    """``--time-limits``: one number of seconds for every size, or ``N=S,N=S`` per size; each
    a finite number of seconds > 0, each size once."""

    def bad(why: str) -> click.BadParameter:
        return click.BadParameter(
            f"{why}; expected seconds (e.g. 60) or comma-separated N=SECONDS (e.g. "
            f"30=60,2000=600), got {text!r}",
            param_hint="--time-limits",
        )

    pairs: list[tuple[int | None, float]]
    try:
        if "=" not in text:
            pairs = [(None, float(text))]
        else:
            pairs = [(int(n), float(t)) for n, t in (part.split("=") for part in text.split(","))]
    except ValueError:
        raise bad("not a number of seconds") from None
    if any(not (math.isfinite(t) and t > 0) for _, t in pairs):
        raise bad("a time limit must be a finite number of seconds > 0")
    if pairs[0][0] is None:
        return pairs[0][1]
    limits = {int(n): t for n, t in pairs if n is not None}
    if len(limits) < len(pairs):
        raise bad("a size is given twice")
    return limits


def _taking(option: str) -> str:
    """The reproductions whose function takes the keyword ``option``, comma-separated."""
    return ", ".join(name for name, r in REPRODUCTIONS.items() if accepts(r, option))


def _study_options(name: str, given: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments of reproduction ``name`` from the command's options; an option
    the reproduction does not take is a usage error (exit code 2)."""
    repro, scheduler = REPRODUCTIONS[name], given["scheduler"]
    opts = {key: given[key] for key in ("scheduler", "fresh", "strict", "verbose")}
    opts["workers"] = given["workers"] or (
        1 if scheduler not in (None, "local") else os.cpu_count() or 1
    )
    policies = inspect.signature(repro.run).parameters.get("policies")
    per_policy, timed = _taking("policies"), _taking("time_model") or "none"
    checked = {  # keyword: (option's value, its parser, what a reproduction without it says)
        "seeds": (lambda t: _integers(t, "--seeds", 0), "has no seeds; drop --seeds"),
        "sizes": (lambda t: _integers(t, "--sizes", 1), "has no sizes; drop --sizes"),
        "time_limits": (_time_limits, "has no time limits; drop --time-limits"),
        "trace_dir": (str, "does not read traces; drop --trace-dir"),
        "policies": (
            lambda t: policy_names(t, "--policies", policies.default),
            f"has a fixed set of policies; drop --policies (per-policy tables: {per_policy})",
        ),
        "policy_options": (
            dict,
            f"takes no policy options; drop --option (per-policy tables: {per_policy})",
        ),
        "time_model": (
            lambda m: m,
            f"takes no time model; drop --time-model (reproductions that take one: {timed})",
        ),
    }
    given["time_model"] = given["model"]
    for key, (parse, lacks) in checked.items():  # each checked, then parsed, in this order
        if given[key] is None or given[key] == {}:
            continue
        if not accepts(repro, key):
            raise click.UsageError(f"'{name}' {lacks}")
        opts[key] = parse(given[key])
    if given["workloads"]:
        chosen = list(dict.fromkeys(given["workloads"]))
        if accepts(repro, "workloads"):
            opts["workloads"] = chosen
        elif accepts(repro, "workload") and len(chosen) == 1:
            opts["workload"] = chosen[0]
        elif accepts(repro, "workload"):
            raise click.UsageError(f"'{name}' takes one --workload, got {len(chosen)}")
        else:
            raise click.UsageError(f"'{name}' has no workload option; drop --workload")
    return opts


def _epilog() -> str:
    """The list of reproductions under ``--help``."""
    lines = ["\b", "Reproductions:"]
    return "\n".join(lines + [f"  {r.name:16s}{r.description}" for r in REPRODUCTIONS.values()])


@click.command(epilog=_epilog())
@click.argument("name", type=RegistryChoice(REPRODUCTIONS))
@click.option(
    "--out",
    "out_dir",
    default="results",
    show_default=True,
    type=click.Path(file_okay=False),
    help="Folder for the CSV and Markdown files.",
)
@click.option("--seeds", default=None, help="Comma-separated seeds (default: the study's).")
@click.option(
    "--sizes", default=None, help="Comma-separated numbers of requests n (default: the study's)."
)
@click.option(
    "--time-limits",
    default=None,
    metavar="SPEC",
    help="Solver seconds per instance: one number for every size, or N=SECONDS per size "
    "(e.g. 30=60,200=300,2000=600) [default: the study's].",
)
@click.option(
    "--trace-dir",
    default=None,
    type=click.Path(file_okay=False, exists=True),
    help="Folder of the public traces for the real-input rows [default: the trace cache, "
    "'lpsched traces path'; without the traces those rows are skipped, with a note].",
)
@click.option(
    "--workload",
    "workloads",
    multiple=True,
    metavar="SPEC",
    help="A workload of the study (repeatable), e.g. --workload paper-scaled for "
    "optimality-gaps, or a mixture spec for sensitivity [default: the study's].",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=None,
    help="Tasks computed at once: local processes, or Dask workers with --scheduler local "
    "[default: all local cores, or the cluster's own workers with a scheduler address].",
)
@click.option(
    "--scheduler",
    default=None,
    metavar="ADDRESS",
    help="Send the tasks to the Dask scheduler at ADDRESS (tcp://HOST:PORT), or 'local' for a "
    "LocalCluster of --workers processes. Needs: pip install 'lpsched[cluster]'.",
)
@click.option(
    "--fresh", is_flag=True, help="Start over; the old CSV is kept as NAME.csv.bak-TIMESTAMP."
)
@click.option(
    "--strict",
    is_flag=True,
    help="Refuse a CSV that holds rows of other parameters or versions (default: ignore them).",
)
@click.option(
    "--policies",
    default=None,
    metavar="A,B,...|+A,...",
    help=f"The policies of a per-policy table ({_taking('policies')}): A,B,... is the "
    "exact list, in column order; +A,+B adds A and B to the study's own list [default: the "
    "study's].",
)
@policy_options(
    "report the study in seconds, for the reproductions that take one (online-load: Poisson "
    "arrivals in seconds at a load measured in seconds, latencies in seconds)"
)
@verbose_flag("Name each task as it starts and ends.")
@bad_input
def reproduce(name: str, out_dir: str, **given: Any) -> None:
    """Reproduce a paper table; rows are written as they finish and a rerun resumes.

    Every row records its parameters, the lpsched version and commit and the solver versions;
    the table uses only rows that match this run. Ctrl-C or SIGTERM stops the run (exit 130)
    and keeps every finished row; a worker process that dies (killed, out of memory) stops it
    with exit code 1, the finished rows kept.

    Your own policy enters a per-policy table with --import MODULE --policies +NAME: each row
    records the policy's name, a rerun with more policies computes only the new rows, and the
    rows of policies left out stay in the CSV, out of the table. --option values are part of
    every row's parameters, so a rerun with other values computes the table anew.

    --time-model NAME runs a study in seconds (SPEC section 10), for the reproductions that
    take one; the model is part of every row's parameters.
    """
    opts = _study_options(name, given)
    try:
        with signals_as_interrupt(), solver_chatter_to_stderr():
            table = REPRODUCTIONS[name].run(out_dir, **opts)
    except KeyboardInterrupt:
        interrupted(f"the finished rows are kept in {out_dir}/, rerun to resume")
    except SweepWorkerError as exc:
        click.echo(f"lpsched: error: {exc}", err=True)
        sys.exit(1)
    except (StudyChoiceError, ImportError) as exc:  # raised before the sweep starts
        raise click.UsageError(str(exc)) from None
    click.echo(table)
    written = sorted(p.name for p in Path(out_dir).iterdir() if not p.name.startswith("."))
    click.echo(f"\nresults in {out_dir}/: {', '.join(written)}", err=True)
