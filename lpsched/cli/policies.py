"""``lpsched run``, ``schedule``, ``priorities`` and ``policies``: the registered policies on an
instance."""

from __future__ import annotations

import json
import sys

import click

from ..comparison import (
    DEFAULT_ONLINE_POLICIES,
    DEFAULT_POLICIES,
    check_clock,
    compare_policies,
    select_compared_policies,
)
from ..io import (
    check_output,
    schedule_summary_line,
    schedule_summary_to_dict,
    schedule_to_dict,
    write_priorities,
    write_schedule,
)
from ..policies.registry import POLICIES, describe_policies, load_plugins, run_policy
from ..policies.selection import (
    COMMAND_FLAGS,
    command_options,
    require_priority_list,
    select_policies,
)
from ..policies.sorted_f import DP_MAX_N, SWAP_MAX_N
from ..timing.seconds import to_seconds
from .common import (
    bad_input,
    import_option,
    json_option,
    load_instance,
    max_nonzeros_option,
    output_option,
    phase1_option,
    plugin_errors_after,
    policy_options,
    solver_chatter_to_stderr,
)

_lp_nonzeros = max_nonzeros_option("20,000,000; the LP of sorted-lp")


@click.command()
@click.argument("instance", required=False)
@click.option(
    "--policies",
    help=f"Comma-separated registry names; NAME+backfill runs NAME with backfill; +NAME,... "
    f"adds to the default [default: {','.join(DEFAULT_POLICIES)}; with arrivals "
    f"{','.join(DEFAULT_ONLINE_POLICIES)}].",
)
@phase1_option(
    f"[default: auto: dp up to n = {DP_MAX_N}, swap up to n = {SWAP_MAX_N:,} (the paper's choice "
    "at n = 2000), quantile above]"
)
@json_option()
@_lp_nonzeros
@policy_options(
    "print TEL, latency, TTFT, TPOT and tokens/s in seconds beside the rounds (with arrival_s: "
    "its clock, above)"
)
@bad_input
def run(instance, policies, phase1, as_json, max_nonzeros, policy_options, model) -> None:
    """Compare policies on INSTANCE (default: the paper's setting, n = 2000, M = 16,492).

    Each policy's TEL over the best policy's and over a lower bound on the optimum (the LP
    relaxation when its model has at most 100,000 non-zeros, else the combinatorial bound; a
    tighter one: lpsched certify). A policy that cannot run on this instance (the LP of
    sorted-lp too large) is reported and skipped; the others still run. With --time-model, a
    second table gives the figures in seconds, with their ratio to the best (the schedules are
    the same). On an instance with arrivals in seconds
    (arrival_s) --time-model also runs the clock: online-fcfs, online-mcsf, online-sorted-f,
    vllm and vllm-sf admit a request once it has arrived on the model's clock (SPEC section
    10), the default policies are the online ones, and the rounds table counts from each
    request's admission round.
    """
    with solver_chatter_to_stderr():  # a plug-in loaded here prints on import
        inst, names = select_compared_policies(
            policies, policy_options, lambda: load_instance(instance), model, reserved=COMMAND_FLAGS
        )
        opts = command_options(inst, policy_options, phase1=phase1, max_nonzeros=max_nonzeros)
        comparison = compare_policies(inst, names, time_model=model, options=opts)
    click.echo(json.dumps(comparison.to_dict()) if as_json else comparison.summary())
    if not comparison.results:
        click.echo(
            "lpsched: error: none of the selected policies could run on this instance", err=True
        )
        sys.exit(1)


@click.command()
@click.argument("instance")
@click.option("--policy", required=True, help="Registry name (NAME+backfill allowed).")
@phase1_option()
@output_option("Write the schedule JSON here (default: standard output).", required=False)
@_lp_nonzeros
@json_option("one JSON summary (policy, TEL, mean latency, ...; with the schedule without -o)")
@policy_options(
    "record the model and each request's latency, TTFT and TPOT in the file (with arrival_s: "
    "its clock, above)"
)
@bad_input
def schedule(
    instance, policy, phase1, output, max_nonzeros, as_json, policy_options, model
) -> None:
    """Schedule INSTANCE with one policy and write the schedule JSON (SPEC section 9).

    With --time-model on an instance with arrivals in seconds (arrival_s), an online policy
    admits on the model's clock and each request's "arrival" in the file is its admission
    round (SPEC section 10), which lpsched check recomputes.
    """
    check_output(output, instance)
    with solver_chatter_to_stderr():  # a plug-in policy prints on import or as it runs
        select_policies(policy, policy_options, option="--policy", reserved=COMMAND_FLAGS)
        inst = load_instance(instance)
        check_clock(inst, model, [policy])
        opts = command_options(
            inst, policy_options, phase1=phase1, max_nonzeros=max_nonzeros, time_model=model
        )
        sched = run_policy(inst, policy, **opts)
    sched.check()
    secs = None if model is None else to_seconds(sched, model)
    if output is not None:
        write_schedule(sched, output, secs)
    if as_json:
        click.echo(json.dumps(schedule_summary_to_dict(sched, policy, secs, output)))
    elif output is None:
        click.echo(json.dumps(schedule_to_dict(sched, secs)))
    else:
        click.echo(schedule_summary_line(sched, policy, secs, output), err=True)


@click.command()
@click.argument("instance")
@click.option(
    "--policy",
    required=True,
    help="Registry name of a policy with a fixed priority list: a list policy (fcfs, mcsf, size, "
    "sorted-f, sorted-lp, volume, lp-swap, plug-ins; also NAME+backfill), svf, vllm or vllm-sf.",
)
@phase1_option()
@output_option("Write the JSON Lines here (one line per request).")
@_lp_nonzeros
@policy_options(
    "plan under it, for the policies that declare a time model (sorted-f-seconds: default "
    "llama2-70b-a100x2; vllm, vllm-sf, online-*: their clock); the TEL printed stays in rounds"
)
@bad_input
def priorities(instance, policy, phase1, output, max_nonzeros, policy_options, model) -> None:
    """Write each request's priority under POLICY as JSON Lines, to replay in a serving engine.

    One line per request, in instance order: {"id": ..., "priority": k}, k = the request's
    position in the policy's list (0 first). Lower runs first, as vLLM's 'priority' scheduling
    policy takes a request's 'priority' field (docs/guide/serving-engine.md). Policies that
    re-plan as they run (amax, amin, sorted-f-amin, online-*) and the staggered pipelines that
    fix each request's start round (sps, gba, gba-d) have no fixed list and are refused. svf's
    list is the volume order; the TEL printed is of svf's own schedule (peak reservation), while
    ``--policy volume`` gives the same list run by lpsched's executor.
    """
    check_output(output, instance)
    with solver_chatter_to_stderr():  # a plug-in policy prints on import or as it runs
        select_policies(policy, policy_options, option="--policy", reserved=COMMAND_FLAGS)
        require_priority_list(policy)
        inst = load_instance(instance)
        opts = command_options(
            inst, policy_options, phase1=phase1, max_nonzeros=max_nonzeros, time_model=model
        )
        sched = run_policy(inst, policy, **opts)
    write_priorities(inst, sched.info["order"], output)
    click.echo(
        f"{policy}: wrote {inst.n} priorities (0 runs first) to {output}; "
        f"TEL of {policy}'s own schedule {sched.tel} rounds",
        err=True,
    )


@click.command(name="policies")
@import_option
@json_option("one JSON list (name, description, options)")
@bad_input
def list_policies(as_json: bool) -> None:
    """List the registered policies, plug-ins included (entry points 'lpsched.policies').

    A plug-in that fails to load is reported on standard error after the list (exit 1); the
    others are listed.
    """
    with plugin_errors_after(load_plugins):
        if as_json:
            click.echo(json.dumps([p.to_dict() for p in POLICIES.values()]))
        else:
            click.echo(describe_policies())
