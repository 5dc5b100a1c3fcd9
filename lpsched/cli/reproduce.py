"""``lpsched reproduce NAME``: a paper table from the reproductions' registry, its rows written
as they finish so that a rerun resumes."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from ..interrupts import signals_as_interrupt
from ..research.reproductions.choices import StudyChoiceError
from ..research.reproductions.options import study_options, taking
from ..research.reproductions.registry import REPRODUCTIONS
from ..sweeps.engine import SweepWorkerError
from ..sweeps.workers import MAX_WORKERS, check_workers
from .common import (
    RegistryChoice,
    bad_input,
    error_text,
    finite,
    flag,
    interrupted,
    policy_options,
    solver_chatter_to_stderr,
    work_limit_option,
)


@click.command(
    epilog="\b\nReproductions:\n"
    + "\n".join(f"  {r.name:18s}{r.description}" for r in REPRODUCTIONS.values())
)
@click.argument("name", type=RegistryChoice(REPRODUCTIONS))
@click.option(
    "--out",
    "out_dir",
    default="results",
    show_default=True,
    type=click.Path(file_okay=False),
    help="Folder for the CSV and Markdown files.",
)
@click.option("--seeds", help="Comma-separated seeds (default: the study's).")
@click.option("--sizes", help="Comma-separated numbers of requests n (default: the study's).")
@click.option(
    "--time-limits",
    metavar="SPEC",
    help="Solver seconds per instance: one number for every size, or N=SECONDS per size "
    "(e.g. 30=60,200=300,2000=600) [default: the study's].",
)
@click.option(
    "--time-limit",
    type=click.FloatRange(min=0, min_open=True),
    callback=finite,
    help=f"Solver seconds of every solve, for the reproductions with one limit "
    f"({taking('time_limit')}) [default: the study's].",
)
@work_limit_option(
    f"Deterministic work of every solve ({taking('work_limit')}: HiGHS' branch-and-bound "
    "nodes), so that the table does not change with the machine's load; --time-limit stays a "
    "safety net and each row's stopped_by says which ended it [default: the study's]."
)
@click.option(
    "--trials",
    type=click.IntRange(min=1),
    help=f"Number of trials ({taking('trials')}) [default: the study's].",
)
@click.option(
    "--trace-dir",
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
    help="Tasks computed at once: local processes, or Dask workers with --scheduler local, "
    f"at most {MAX_WORKERS} (four per core, at least 8) [default: all local cores, or the "
    "cluster's own workers with a scheduler address].",
)
@click.option(
    "--scheduler",
    metavar="ADDRESS",
    help="Send the tasks to the Dask scheduler at ADDRESS (tcp://HOST:PORT), or 'local' for a "
    "LocalCluster of --workers processes. Needs: pip install 'lpsched[cluster]'.",
)
@flag("--fresh", help="Start over; the old CSV is kept as NAME.csv.bak-TIMESTAMP.")
@flag(
    "--strict",
    help="Refuse a CSV that holds rows of other parameters or versions (default: ignore them).",
)
@click.option(
    "--policies",
    metavar="A,B,...|+A,...",
    help=f"The policies of a per-policy table ({taking('policies')}): A,B,... is the "
    "exact list, in column order; +A,+B adds A and B to the study's own list [default: the "
    "study's].",
)
@policy_options(
    "run the study in seconds, for the reproductions that take one (online-load: Poisson "
    "arrivals in seconds at a load measured in seconds, latencies in seconds)"
)
@flag("-v", "--verbose", help="Name each task as it starts and ends.")
@bad_input
def reproduce(name, out_dir, workers, scheduler, fresh, strict, verbose, model, **given):
    """Reproduce a paper table; rows are written as they finish and a rerun resumes.

    Every row records its parameters, the lpsched version and commit and the solver versions;
    the table uses only rows that match this run. Ctrl-C or SIGTERM stops the run (exit 130)
    and keeps every finished row; a worker process that dies (killed, out of memory) stops it
    with exit code 1, the finished rows kept.

    Your own policy enters a per-policy table with --import MODULE --policies +NAME: each row
    records the policy's name, a rerun with more policies computes only the new rows, and the
    rows of policies left out stay in the CSV, out of the table. --option and --time-model
    values are part of every row's parameters, so a rerun with other values computes the
    table anew.
    """
    with solver_chatter_to_stderr():  # a plug-in policy loaded here prints on import
        opts = study_options(name, time_model=model, **given)
    opts.update(scheduler=scheduler, fresh=fresh, strict=strict, verbose=verbose)
    opts["workers"] = workers or (1 if scheduler not in (None, "local") else os.cpu_count() or 1)
    try:
        check_workers(opts["workers"], scheduler)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="'--workers'") from None
    try:
        with signals_as_interrupt(), solver_chatter_to_stderr():
            table = REPRODUCTIONS[name].run(out_dir, **opts)
    except KeyboardInterrupt as exc:
        interrupted(kept_rows_line(exc, out_dir))
    except SweepWorkerError as exc:
        click.echo(f"lpsched: error: {error_text(exc)}", err=True)
        sys.exit(1)
    except (StudyChoiceError, ImportError) as exc:  # raised before the sweep starts
        raise click.UsageError(str(exc)) from None
    click.echo(table)
    written = sorted(p.name for p in Path(out_dir).iterdir() if not p.name.startswith("."))
    click.echo(f"\nresults in {out_dir}/: {', '.join(written)}", err=True)


def kept_rows_line(exc: KeyboardInterrupt, out_dir: str) -> str:
    """What an interrupted ``lpsched reproduce`` kept, for its last line.

    Parameters
    ----------
    exc : KeyboardInterrupt
        The interruption; raised by :func:`~lpsched.sweeps.engine.run_sweep`, its
        ``rows_kept`` says how many rows of the run's tasks the sweep's CSV holds.
    out_dir : str
        The ``--out`` folder.

    Returns
    -------
    str
        That no task had finished when the CSV holds none of the run's rows, else how many
        are kept; without ``rows_kept`` (a signal outside the sweep: while the study was set
        up or its table written), that the rows written are kept.

    Notes
    -----
    Source: ours.
    """
    rows = getattr(exc, "rows_kept", None)
    if rows is None:
        return f"stopped outside the sweep; the rows written are kept in {out_dir}/"
    if rows == 0:
        return f"no task had finished, so no row of this run is in {out_dir}/; rerun to start"
    return f"the {rows:,} finished row(s) are kept in {out_dir}/, rerun to resume"
