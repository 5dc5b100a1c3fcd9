"""``lpsched generate`` and ``lpsched gadget``: instance files, from the shipped workloads, from
trace files, or from the NP-hardness gadgets."""

from __future__ import annotations

import click
from tabulate import tabulate

from ..generators.intervals import from_spec
from ..generators.lmsys import LMSYS_PARAMETERS
from ..generators.small import EXACT_WORKLOADS
from ..generators.three_partition import gadget as make_gadget
from ..generators.three_partition import tel_threshold
from ..generators.workloads import WORKLOADS, describe, from_traces, generate, parse_mixture
from ..instance import Instance
from ..io import write_instance
from .common import bad_input, check_output, finite, floats


def _with_intervals(inst: Instance, spec: str, seed: int) -> Instance:
    """Apply ``--intervals`` (:func:`lpsched.generators.intervals.from_spec`)."""
    try:
        return from_spec(inst, spec, seed=seed)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--intervals") from None


def _list_workloads(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    rows = [[name, describe(name)] for name in WORKLOADS]
    rows += [
        [name, (EXACT_WORKLOADS[name].__doc__ or "").strip().splitlines()[0].replace("``", "")]
        for name in EXACT_WORKLOADS
    ]
    click.echo(
        tabulate(
            rows, headers=["workload", "source"], disable_numparse=True, maxcolwidths=[None, 76]
        )
    )
    click.echo(
        "\nMix them inline: 'lmsys-turn:0.8,summarization:0.2'. The LMSYS readings take "
        f"parameters: 'lmsys-turn[prefill_sigma=1.2;decode_sigma=0.9;max_total=4096]' "
        f"({', '.join(LMSYS_PARAMETERS)}). The last {len(EXACT_WORKLOADS)} are small "
        "instances for exact solving and do not mix."
    )
    ctx.exit(0)


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
@click.option("-n", "n", type=click.IntRange(min=1), required=True, help="Number of requests.")
@click.option(
    "--memory", type=click.IntRange(min=1), required=True, help="KV-cache budget M in tokens."
)
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True)
@click.option(
    "--arrival-rate",
    type=click.FloatRange(min=0, min_open=True, max=1e9),
    default=None,
    callback=finite,
    help="Poisson arrivals, requests per round (default: all at round 0).",
)
@click.option(
    "--arrival-rate-s",
    type=click.FloatRange(min=0, min_open=True, max=1e9),
    default=None,
    callback=finite,
    help="Poisson arrivals in seconds (arrival_s), requests per second: the online policies "
    "admit by them under --time-model (SPEC section 10); the arrival rounds stay 0.",
)
@click.option(
    "--trace",
    "traces",
    multiple=True,
    help="Sample real rows from this trace CSV instead (repeatable).",
)
@click.option(
    "--weights", default=None, help="With several --trace: comma-separated shares, e.g. 0.8,0.2."
)
@click.option(
    "--round-ms",
    type=click.FloatRange(min=0.001),
    default=None,
    callback=finite,
    help="With --trace: keep the trace's arrived_at, one round lasting this many ms.",
)
@click.option(
    "--arrival-seconds",
    is_flag=True,
    help="With --trace: keep the trace's arrived_at in seconds (from the earliest drawn) as "
    "each request's arrival_s, which the online policies admit by under --time-model (SPEC "
    "section 10); with or without --round-ms, which gives the arrival rounds.",
)
@click.option(
    "--skip-oversized",
    is_flag=True,
    help="With --trace: leave out rows with s + o > M (reported) instead of failing on them.",
)
@click.option(
    "--intervals",
    "interval_spec",
    default=None,
    help="Add decode-length prediction intervals (for amax, amin, sorted-f-amin): "
    "exact, multiplicative:EPS, bins or none.",
)
@click.option("--name", default=None, help="Instance name.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True)
@bad_input
def generate_cmd(
    workload,
    n,
    memory,
    seed,
    arrival_rate,
    arrival_rate_s,
    traces,
    weights,
    round_ms,
    arrival_seconds,
    skip_oversized,
    interval_spec,
    name,
    output,
) -> None:
    """Write a random instance JSON from a shipped workload or from trace files."""
    check_output(output, *traces)
    if traces:
        w = None if weights is None else floats(weights, "--weights")
        if arrival_rate is not None or arrival_rate_s is not None:
            raise click.UsageError(
                "--arrival-rate and --arrival-rate-s apply to --workload, not to --trace "
                "(use --round-ms or --arrival-seconds to keep the trace's arrivals)"
            )
        round_s = None if round_ms is None else round_ms / 1000.0
        inst = from_traces(
            traces,
            n,
            memory,
            weights=w,
            seed=seed,
            round_s=round_s,
            name=name,
            skip_oversized=skip_oversized,
            arrival_seconds=arrival_seconds,
        )
    else:
        if skip_oversized:
            raise click.UsageError("--skip-oversized goes with --trace")
        if weights is not None:
            raise click.UsageError("--weights goes with --trace; for workloads write name:weight")
        if round_ms is not None:
            raise click.UsageError("--round-ms goes with --trace")
        if arrival_seconds:
            raise click.UsageError("--arrival-seconds goes with --trace")
        if arrival_rate is not None and arrival_rate_s is not None:
            raise click.UsageError(
                "give --arrival-rate (rounds) or --arrival-rate-s (seconds), not both"
            )
        if workload in EXACT_WORKLOADS:
            if arrival_rate is not None or arrival_rate_s is not None:
                raise click.UsageError(f"--arrival-rate does not apply to {workload}")
            inst = EXACT_WORKLOADS[workload](n, seed, memory)
            if name is not None:
                inst = inst.replace(name=name)
        else:
            try:
                parse_mixture(workload)
            except ValueError as exc:
                raise click.BadParameter(str(exc), param_hint="--workload") from None
            inst = generate(
                workload,
                n,
                memory,
                seed=seed,
                arrival_rate=arrival_rate,
                name=name,
                arrival_rate_s=arrival_rate_s,
            )
    if interval_spec is not None:
        inst = _with_intervals(inst, interval_spec, seed)
    write_instance(inst, output)
    click.echo(f"wrote {output}: n = {inst.n}, M = {inst.memory}", err=True)
    if skip_oversized:
        skipped = inst.metadata["skipped_oversized"]
        per_file = ", ".join(f"{k} in {p}" for k, p in zip(skipped, traces, strict=True))
        click.echo(
            f"skipped {sum(skipped)} rows with s + o > M = {inst.memory} ({per_file}; "
            "recorded in metadata.skipped_oversized)",
            err=True,
        )
    capped = inst.metadata.get("intervals", {}).get("capped", 0)
    if capped:
        click.echo(
            f"note: {capped} upper bounds decode_hi were capped at M - prefill "
            "(recorded in metadata.intervals.capped)",
            err=True,
        )


@click.group()
def gadget() -> None:
    """NP-hardness gadgets (SPEC section 8)."""


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
@click.option("--distinct", is_flag=True, help="Make the 3m values distinct.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True)
@bad_input
def three_partition(
    m: int, B: int, yes: bool | None, distinct: bool, seed: int, output: str
) -> None:
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
