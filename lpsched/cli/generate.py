"""``lpsched generate`` and ``lpsched gadget``: instance files, from the shipped workloads, from
trace files, or from the NP-hardness gadgets."""

from __future__ import annotations

import functools

import click

from ..generators.make import describe_workloads, generation_notes, make_instance
from ..generators.small import EXACT_WORKLOADS
from ..generators.three_partition import gadget as make_gadget
from ..generators.three_partition import tel_threshold
from ..generators.two_point import two_point
from ..generators.workloads import WORKLOADS
from ..io import check_output, write_instance
from .common import bad_input, finite, flag, output_option, seed_option


def _list_workloads(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    """Option callback of ``--list``: the workloads with their sources, then exit."""
    if value and not ctx.resilient_parsing:
        click.echo(describe_workloads())
        ctx.exit(0)


#: ``-n`` and ``--memory``: needed, except by the small workloads that draw them or have their own.
_N_HELP = "Number of requests (required, except for jaillet-synthetic, which draws it)."
_MEMORY_HELP = (
    "KV-cache budget M in tokens (required, except for a small workload with its own: "
    "jaillet-synthetic draws it, scaled-mix 50, uniform-small 30, paper-scaled 825)."
)

#: ``--arrival-rate`` and ``--arrival-rate-s``: a finite rate > 0.
_rate = functools.partial(
    click.option, type=click.FloatRange(min=0, min_open=True, max=1e9), callback=finite
)


@click.command(name="generate")
@click.option(
    "--workload",
    default="paper-mix",
    show_default=True,
    help=f"One of {', '.join(WORKLOADS)}, or 'name:weight,...' (an LMSYS reading takes "
    "'[prefill_sigma=S;decode_sigma=S;max_total=N]'); or a small synthetic one for exact "
    f"solving: {', '.join(EXACT_WORKLOADS)}. --list describes them.",
)
@click.option(
    "--list",
    "list_",
    is_flag=True,
    is_eager=True,
    expose_value=False,
    callback=_list_workloads,
    help="List the workloads with their sources and exit.",
)
@click.option("-n", "n", type=click.IntRange(min=1), help=_N_HELP)
@click.option("--memory", type=click.IntRange(min=1), help=_MEMORY_HELP)
@seed_option()
@_rate("--arrival-rate", help="Poisson arrivals, requests per round (default: all at round 0).")
@_rate(
    "--arrival-rate-s",
    help="Poisson arrivals in seconds (arrival_s), requests per second: the online policies "
    "admit by them under --time-model (SPEC section 10); the arrival rounds stay 0.",
)
@click.option(
    "--trace",
    "traces",
    multiple=True,
    help="Sample real rows from this trace CSV instead (repeatable).",
)
@click.option("--weights", help="With several --trace: comma-separated shares, e.g. 0.8,0.2.")
@click.option(
    "--round-ms",
    type=click.FloatRange(min=0.001),
    callback=finite,
    help="With --trace: keep the trace's arrived_at, one round lasting this many ms.",
)
@flag(
    "--arrival-seconds",
    help="With --trace: keep the trace's arrived_at in seconds (from the earliest drawn) as "
    "each request's arrival_s, which the online policies admit by under --time-model (SPEC "
    "section 10); with or without --round-ms, which gives the arrival rounds.",
)
@flag(
    "--skip-oversized",
    help="With --trace: leave out rows with s + o > M (reported) instead of failing on them.",
)
@click.option(
    "--intervals",
    "interval_spec",
    help="Add decode-length prediction intervals (for amax, amin, sorted-f-amin): "
    "exact, multiplicative:EPS, bins or none.",
)
@click.option("--name", help="Instance name.")
@output_option()
@bad_input
def generate_cmd(traces, weights, round_ms, interval_spec, output, **given) -> None:
    """Write a random instance JSON from a shipped workload or from trace files."""
    check_output(output, *traces)
    if traces and weights is not None:  # without --trace, make_instance refuses it as given
        try:
            weights = [float(x) for x in weights.split(",")]
        except ValueError:
            msg = f"expected comma-separated numbers, got {weights!r}"
            raise click.BadParameter(msg, param_hint="--weights") from None
    inst = make_instance(
        traces=traces,
        weights=weights,
        round_s=None if round_ms is None else round_ms / 1000.0,
        intervals=interval_spec,
        **given,
    )
    write_instance(inst, output)
    click.echo(f"wrote {output}: n = {inst.n}, M = {inst.memory}", err=True)
    for note in generation_notes(inst, traces):
        click.echo(note, err=True)


@click.group()
def gadget() -> None:
    """NP-hardness gadgets (SPEC section 8) and adversarial instances."""


@gadget.command(name="three-partition")
@click.option(
    "--m", "m", type=click.IntRange(min=1), required=True, help="Number of triples m (3m requests)."
)
@click.option(
    "--B",
    "B",
    type=click.IntRange(min=1),
    required=True,
    help="Target sum B of each triple (M = B + 3 tokens).",
)
@click.option(
    "--yes/--no",
    "yes",
    default=None,
    help="A yes-instance (planted triples) or a proven no-instance (one of the two is needed).",
)
@flag("--distinct", help="Make the 3m values distinct.")
@seed_option()
@output_option()
@bad_input
def three_partition(m, B, yes, distinct, seed, output) -> None:
    """Write the scheduling instance of a 3-Partition instance: TEL 3m(m+1)/2 is reachable
    iff the 3-Partition instance is a yes-instance."""
    if yes is None:  # the instance's answer is the point of a gadget: never a silent default
        raise click.UsageError("say which gadget: --yes (planted triples) or --no (proven no)")
    inst = make_gadget(m, B, yes=yes, seed=seed, distinct=distinct)
    write_instance(inst, output)
    click.echo(
        f"wrote {output}: {'yes' if yes else 'no'}-instance, n = {inst.n}, "
        f"M = {inst.memory}, TEL threshold {tel_threshold(m)}",
        err=True,
    )


#: The options of ``gadget two-point``: (option, default, least value, help); the defaults
#: are the paper's instance.
_TWO_POINT = (
    ("--prefill", 96, 0, "The common prompt length s (tokens)."),
    ("--memory", 256, 1, "KV-cache budget M (tokens)."),
    ("--n-long", 6, 0, "Long requests, listed first."),
    ("--long-decode", 160, 1, "Their decode length o (tokens)."),
    ("--n-short", 194, 0, "Short requests, listed after the long ones."),
    ("--short-decode", 1, 1, "Their decode length o (tokens)."),
)


def _two_point_options(fn):
    for decl, default, least, text in reversed(_TWO_POINT):
        kind = click.IntRange(min=least)
        fn = click.option(decl, type=kind, default=default, show_default=True, help=text)(fn)
    return fn


@gadget.command(name="two-point")
@_two_point_options
@output_option()
@bad_input
def two_point_cmd(output, **given) -> None:
    """Write the two-point instance of arXiv 2601.22996: a few long requests ahead of many
    one-token ones, one prompt length (fcfs and vllm: TEL 185,892 at the defaults; mcsf 13,448)."""
    inst = two_point(**given)
    write_instance(inst, output)
    click.echo(f"wrote {output}: n = {inst.n}, M = {inst.memory}", err=True)
