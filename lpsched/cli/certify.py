"""``lpsched certify``: the best schedule, the best lower bound and the certified gap of an
instance, by :func:`lpsched.certify.certify`."""

from __future__ import annotations

import os

import click

from ..solvers.options import MAX_THREADS
from .common import (
    bad_input,
    best_schedule_option,
    check_output,
    finite,
    json_option,
    solve_and_report,
    verbose_option,
)


@click.command()
@click.argument("instance", required=False)
@click.option(
    "--time-limit",
    type=click.FloatRange(min=0, min_open=True),
    default=60.0,
    show_default=True,
    callback=finite,
    help="Seconds for the whole run (the list policies always finish first).",
)
@click.option(
    "--threads",
    type=click.IntRange(min=1, max=MAX_THREADS),
    default=None,
    help="HiGHS / CP-SAT threads (default: theirs).",
)
@click.option(
    "--seed",
    type=click.IntRange(min=0, max=2**63 - 1),
    default=0,
    show_default=True,
    help="Seed of the searches.",
)
@best_schedule_option
@json_option
@verbose_option
@bad_input
def certify(
    instance: str | None,
    time_limit: float,
    threads: int | None,
    seed: int,
    output: str | None,
    as_json: bool,
    verbose: bool,
) -> None:
    """The best schedule, the best valid lower bound and the certified gap of INSTANCE
    (default: the shipped default instance), choosing methods by its size.

    Prints the schedule's TEL and the method that found it, the bound and the method that
    proved it, the gap, and which method improved which side when. Status 'optimal' only
    when the bound meets the TEL. Ctrl-C or SIGTERM stops it: the best schedule and bound so
    far are printed (and written with -o), exit code 130.
    """
    from ..certify import certify as run_certify

    check_output(output, instance)
    if output is not None:  # before a run of minutes, not after it
        folder = os.path.dirname(os.path.abspath(output))
        if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
            raise click.BadParameter(f"{output}: cannot write there", param_hint="-o")
    solve_and_report(
        instance,
        "certify",
        lambda inst, progress: run_certify(
            inst, time_limit, threads=threads, seed=seed, progress=progress
        ),
        output=output,
        as_json=as_json,
        verbose=verbose,
        nothing="no schedule found yet",
    )
