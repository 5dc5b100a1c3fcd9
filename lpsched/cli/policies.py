"""``lpsched run``, ``schedule``, ``priorities`` and ``policies``: the registered policies on an
instance."""

from __future__ import annotations

import json
import sys
from typing import Any

import click
from tabulate import tabulate

from ..comparison import Comparison, compare_policies
from ..generators.workloads import PAPER_MEMORY, PAPER_N
from ..instance import Instance
from ..io import schedule_to_dict, write_priorities, write_schedule
from ..policies.registry import (
    CLOCK_POLICIES,
    POLICIES,
    PluginError,
    load_plugins,
    parse_policy,
    run_policy,
)
from ..policies.sorted_f import DP_MAX_N, SWAP_MAX_N
from ..timing.model import TimeModel
from ..timing.seconds import to_seconds
from .common import (
    SECONDS_COLUMNS,
    bad_input,
    check_options,
    check_output,
    import_option,
    json_option,
    load_instance,
    max_nonzeros_option,
    model_line,
    phase1_for,
    phase1_option,
    policy_names,
    policy_option,
    seconds_cell,
    solver_chatter_to_stderr,
    time_model_option,
)

#: The default comparison: the seed paper's four and ``volume``, SVF's order (arXiv 2606.22327),
#: the best of the algorithms that followed it on the paper's workload
#: (``docs/results/algorithms.md``).
DEFAULT_POLICIES = "fcfs,mcsf,size,sorted-f,volume"
DEFAULT_ONLINE_POLICIES = "online-fcfs,online-mcsf,online-sorted-f"


#: Policy options these commands set from their own flags: ``--option`` refuses them.
_OWN_FLAGS = {
    "solver": "set it with --phase1",
    "max_nonzeros": "set it with --max-nonzeros",
    "time_model": "set it with --time-model",
}


def _on_the_clock(inst: Instance, model: TimeModel | None, names: list[str]) -> bool:
    """Whether the policies run with arrivals in seconds (an instance with ``arrival_s`` and a
    ``--time-model``); then a policy that admits by rounds is a usage error (exit 2)."""
    if model is None or inst.arrival_s is None:
        return False
    clock = [n for n in names if parse_policy(n)[0].clock]
    others = [n for n in names if n not in clock]
    if others:
        raise click.UsageError(
            f"instance {inst.name!r} has arrivals in seconds (arrival_s): under --time-model "
            f"only the policies that admit on the clock run on it ({', '.join(CLOCK_POLICIES)}); "
            f"{', '.join(others)} admit{'s' if len(others) == 1 else ''} by arrival rounds: "
            f"drop {'it' if len(others) == 1 else 'them'} (or drop --time-model to run every "
            "policy in rounds)"
        )
    return True


def _policy_options(
    inst: Instance,
    phase1: str | None,
    max_nonzeros: int | None,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The keyword arguments of :func:`lpsched.policies.registry.run_policy`: the commands'
    own flags and the ``--option`` pairs (``extra``, checked by :func:`check_options`)."""
    opts: dict[str, Any] = {"solver": phase1_for(inst, phase1)}
    if max_nonzeros is not None:
        opts["max_nonzeros"] = max_nonzeros
    return opts | (extra or {})


@click.command()
@click.argument("instance", required=False)
@click.option(
    "--policies",
    default=None,
    help=f"Comma-separated registry names; NAME+backfill runs NAME with backfill; +NAME,... "
    f"adds to the default [default: {DEFAULT_POLICIES}; with arrivals "
    f"{DEFAULT_ONLINE_POLICIES}].",
)
@phase1_option(
    f"[default: auto: dp up to n = {DP_MAX_N}, swap up to n = {SWAP_MAX_N:,} (the paper's choice "
    "at n = 2000), quantile above]"
)
@json_option
@max_nonzeros_option("20,000,000; the LP of sorted-lp")
@policy_option
@time_model_option(
    "print TEL, latency, TTFT, TPOT and tokens/s in seconds beside the rounds; on an instance "
    "with arrivals in seconds (arrival_s) the online policies admit on its clock, which "
    "changes their schedules"
)
@import_option
@bad_input
def run(
    instance: str | None,
    policies: str | None,
    phase1: str | None,
    as_json: bool,
    max_nonzeros: int | None,
    policy_options: dict[str, Any],
    model: TimeModel | None,
) -> None:
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
    if policies is not None and not additions:
        names = policy_names(policies, "--policies")
        check_options(names, policy_options, _OWN_FLAGS)
    inst = load_instance(instance)
    seconds_arrivals = model is not None and inst.arrival_s is not None
    if policies is None or additions:
        online = seconds_arrivals or not inst.offline
        default = (DEFAULT_ONLINE_POLICIES if online else DEFAULT_POLICIES).split(",")
        names = default if policies is None else policy_names(policies, "--policies", default)
        check_options(names, policy_options, _OWN_FLAGS)
    _on_the_clock(inst, model, names)  # a usage error when a policy cannot run on the clock
    opts = _policy_options(inst, phase1, max_nonzeros, policy_options)
    solver = opts["solver"]
    with solver_chatter_to_stderr():
        comparison = compare_policies(inst, names, time_model=model, options=opts)
    if as_json:
        click.echo(json.dumps(_comparison_json(comparison, solver)))
    else:
        _print_comparison(comparison, names, solver)
    _none_ran(comparison.results)


def _comparison_json(comparison: Comparison, solver: str) -> dict[str, Any]:
    """``lpsched run --json``: the instance, the Phase-1 solver and the comparison."""
    inst, model = comparison.instance, comparison.time_model
    out: dict[str, Any] = {
        "instance": inst.name,
        "n": inst.n,
        "memory": inst.memory,
        "phase1": solver,
    }
    if model is not None:
        out["time_model"] = model.to_dict()
    if comparison.clocked:  # only then: the output without arrival_s is as before
        out["arrivals_in_seconds"] = True
    out.update(
        results=comparison.results,
        skipped=comparison.skipped,
        paper_ratios=comparison.paper_ratios,
    )
    return out


def _print_comparison(comparison: Comparison, names: list[str], solver: str) -> None:
    """``lpsched run``'s tables: rounds, seconds (with a time model), the paper's ratios."""
    inst, model = comparison.instance, comparison.time_model
    results, skipped, paper = comparison.results, comparison.skipped, comparison.paper_ratios
    clocked, papers_setting = comparison.clocked, comparison.papers_setting
    uses_phase1 = any("solver" in parse_policy(name)[0].options for name in names)
    click.echo(
        f"instance {inst.name}: n = {inst.n} requests, KV cache M = {inst.memory} tokens"
        + (f", Sorted-F Phase 1: {solver}" if uses_phase1 else "")
    )
    headers = ["policy", "TEL (rounds)", "mean latency (rounds)", "ratio to best", "wall time (s)"]
    evicting = any(r["evictions"] for r in results)
    if evicting:
        headers[4:4] = ["evictions", "wasted tokens"]
    rows = []
    for r in results:
        row = [
            r["policy"],
            r["tel"],
            f"{r['mean_latency']:.1f}",
            f"{r['ratio_to_best']:.3f}",
            f"{r['runtime_s']:.3f}",
        ]
        if evicting:
            row[4:4] = [r["evictions"], r["wasted_tokens"]]
        rows.append(row)
    click.echo(
        tabulate(
            rows,
            headers=headers,
            disable_numparse=True,
            colalign=("left",) + ("right",) * (len(headers) - 1),
        )
    )
    if model is not None:
        click.echo()
        click.echo(model_line(model))
        if clocked:
            click.echo(
                "arrivals in seconds (arrival_s): the policies admitted each request once it "
                "had arrived on this clock; latencies count from arrival_s"
            )
        click.echo(
            tabulate(
                [
                    [r["policy"]] + [seconds_cell(r, key, fmt) for key, _, fmt in SECONDS_COLUMNS]
                    for r in results
                ],
                headers=["policy"] + [head for _, head, _ in SECONDS_COLUMNS],
                disable_numparse=True,
                colalign=("left",) + ("right",) * len(SECONDS_COLUMNS),
            )
        )
    for r in skipped:
        click.echo(f"skipped {r['policy']}: {r['error']}")
    if paper and papers_setting:
        by_name = {r["policy"]: r for r in results}
        rows = [
            [p["ratio"], f"{p['value']:.2f}"]
            + ([f"{p['value_s']:.2f}"] if model is not None else [])
            + [f"{p['paper']:.2f}"]
            for p in paper
        ]
        if "volume" in by_name and by_name.get("sorted-f", {}).get("tel"):
            vol, ref = by_name["volume"], by_name["sorted-f"]
            rows.append(
                ["volume (SVF's order) / Sorted-F", f"{vol['tel'] / ref['tel']:.2f}"]
                + ([f"{vol['tel_s'] / ref['tel_s']:.2f}"] if model is not None else [])
                + ["-"]
            )
        headers = ["ratio of mean latency", "here (rounds)"]
        headers += ["here (s)"] if model is not None else []
        click.echo()
        click.echo(
            tabulate(
                rows,
                headers=headers + ["paper"],
                disable_numparse=True,
                colalign=("left",) + ("right",) * (len(headers)),
            )
        )
        newer = len(rows) > len(paper)
        click.echo(
            f"paper: arXiv 2508.06133, section 6; n = {PAPER_N}, M = {PAPER_MEMORY:,}, 80% "
            "LMSYS-Chat-1M conversations, 20% arXiv summarizations"
            + ("; volume: the order of SVF (arXiv 2606.22327) on this executor" if newer else "")
        )
    if inst.arrival_s is not None and model is None:
        click.echo(
            "note: this instance has arrivals in seconds (arrival_s); with --time-model NAME "
            "the online policies admit by them on that model's clock (SPEC section 10), "
            "without it every policy uses the arrival rounds"
        )
    if not inst.offline and any(parse_policy(n)[0].backfill for n in names):
        click.echo(
            "note: this instance has arrivals; a strict list policy waits for the head "
            "of its list to arrive (SPEC section 4). The online-* policies list only "
            "arrived requests (SPEC section 5)."
        )


def _none_ran(results: list[dict[str, Any]]) -> None:
    """Exit 1 when no selected policy could run (each was reported as skipped)."""
    if not results:
        click.echo(
            "lpsched: error: none of the selected policies could run on this instance", err=True
        )
        sys.exit(1)


@click.command()
@click.argument("instance")
@click.option("--policy", required=True, help="Registry name (NAME+backfill allowed).")
@phase1_option()
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    default=None,
    help="Write the schedule JSON here (default: standard output).",
)
@max_nonzeros_option("20,000,000; the LP of sorted-lp")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print one JSON summary (policy, TEL, mean latency, ...; with the schedule "
    "when there is no -o).",
)
@policy_option
@time_model_option(
    "record the model and each request's latency, TTFT and TPOT in the file; on an instance "
    "with arrivals in seconds (arrival_s) the online policies admit on its clock"
)
@import_option
@bad_input
def schedule(
    instance: str,
    policy: str,
    phase1: str | None,
    output: str | None,
    max_nonzeros: int | None,
    as_json: bool,
    policy_options: dict[str, Any],
    model: TimeModel | None,
) -> None:
    """Schedule INSTANCE with one policy and write the schedule JSON (SPEC section 9).

    With --time-model on an instance with arrivals in seconds (arrival_s), an online policy
    admits on the model's clock and each request's "arrival" in the file is its admission
    round (SPEC section 10), which lpsched check recomputes.
    """
    check_output(output, instance)
    check_options(policy_names(policy, "--policy"), policy_options, _OWN_FLAGS)
    inst = load_instance(instance)
    _on_the_clock(inst, model, [policy])
    opts = _policy_options(inst, phase1, max_nonzeros, policy_options)
    if model is not None:  # to the policies that declare it: a clock, or a plan in seconds
        opts["time_model"] = model
    with solver_chatter_to_stderr():
        sched = run_policy(inst, policy, **opts).check()
    secs = None if model is None else to_seconds(sched, model)
    if output is not None:
        write_schedule(sched, output, secs)
    if as_json:
        summary: dict[str, Any] = {
            "instance": inst.name,
            "policy": policy,
            **sched.summary(),  # tel, mean_latency, makespan, peak_memory
            "evictions": sched.evictions,
            "runtime_s": sched.info["runtime_s"],
            "output": output,
        }
        if secs is not None:
            summary.update(time_model=secs.model.to_dict(), **secs.stats())
        if output is None:
            summary["schedule"] = schedule_to_dict(sched, secs)
        click.echo(json.dumps(summary))
    elif output is None:
        click.echo(json.dumps(schedule_to_dict(sched, secs)))
    else:
        in_seconds = (
            ""
            if secs is None
            else f" ({secs.stats()['mean_latency_s']:.3f} s under {secs.model.name})"
        )
        click.echo(
            f"{policy}: TEL {sched.tel} rounds, mean latency {sched.mean_latency:.1f}"
            f"{in_seconds}; wrote {output}",
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
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    required=True,
    help="Write the JSON Lines here (one line per request).",
)
@max_nonzeros_option("20,000,000; the LP of sorted-lp")
@policy_option
@time_model_option(
    "plan under it, for the policies that declare a time model (sorted-f-seconds: default "
    "llama2-70b-a100x2; vllm, vllm-sf, online-*: their clock); the TEL printed stays in rounds"
)
@import_option
@bad_input
def priorities(
    instance: str,
    policy: str,
    phase1: str | None,
    output: str,
    max_nonzeros: int | None,
    policy_options: dict[str, Any],
    model: TimeModel | None,
) -> None:
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
    check_options(policy_names(policy, "--policy"), policy_options, _OWN_FLAGS)
    if not parse_policy(policy)[0].listed:
        listed = ", ".join(name for name, p in POLICIES.items() if p.listed)
        raise ValueError(
            f"policy {policy!r} has no fixed priority list (the policies that re-plan as they "
            "run and the staggered pipelines, which fix each request's start round, have "
            f"none); use one of {listed} (a list policy also as NAME+backfill)"
        )
    inst = load_instance(instance)
    opts = _policy_options(inst, phase1, max_nonzeros, policy_options)
    if model is not None:  # to the policies that declare it
        opts["time_model"] = model
    with solver_chatter_to_stderr():
        sched = run_policy(inst, policy, **opts)
    write_priorities(inst, sched.info["order"], output)
    click.echo(
        f"{policy}: wrote {inst.n} priorities (0 runs first) to {output}; "
        f"TEL of {policy}'s own schedule {sched.tel} rounds",
        err=True,
    )


@click.command(name="policies")
@import_option
@click.option(
    "--json", "as_json", is_flag=True, help="Print one JSON list (name, description, options)."
)
@bad_input
def list_policies(as_json: bool) -> None:
    """List the registered policies, plug-ins included (entry points 'lpsched.policies').

    A plug-in that fails to load is reported on standard error after the list (exit 1); the
    others are listed.
    """
    try:
        load_plugins()
        failed = ""
    except PluginError as exc:
        failed = str(exc)
    if as_json:
        rows = [
            {
                "name": p.name,
                "description": p.description,
                "options": list(p.options),
                "backfill": p.backfill,
            }
            for p in POLICIES.values()
        ]
        click.echo(json.dumps(rows))
    else:
        width = max(len(name) for name in POLICIES) + 2
        for p in POLICIES.values():
            click.echo(f"{p.name:{width}s}{p.description}")
    if failed:
        for line in failed.splitlines():
            click.echo(f"lpsched: error: {line}", err=True)
        sys.exit(1)
