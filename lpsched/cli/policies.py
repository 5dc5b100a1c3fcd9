"""``lpsched run``, ``schedule``, ``priorities`` and ``policies``: the registered policies on an
instance."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from ..comparison import DEFAULT_ONLINE_POLICIES, DEFAULT_POLICIES, check_clock, compare_policies
from ..comparison import default_policies as defaults_for
from ..instance import Instance
from ..io import check_output, schedule_to_dict, write_priorities, write_schedule
from ..policies.registry import POLICIES, load_plugins, parse_policy, run_policy
from ..policies.selection import select_policies
from ..policies.sorted_f import DP_MAX_N, SWAP_MAX_N
from ..timing.seconds import to_seconds
from .common import (
    bad_input,
    flag,
    import_option,
    json_option,
    load_instance,
    max_nonzeros_option,
    output_option,
    phase1_for,
    phase1_option,
    plugin_errors_after,
    policy_options,
    solver_chatter_to_stderr,
)

#: Policy options these commands set from their own flags: ``--option`` refuses them.
_OWN_FLAGS = {
    "solver": "set it with --phase1",
    "max_nonzeros": "set it with --max-nonzeros",
    "time_model": "set it with --time-model",
}

_lp_nonzeros = max_nonzeros_option("20,000,000; the LP of sorted-lp")


def _select(text: str | None, options, option="--policies", default=None) -> list[str]:
    """:func:`lpsched.policies.selection.select_policies`, the commands' own flags reserved."""
    with solver_chatter_to_stderr():  # a plug-in loaded here prints on import
        return select_policies(text, options, option=option, default=default, reserved=_OWN_FLAGS)


def _options(inst: Instance, phase1, max_nonzeros, extra, model=None) -> dict[str, Any]:
    """The keyword arguments of :func:`lpsched.policies.registry.run_policy`: the commands'
    own flags and the ``--option`` pairs; the time model goes to the policies that declare it
    (a clock, or a plan in seconds)."""
    opts: dict[str, Any] = {"solver": phase1_for(inst, phase1)}
    if max_nonzeros is not None:
        opts["max_nonzeros"] = max_nonzeros
    if model is not None:
        opts["time_model"] = model
    return opts | extra


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
@json_option
@_lp_nonzeros
@policy_options(
    "print TEL, latency, TTFT, TPOT and tokens/s in seconds beside the rounds; on an instance "
    "with arrivals in seconds (arrival_s) the online policies admit on its clock, which "
    "changes their schedules"
)
@bad_input
def run(instance, policies, phase1, as_json, max_nonzeros, policy_options, model) -> None:
    """Compare policies on INSTANCE (default: the paper's setting, n = 2000, M = 16,492).

    A policy that cannot run on this instance (the LP of sorted-lp too large) is reported
    and skipped; the others still run. With --time-model, a second table gives the figures in
    seconds (the schedules are the same). On an instance with arrivals in seconds
    (arrival_s) --time-model also runs the clock: online-fcfs, online-mcsf, online-sorted-f,
    vllm and vllm-sf admit a request once it has arrived on the model's clock (SPEC section
    10), the default policies are the online ones, and the rounds table counts from each
    request's admission round.
    """
    additions = policies is not None and policies.strip().startswith("+")
    if policies is not None and not additions:  # checked before the instance is read
        names = _select(policies, policy_options)
    inst = load_instance(instance)
    if policies is None or additions:
        names = _select(policies, policy_options, default=defaults_for(inst, model))
    check_clock(inst, model, names)
    opts = _options(inst, phase1, max_nonzeros, policy_options)
    with solver_chatter_to_stderr():
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
@flag(
    "--json",
    "as_json",
    help="Print one JSON summary (policy, TEL, mean latency, ...; with the schedule when there is "
    "no -o).",
)
@policy_options(
    "record the model and each request's latency, TTFT and TPOT in the file; on an instance "
    "with arrivals in seconds (arrival_s) the online policies admit on its clock"
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
    _select(policy, policy_options, "--policy")
    inst = load_instance(instance)
    check_clock(inst, model, [policy])
    with solver_chatter_to_stderr():
        sched = run_policy(
            inst, policy, **_options(inst, phase1, max_nonzeros, policy_options, model)
        )
    sched.check()
    secs = None if model is None else to_seconds(sched, model)
    if output is not None:
        write_schedule(sched, output, secs)
    if as_json:
        summary: dict[str, Any] = {"instance": inst.name, "policy": policy, **sched.summary()}
        summary.update(evictions=sched.evictions, runtime_s=sched.info["runtime_s"], output=output)
        if secs is not None:
            summary.update(time_model=secs.model.to_dict(), **secs.stats())
        if output is None:
            summary["schedule"] = schedule_to_dict(sched, secs)
        click.echo(json.dumps(summary))
    elif output is None:
        click.echo(json.dumps(schedule_to_dict(sched, secs)))
    else:
        s = "" if secs is None else f" ({secs.stats()['mean_latency_s']:.3f} s under {model.name})"
        click.echo(
            f"{policy}: TEL {sched.tel} rounds, mean latency {sched.mean_latency:.1f}{s}; "
            f"wrote {output}",
            err=True,
        )


@click.command()
@click.argument("instance")
@click.option(
    "--policy",
    required=True,
    help="Registry name of a policy with a fixed priority list: a list policy (fcfs, mcsf, size, "
    "sorted-f, sorted-lp, volume, lp-swap, plug-ins), svf (its list is the volume order) or "
    "vllm, vllm-sf. sps, gba and gba-d fix start rounds, not a list, and are refused.",
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
    _select(policy, policy_options, "--policy")
    if not parse_policy(policy)[0].listed:
        listed = ", ".join(name for name, p in POLICIES.items() if p.listed)
        raise ValueError(
            f"policy {policy!r} has no fixed priority list (the policies that re-plan as they "
            "run and the staggered pipelines, which fix each request's start round, have "
            f"none); use one of {listed} (a list policy also as NAME+backfill)"
        )
    inst = load_instance(instance)
    with solver_chatter_to_stderr():
        sched = run_policy(
            inst, policy, **_options(inst, phase1, max_nonzeros, policy_options, model)
        )
    write_priorities(inst, sched.info["order"], output)
    click.echo(
        f"{policy}: wrote {inst.n} priorities (0 runs first) to {output}; "
        f"TEL of {policy}'s own schedule {sched.tel} rounds",
        err=True,
    )


@click.command(name="policies")
@import_option
@flag("--json", "as_json", help="Print one JSON list (name, description, options).")
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
            width = max(len(name) for name in POLICIES) + 2
            for p in POLICIES.values():
                click.echo(f"{p.name:{width}s}{p.description}")
