"""``lpsched check`` and ``lpsched plot``: a schedule file, checked against its instance or
drawn."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from ..io import check_output, check_schedule_file, read_schedule, schedule_seconds
from .common import (
    bad_input,
    json_option,
    load_instance,
    output_option,
    phase1_option,
    solver_chatter_to_stderr,
    time_model_option,
)

#: The figure formats of ``lpsched plot`` (matplotlib's Agg, PDF and SVG back ends).
PLOT_SUFFIXES = (".png", ".pdf", ".svg")
#: The help of ``lpsched plot --view`` and ``--max-rounds``.
VIEW_HELP = (
    "schedule (default): a Gantt chart over the memory profile; rounds: one stacked bar per "
    "round, a segment per running request (its id and tokens), in rounds only."
)
MAX_ROUNDS_HELP = "the rounds drawn, from round 1 [default: 40]."


@click.command()
@click.argument("instance")
@click.argument("schedule_file", metavar="SCHEDULE")
@json_option()
@time_model_option("print TEL, latency, TTFT, TPOT and tokens/s in seconds")
@bad_input
def check(instance, schedule_file, as_json, model) -> None:
    """Check that SCHEDULE (schedule JSON, SPEC section 9) is feasible for INSTANCE.

    Prints TEL, makespan, the peak memory and its round, and the first violation of SPEC
    section 2 (a start before the arrival, a round over M, inconsistent runs), if any. A
    file that records a time model (lpsched schedule --time-model) has its per-request
    seconds recomputed, and a disagreement is an error; its figures in seconds are printed
    (under --time-model, if given, instead). Exit code 0: feasible; 1: infeasible, or a file
    that cannot be read or whose seconds disagree (the message says where).
    """
    report = check_schedule_file(load_instance(instance), schedule_file, model)
    click.echo(json.dumps(report.to_dict()) if as_json else report.summary())
    if report.violation is not None:
        sys.exit(1)


@click.command()
@click.argument("instance")
@click.argument("schedule_file", metavar="SCHEDULE")
@output_option("FIG.png, FIG.pdf or FIG.svg.")
@click.option(
    "--color",
    type=click.Choice(["class", "batch"]),
    default="class",
    show_default=True,
    help="class: the workload class of each request (from the instance's metadata or ids); "
    "batch: the Sorted-F Phase-1 batches of the instance.",
)
@phase1_option("(with --color batch)")
@click.option(
    "--max-requests",
    type=click.IntRange(min=1),
    default=40,
    show_default=True,
    help="Up to this many requests one labelled bar each; above, every request one thin line.",
)
@click.option(
    "--view", type=click.Choice(["schedule", "rounds"]), default="schedule", help=VIEW_HELP
)
@click.option(
    "--max-rounds", type=click.IntRange(min=1), default=40, help="--view rounds: " + MAX_ROUNDS_HELP
)
@time_model_option("draw against seconds instead of rounds")
@bad_input
def plot(
    instance, schedule_file, output, color, phase1, max_requests, view, max_rounds, model
) -> None:
    """Draw SCHEDULE of INSTANCE: a Gantt chart over the memory profile, M drawn.

    Rows are requests ordered by start, bars from start to completion (evicted runs hatched),
    coloured by workload class or Sorted-F batch; the memory panel stacks the KV cache held
    by each colour, each round t holding m(t) over (t - 1, t]. With --view rounds, the
    KV cache round by round instead: a bar per round, a segment per running request. An
    infeasible schedule is drawn too (a note says so).
    """
    if view == "rounds" and model is not None:
        raise click.UsageError("--view rounds is drawn in rounds: drop --time-model")
    if Path(output).suffix.lower() not in PLOT_SUFFIXES:
        raise click.BadParameter(
            f"{output!r}: the figure format comes from the suffix, one of "
            f"{', '.join(PLOT_SUFFIXES)}",
            param_hint="-o",
        )
    check_output(output, instance, schedule_file)
    inst = load_instance(instance)
    sched = read_schedule(schedule_file, inst, check=False)
    if model is not None:
        schedule_seconds(sched, model, schedule_file)  # refused before anything is drawn
    import matplotlib

    matplotlib.use("Agg")
    from ..plotting import save_schedule_plot

    with solver_chatter_to_stderr():  # Phase 1 of --color batch may print
        save_schedule_plot(
            sched,
            output,
            color=color,
            phase1=phase1,
            max_requests=max_requests,
            time_model=model,
            view=view,
            max_rounds=max_rounds,
        )
    bad = sched.violations(limit=1)
    note = f"; note: infeasible: {bad[0]}" if bad else ""
    click.echo(f"wrote {output}: {inst.n} requests, TEL {sched.tel} rounds{note}", err=True)
