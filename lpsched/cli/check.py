"""``lpsched check`` and ``lpsched plot``: a schedule file, checked against its instance or
drawn."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from ..io import read_schedule
from ..schedule import memory_peak
from ..timing.model import TimeModel
from ..timing.seconds import to_seconds
from .common import (
    SECONDS_COLUMNS,
    bad_input,
    check_output,
    import_option,
    json_option,
    load_instance,
    model_line,
    one_line,
    phase1_for,
    phase1_option,
    seconds_cell,
    solver_chatter_to_stderr,
    time_model_option,
)

#: The figure formats of ``lpsched plot`` (matplotlib's Agg, PDF and SVG back ends).
PLOT_SUFFIXES = (".png", ".pdf", ".svg")


@click.command()
@click.argument("instance")
@click.argument("schedule_file", metavar="SCHEDULE")
@json_option
@time_model_option("print TEL, latency, TTFT, TPOT and tokens/s in seconds")
@import_option
@bad_input
def check(instance: str, schedule_file: str, as_json: bool, model: TimeModel | None) -> None:
    """Check that SCHEDULE (schedule JSON, SPEC section 9) is feasible for INSTANCE.

    Prints TEL, makespan, the peak memory and its round, and the first violation of SPEC
    section 2 (a start before the arrival, a round over M, inconsistent runs), if any. A
    file that records a time model (lpsched schedule --time-model) has its per-request
    seconds recomputed, and a disagreement is an error; its figures in seconds are printed
    (under --time-model, if given, instead). Exit code 0: feasible; 1: infeasible, or a file
    that cannot be read or whose seconds disagree (the message says where).
    """
    inst = load_instance(instance)
    sched = read_schedule(schedule_file, inst, check=False)
    recorded = sched.info.get("time_model")
    if model is None or model == recorded:
        secs = sched.info.get("seconds")
    else:
        secs = to_seconds(sched, model)
    bad = sched.violations(limit=1)
    peak, at = memory_peak(sched)
    out = {
        "schedule": schedule_file,
        "instance": inst.name,
        "policy": sched.policy,
        "n": inst.n,
        "memory": inst.memory,
        "feasible": not bad,
        "tel": sched.tel,
        "mean_latency": sched.mean_latency,
        "makespan": sched.makespan,
        "peak_memory": peak,
        "peak_round": at,
        "evictions": sched.evictions,
        "wasted_tokens": sched.wasted_tokens,
        "first_violation": bad[0] if bad else None,
    }
    if recorded is not None:
        out["recorded_time_model"] = recorded.to_dict()
    if secs is not None:
        out.update(time_model=secs.model.to_dict(), **secs.stats())
    if as_json:
        click.echo(json.dumps(out))
    else:
        lines = [
            f"schedule     {one_line(schedule_file)} ({one_line(sched.policy or 'no policy')}) "
            f"of {one_line(inst.name)}: n = {inst.n}, M = {inst.memory} tokens",
            f"TEL          {sched.tel} rounds (mean latency {sched.mean_latency:.1f})",
            f"makespan     {sched.makespan} rounds",
            f"peak memory  {peak} tokens at round {at} ({100 * peak / inst.memory:.1f}% of M)",
        ]
        if sched.runs is not None:
            lines.append(f"evictions    {sched.evictions} ({sched.wasted_tokens} tokens wasted)")
        if recorded is not None:
            lines.append(
                f"recorded     seconds under time model {recorded.name}: every request's "
                "latency, TTFT and TPOT agree with the starts"
            )
        if secs is not None:
            figures = secs.stats()
            lines.append(f"in seconds   {model_line(secs.model)}")
            lines += [
                f"             {head:17s}{seconds_cell(figures, key, fmt)}"
                for key, head, fmt in SECONDS_COLUMNS
            ]
        lines.append(f"infeasible   {bad[0]}" if bad else "feasible     yes")
        click.echo("\n".join(lines))
    if bad:
        sys.exit(1)


@click.command()
@click.argument("instance")
@click.argument("schedule_file", metavar="SCHEDULE")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    required=True,
    help="FIG.png, FIG.pdf or FIG.svg.",
)
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
@time_model_option("draw against seconds instead of rounds")
@import_option
@bad_input
def plot(
    instance: str,
    schedule_file: str,
    output: str,
    color: str,
    phase1: str | None,
    max_requests: int,
    model: TimeModel | None,
) -> None:
    """Draw SCHEDULE of INSTANCE: a Gantt chart over the memory profile, M drawn.

    Rows are requests ordered by start, bars from start to completion (evicted runs hatched),
    coloured by workload class or Sorted-F batch; the memory panel stacks the KV cache held
    by each colour. With --time-model the axis is seconds (each round as long as the model
    says). An infeasible schedule is drawn too (a note says so).
    """
    if Path(output).suffix.lower() not in PLOT_SUFFIXES:
        raise click.BadParameter(
            f"{output!r}: the figure format comes from the suffix, one of "
            f"{', '.join(PLOT_SUFFIXES)}",
            param_hint="-o",
        )
    check_output(output, instance, schedule_file)
    inst = load_instance(instance)
    sched = read_schedule(schedule_file, inst, check=False)
    import matplotlib

    matplotlib.use("Agg")
    from ..plotting import plot_schedule, save_figure
    from ..plotting.schedule import batch_labels

    groups = None
    if color == "batch":
        with solver_chatter_to_stderr():
            groups = batch_labels(inst, phase1_for(inst, phase1))
    secs = None if model is None else to_seconds(sched, model)
    save_figure(
        plot_schedule(sched, groups=groups, max_requests=max_requests, seconds=secs), output
    )
    bad = sched.violations(limit=1)
    note = f"; note: infeasible: {bad[0]}" if bad else ""
    click.echo(f"wrote {output}: {inst.n} requests, TEL {sched.tel} rounds{note}", err=True)
