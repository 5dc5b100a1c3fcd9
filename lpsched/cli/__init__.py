"""The ``lpsched`` command line (``docs/architecture.md`` lists the names other tools rely on).

Thin: every command parses its options, calls one public function and prints. The choices of
``--solver``, ``--method``, ``--phase1``, ``--format``, ``--backend`` and ``reproduce NAME`` come
from the registries, so a new back end or reproduction appears here without an edit.

Exit codes: 0 ok, 1 bad input (the message names the file, request and field) or a failed run
(``exact`` with status ``error``, a sweep whose worker died), 2 usage error, 130 interrupted
(Ctrl-C or SIGTERM: ``exact`` still prints the best schedule and bound found so far with
status ``interrupted``; ``reproduce`` keeps every finished row).
``--json`` prints one JSON object on standard output; the default is a readable table.
Progress bars go to standard error.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import signal
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, NoReturn, TypedDict

import click
import numpy as np
from tabulate import tabulate

from .. import __version__, datasets
from ..generators.intervals import from_spec
from ..generators.lmsys import LMSYS_PARAMETERS
from ..generators.small import EXACT_WORKLOADS
from ..generators.three_partition import gadget as make_gadget
from ..generators.three_partition import tel_threshold
from ..generators.workloads import (
    PAPER_MEMORY,
    PAPER_N,
    WORKLOADS,
    describe,
    from_traces,
    generate,
    headline_ratios,
    parse_mixture,
)
from ..instance import Instance, InstanceError
from ..io import (
    read_instance,
    read_schedule,
    schedule_to_dict,
    write_instance,
    write_priorities,
    write_schedule,
)
from ..policies.registry import (
    POLICIES,
    PluginError,
    import_plugins,
    load_plugins,
    parse_policy,
    run_policy,
)
from ..policies.sorted_f import PHASE1_SOLVERS
from ..research.reproductions.registry import REPRODUCTIONS, accepts
from ..schedule import Schedule
from ..solvers.progress import cli_progress
from ..solvers.result import LPTooLargeError, SolveInterrupted, SolveStatus
from ..solvers.solve import (
    EXPORT_FORMATS,
    SOLVERS,
    best_bound,
    export_model,
    solve_exact,
)
from ..sweeps.engine import SweepWorkerError


class _Spec(TypedDict):
    """The generator call of the shipped default (see :func:`default_instance`)."""

    workload: str
    n: int
    memory: int
    seed: int


DEFAULT_INSTANCE = Path(__file__).resolve().parents[1] / "instances" / "default.json"
DEFAULT_SPEC: _Spec = {"workload": "paper-mix", "n": 2000, "memory": 16492, "seed": 0}
DEFAULT_POLICIES = "fcfs,mcsf,size,sorted-f"
DEFAULT_ONLINE_POLICIES = "online-fcfs,online-mcsf,online-sorted-f"
SWAP_UP_TO = 5000


def default_instance() -> Instance:
    """The shipped default, the paper's setting: ``paper-mix`` (80% LMSYS-style turns, 20% arXiv
    summarization), n = 2000, M = 16,492, seed 0, all at round 0.

    Read from ``instances/default.json`` in a source checkout; elsewhere regenerated with the
    same generator call (the test suite checks the two are identical).
    """
    if DEFAULT_INSTANCE.exists():
        return read_instance(DEFAULT_INSTANCE)
    spec = DEFAULT_SPEC
    return generate(spec["workload"], spec["n"], spec["memory"], seed=spec["seed"], name="default")


class RegistryChoice(click.Choice):
    """A ``click.Choice`` over a registry's names at the time of the call, so that entries
    registered after import (plug-ins, tests) are valid choices too. Source: ours."""

    def __init__(self, registry: Mapping[str, Any]) -> None:
        self._registry = registry
        super().__init__(list(registry))

    @property
    def choices(self) -> tuple[str, ...]:
        return tuple(self._registry)

    @choices.setter
    def choices(self, value: Any) -> None:  # click's __init__ assigns a snapshot; ignore it
        pass


def _one_line(text: str) -> str:
    """``text`` with every non-printable character escaped (``\\n``, ``\\x1b``, ...), so that an
    error message prints as one line and cannot send terminal escape sequences. Text quoted with
    :func:`lpsched.instance.quote` is already escaped and passes unchanged."""
    return "".join(
        c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text
    )


def _bad_input(fn):
    """Turn data errors into exit code 1 with one line naming file, request and field (a write
    that fails, :class:`lpsched.io.WriteError`, is an ``OSError`` naming the path)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (InstanceError, ValueError, KeyError, MemoryError, OSError) as exc:
            msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
            click.echo(f"lpsched: error: {_one_line(str(msg))}", err=True)
            sys.exit(1)

    return wrapper


@contextlib.contextmanager
def _solver_chatter_to_stderr() -> Iterator[None]:
    """Send what solvers print on the C-level standard output (HiGHS prints a banner whatever
    its options) to standard error, so that standard output holds only our table or JSON."""
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no real file descriptor (e.g. under a test runner)
        yield
        return
    os.dup2(2, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


#: Exit code of a run stopped by Ctrl-C or SIGTERM (128 + SIGINT, the shell's convention).
EXIT_INTERRUPTED = 130


@contextlib.contextmanager
def _signals_as_interrupt() -> Iterator[None]:
    """Inside the block SIGINT and SIGTERM raise ``KeyboardInterrupt``, so a ``kill`` (a batch
    system's time-out, a container stop) stops the solver and keeps the results exactly as
    Ctrl-C does, also when a shell started the command in the background with SIGINT
    ignored. The previous handlers are restored afterwards."""

    def handler(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt(signal.Signals(signum).name)

    try:
        previous = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    except ValueError:  # not the main thread: signals never arrive here
        yield
        return
    try:
        yield
    finally:
        for s, old in previous.items():
            signal.signal(s, old)


def _interrupted(message: str) -> NoReturn:
    click.echo(f"lpsched: interrupted; {message}", err=True)
    sys.exit(EXIT_INTERRUPTED)


def _load(path: str | None) -> Instance:
    if path is None:
        return default_instance()
    if path.lower().endswith(".csv"):
        raise InstanceError(
            f"{path}: a trace CSV has no memory budget; make an instance first with "
            f"'lpsched generate --trace {path} -n N --memory M -o instance.json'"
        )
    return read_instance(path)


def _finite(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    """Option callback: refuse NaN and infinity (click's FloatRange lets them through)."""
    if value is not None and not math.isfinite(value):
        raise click.BadParameter(f"must be a finite number, got {value}")
    return value


def _floats(text: str, option: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",")]
    except ValueError:
        raise click.BadParameter(
            f"expected comma-separated numbers, got {text!r}", param_hint=option
        ) from None


def _phase1_for(instance: Instance, phase1: str | None) -> str:
    if phase1 is not None:
        return phase1
    return "swap" if instance.n <= SWAP_UP_TO else "auto"


def max_nonzeros_option(default: str):
    """``--max-nonzeros N``: the model-size limit (``lpsched.solvers.solve``, README "Limits")."""
    return click.option(
        "--max-nonzeros",
        type=click.IntRange(min=1),
        default=None,
        metavar="N",
        help=f"Largest time-indexed model to build, in constraint-matrix non-zeros "
        f"[default: {default}].",
    )


verbose_option = click.option(
    "-v",
    "--verbose",
    is_flag=True,
    help="Stream the solver log, with an incumbent / bound / gap line every 2 s, on standard "
    "error (default: one live line when standard error is a terminal).",
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="lpsched")
def main() -> None:
    """lpsched: batch scheduling of LLM requests under a KV-cache budget (TEL, rounds)."""


def _import_modules(
    ctx: click.Context, param: click.Parameter, modules: tuple[str, ...]
) -> tuple[str, ...]:
    """Option callback of ``--import``: import the modules (which call
    :func:`lpsched.register_policy`) before the policy names are checked. The current directory
    is searched first, as by ``python -m``."""
    if modules:
        try:
            import_plugins(modules)
        except PluginError as exc:
            raise click.BadParameter(_one_line(str(exc))) from None
    return modules


def phase1_option(note: str = "(default as for 'run')"):
    """``--phase1``: the Sorted-F Phase-1 solver (``lpsched.policies.sorted_f.PHASE1_SOLVERS``)."""
    return click.option(
        "--phase1",
        type=click.Choice(PHASE1_SOLVERS),
        default=None,
        help=f"Sorted-F Phase-1 solver {note}.",
    )


#: ``--import MODULE`` of every command that takes policy names.
import_option = click.option(
    "--import",
    "imports",
    multiple=True,
    metavar="MODULE",
    expose_value=False,
    is_eager=True,
    callback=_import_modules,
    help="Import MODULE first (repeatable): a module that calls lpsched.register_policy, "
    "found in the current directory or on PYTHONPATH. Installed plug-ins (entry points "
    "'lpsched.policies') need no option.",
)


def _policy_names(text: str, param: str) -> list[str]:
    names = [p.strip() for p in text.split(",") if p.strip()]
    if not names:
        raise click.BadParameter("no policy given", param_hint=param)
    for name in names:
        try:
            parse_policy(name)
        except KeyError as exc:
            raise click.BadParameter(exc.args[0], param_hint=param) from None
    return names


@main.command()
@click.argument("instance", required=False)
@click.option(
    "--policies",
    default=None,
    help=f"Comma-separated registry names; NAME+backfill runs NAME with backfill "
    f"[default: {DEFAULT_POLICIES}; with arrivals {DEFAULT_ONLINE_POLICIES}].",
)
@phase1_option(
    f"[default: swap up to n = {SWAP_UP_TO} (the paper's choice at n = 2000), auto above]"
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@max_nonzeros_option("20,000,000; the LP of sorted-lp")
@import_option
@_bad_input
def run(
    instance: str | None,
    policies: str | None,
    phase1: str | None,
    as_json: bool,
    max_nonzeros: int | None,
) -> None:
    """Compare policies on INSTANCE (default: the paper's setting, n = 2000, M = 16,492).

    A policy that cannot run on this instance (the LP of sorted-lp too large) is reported
    and skipped; the others still run.
    """
    if policies is not None:
        names = _policy_names(policies, "--policies")
    inst = _load(instance)
    if policies is None:
        names = (DEFAULT_POLICIES if inst.offline else DEFAULT_ONLINE_POLICIES).split(",")
    solver = _phase1_for(inst, phase1)
    opts: dict[str, Any] = {"solver": solver}
    if max_nonzeros is not None:
        opts["max_nonzeros"] = max_nonzeros
    results, skipped = [], []
    for name in names:
        try:
            with _solver_chatter_to_stderr():
                sched = run_policy(inst, name, **opts)
        except LPTooLargeError as exc:
            skipped.append({"policy": name, "error": str(exc)})
            continue
        sched.check()
        results.append(
            {
                "policy": name,
                "tel": sched.tel,
                "mean_latency": sched.mean_latency,
                "makespan": sched.makespan,
                "peak_memory": sched.peak_memory,
                "evictions": sched.evictions,
                "wasted_tokens": sched.wasted_tokens,
                "runtime_s": sched.info["runtime_s"],
            }
        )
    best = min((r["tel"] for r in results), default=None)
    for r in results:
        r["ratio_to_best"] = r["tel"] / best
    paper = headline_ratios({r["policy"]: r["tel"] for r in results}) if inst.offline else []
    papers_setting = (inst.n, inst.memory) == (PAPER_N, PAPER_MEMORY)
    if as_json:
        click.echo(
            json.dumps(
                {
                    "instance": inst.name,
                    "n": inst.n,
                    "memory": inst.memory,
                    "phase1": solver,
                    "results": results,
                    "skipped": skipped,
                    "paper_ratios": paper,
                }
            )
        )
        return
    click.echo(
        f"instance {inst.name}: n = {inst.n} requests, KV cache M = {inst.memory} tokens, "
        f"Sorted-F Phase 1: {solver}"
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
    for r in skipped:
        click.echo(f"skipped {r['policy']}: {r['error']}")
    if paper and papers_setting:
        click.echo()
        click.echo(
            tabulate(
                [[p["ratio"], f"{p['value']:.2f}", f"{p['paper']:.2f}"] for p in paper],
                headers=["ratio of mean latency", "here", "paper"],
                disable_numparse=True,
                colalign=("left", "right", "right"),
            )
        )
        click.echo(
            f"paper: arXiv 2508.06133, section 6; n = {PAPER_N}, M = {PAPER_MEMORY:,}, 80% "
            "LMSYS-Chat-1M conversations, 20% arXiv summarizations"
        )
    if not inst.offline and any(parse_policy(n)[0].backfill for n in names):
        click.echo(
            "note: this instance has arrivals; a strict list policy waits for the head "
            "of its list to arrive (SPEC section 4). The online-* policies list only "
            "arrived requests (SPEC section 5)."
        )


@main.command()
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
@import_option
@_bad_input
def schedule(
    instance: str,
    policy: str,
    phase1: str | None,
    output: str | None,
    max_nonzeros: int | None,
    as_json: bool,
) -> None:
    """Schedule INSTANCE with one policy and write the schedule JSON (SPEC section 9)."""
    _policy_names(policy, "--policy")
    inst = _load(instance)
    opts: dict[str, Any] = {"solver": _phase1_for(inst, phase1)}
    if max_nonzeros is not None:
        opts["max_nonzeros"] = max_nonzeros
    with _solver_chatter_to_stderr():
        sched = run_policy(inst, policy, **opts).check()
    if output is not None:
        write_schedule(sched, output)
    if as_json:
        summary: dict[str, Any] = {
            "instance": inst.name,
            "policy": policy,
            "tel": sched.tel,
            "mean_latency": sched.mean_latency,
            "makespan": sched.makespan,
            "peak_memory": sched.peak_memory,
            "evictions": sched.evictions,
            "runtime_s": sched.info["runtime_s"],
            "output": output,
        }
        if output is None:
            summary["schedule"] = schedule_to_dict(sched)
        click.echo(json.dumps(summary))
    elif output is None:
        click.echo(json.dumps(schedule_to_dict(sched)))
    else:
        click.echo(
            f"{policy}: TEL {sched.tel} rounds, mean latency {sched.mean_latency:.1f}; "
            f"wrote {output}",
            err=True,
        )


@main.command()
@click.argument("instance")
@click.option(
    "--policy",
    required=True,
    help="Registry name of a policy with a fixed priority list: a list policy (fcfs, mcsf, size, "
    "sorted-f, sorted-lp, plug-ins) or vllm, vllm-sf.",
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
@import_option
@_bad_input
def priorities(
    instance: str, policy: str, phase1: str | None, output: str, max_nonzeros: int | None
) -> None:
    """Write each request's priority under POLICY as JSON Lines, to replay in a serving engine.

    One line per request, in instance order: {"id": ..., "priority": k}, k = the request's
    position in the policy's list (0 first). Lower runs first, as vLLM's 'priority' scheduling
    policy takes a request's 'priority' field (README, "Replaying a schedule in a serving
    engine"). Policies that re-plan as they run (amax, amin, sorted-f-amin, online-*) have no
    fixed list and are refused.
    """
    _policy_names(policy, "--policy")
    inst = _load(instance)
    opts: dict[str, Any] = {"solver": _phase1_for(inst, phase1)}
    if max_nonzeros is not None:
        opts["max_nonzeros"] = max_nonzeros
    with _solver_chatter_to_stderr():
        sched = run_policy(inst, policy, **opts)
    order = sched.info.get("order")
    if order is None:
        raise ValueError(
            f"policy {policy!r} has no fixed priority list (it re-plans as it runs); "
            "use a list policy (fcfs, mcsf, size, sorted-f, sorted-lp, a plug-in) or vllm, vllm-sf"
        )
    write_priorities(inst, order, output)
    click.echo(
        f"{policy}: wrote {inst.n} priorities (0 runs first) to {output}; "
        f"TEL of the policy here {sched.tel} rounds",
        err=True,
    )


#: Requests whose start ``exact`` prints in its text output (the rest in the schedule file).
SHOWN_STARTS = 12


def _schedule_line(sched: Schedule | None, output: str | None) -> str:
    """The ``schedule`` line of a text summary: start rounds by request id, and where the whole
    schedule is (empty without a schedule)."""
    if sched is None:
        return ""
    ids = sched.instance.ids
    starts = sched.start[:SHOWN_STARTS].tolist()
    shown = ", ".join(
        f"{_one_line(rid)} {p}" for rid, p in zip(ids[:SHOWN_STARTS], starts, strict=True)
    )
    more = f", ... ({len(ids)} requests)" if len(ids) > SHOWN_STARTS else ""
    where = f"written to {output}" if output else "-o FILE writes the schedule JSON"
    return f"\nschedule    start rounds {shown}{more}; {where}"


def _peak(sched: Schedule) -> tuple[int, int | None]:
    """Peak memory ``max_t m(t)`` (tokens) and the first round it is reached (None without a
    run ending at a round >= 1); ``m`` peaks where a run ends (SPEC section 2)."""
    ends = np.unique(sched.completion if sched.runs is None else sched.runs[:, 2])
    ends = ends[ends >= 1]
    if not ends.size:
        return 0, None
    mem = sched.memory_at(ends)
    k = int(np.argmax(mem))
    return int(mem[k]), int(ends[k])


@main.command()
@click.argument("instance")
@click.argument("schedule_file", metavar="SCHEDULE")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@_bad_input
def check(instance: str, schedule_file: str, as_json: bool) -> None:
    """Check that SCHEDULE (schedule JSON, SPEC section 9) is feasible for INSTANCE.

    Prints TEL, makespan, the peak memory and its round, and the first violation of SPEC
    section 2 (a start before the arrival, a round over M, inconsistent runs), if any. Exit
    code 0: feasible; 1: infeasible, or a file that cannot be read (the message says where).
    """
    inst = _load(instance)
    sched = read_schedule(schedule_file, inst, check=False)
    bad = sched.violations(limit=1)
    peak, at = _peak(sched)
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
    if as_json:
        click.echo(json.dumps(out))
    else:
        lines = [
            f"schedule     {_one_line(schedule_file)} ({_one_line(sched.policy or 'no policy')}) "
            f"of {_one_line(inst.name)}: n = {inst.n}, M = {inst.memory} tokens",
            f"TEL          {sched.tel} rounds (mean latency {sched.mean_latency:.1f})",
            f"makespan     {sched.makespan} rounds",
            f"peak memory  {peak} tokens at round {at} ({100 * peak / inst.memory:.1f}% of M)",
        ]
        if sched.runs is not None:
            lines.append(f"evictions    {sched.evictions} ({sched.wasted_tokens} tokens wasted)")
        lines.append(f"infeasible   {bad[0]}" if bad else "feasible     yes")
        click.echo("\n".join(lines))
    if bad:
        sys.exit(1)


#: The figure formats of ``lpsched plot`` (matplotlib's Agg, PDF and SVG back ends).
PLOT_SUFFIXES = (".png", ".pdf", ".svg")


@main.command()
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
@_bad_input
def plot(
    instance: str,
    schedule_file: str,
    output: str,
    color: str,
    phase1: str | None,
    max_requests: int,
) -> None:
    """Draw SCHEDULE of INSTANCE: a Gantt chart over the memory profile, M drawn.

    Rows are requests ordered by start, bars from start to completion (evicted runs hatched),
    coloured by workload class or Sorted-F batch; the memory panel stacks the KV cache held
    by each colour. An infeasible schedule is drawn too (a note says so).
    """
    if Path(output).suffix.lower() not in PLOT_SUFFIXES:
        raise click.BadParameter(
            f"{output!r}: the figure format comes from the suffix, one of "
            f"{', '.join(PLOT_SUFFIXES)}",
            param_hint="-o",
        )
    inst = _load(instance)
    sched = read_schedule(schedule_file, inst, check=False)
    import matplotlib

    matplotlib.use("Agg")
    from ..plotting import plot_schedule, save_figure
    from ..plotting.schedule import batch_labels

    groups = None
    if color == "batch":
        with _solver_chatter_to_stderr():
            groups = batch_labels(inst, _phase1_for(inst, phase1))
    save_figure(plot_schedule(sched, groups=groups, max_requests=max_requests), output)
    bad = sched.violations(limit=1)
    note = f"; note: infeasible: {bad[0]}" if bad else ""
    click.echo(f"wrote {output}: {inst.n} requests, TEL {sched.tel} rounds{note}", err=True)


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


@main.command(name="generate")
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
    callback=_finite,
    help="Poisson arrivals, requests per round (default: all at round 0).",
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
    callback=_finite,
    help="With --trace: keep the trace's arrived_at, one round lasting this many ms.",
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
@_bad_input
def generate_cmd(
    workload,
    n,
    memory,
    seed,
    arrival_rate,
    traces,
    weights,
    round_ms,
    skip_oversized,
    interval_spec,
    name,
    output,
) -> None:
    """Write a random instance JSON from a shipped workload or from trace files."""
    if traces:
        w = None if weights is None else _floats(weights, "--weights")
        if arrival_rate is not None:
            raise click.UsageError(
                "--arrival-rate applies to --workload, not to --trace "
                "(use --round-ms to keep the trace's arrivals)"
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
        )
    else:
        if skip_oversized:
            raise click.UsageError("--skip-oversized goes with --trace")
        if weights is not None:
            raise click.UsageError("--weights goes with --trace; for workloads write name:weight")
        if round_ms is not None:
            raise click.UsageError("--round-ms goes with --trace")
        if workload in EXACT_WORKLOADS:
            if arrival_rate is not None:
                raise click.UsageError(f"--arrival-rate does not apply to {workload}")
            inst = EXACT_WORKLOADS[workload](n, seed, memory)
            if name is not None:
                inst = inst.replace(name=name)
        else:
            try:
                parse_mixture(workload)
            except ValueError as exc:
                raise click.BadParameter(str(exc), param_hint="--workload") from None
            inst = generate(workload, n, memory, seed=seed, arrival_rate=arrival_rate, name=name)
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


@main.command()
@click.argument("instance")
@click.option("--solver", type=RegistryChoice(SOLVERS), default="highs", show_default=True)
@click.option(
    "--time-limit",
    type=click.FloatRange(min=0, min_open=True),
    default=60.0,
    show_default=True,
    callback=_finite,
    help="Seconds for the whole solve: the local search gets at most a quarter (and 5 s), "
    "the model build and the solver the rest (see the reported build and solve times).",
)
@click.option(
    "--mip-gap",
    type=click.FloatRange(min=0, max=1),
    default=0.0,
    show_default=True,
    callback=_finite,
    help="Relative gap at which to stop (0: prove optimality).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    default=None,
    help="Write the best schedule found as schedule JSON.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@max_nonzeros_option("20,000,000; 2,000,000 for the pyomo backend")
@verbose_option
@_bad_input
def exact(
    instance: str,
    solver: str,
    time_limit: float,
    mip_gap: float,
    output: str | None,
    as_json: bool,
    max_nonzeros: int | None,
    verbose: bool,
) -> None:
    """Solve INSTANCE exactly (time-indexed MIP, SPEC section 3): optimal TEL, or bound and gap.

    Ctrl-C or SIGTERM stops the solver: the best schedule and bound so far are printed (and
    written with -o) with status 'interrupted', exit code 130. Status 'error' exits with 1.
    While it runs, standard error shows one live line (elapsed time, incumbent, bound, gap)
    on a terminal, that line every 30 s otherwise, and with -v the solver log as well.
    """
    with _signals_as_interrupt():
        try:
            inst = _load(instance)
            stopped = False
            try:
                with _solver_chatter_to_stderr(), cli_progress(verbose, "exact") as progress:
                    res = solve_exact(
                        inst,
                        solver=solver,
                        time_limit=time_limit,
                        mip_gap=mip_gap,
                        max_nonzeros=max_nonzeros,
                        progress=progress,
                    )
            except SolveInterrupted as exc:
                res, stopped = exc.result, True
            if output is not None and res.schedule is not None:
                write_schedule(res.schedule, output)
            click.echo(
                json.dumps(res.to_dict())
                if as_json
                else res.summary() + _schedule_line(res.schedule, output)
            )
        except KeyboardInterrupt:
            _interrupted("no result to report")
    if stopped:
        kept = f"; the schedule is in {output}" if output and res.schedule is not None else ""
        _interrupted(f"reported the best schedule and bound found so far{kept}")
    if res.status is SolveStatus.ERROR:
        why = res.info.get("error", "the solver failed")
        click.echo(f"lpsched: error: {instance}: status error: {why}", err=True)
        sys.exit(1)


@main.command()
@click.argument("instance", required=False)
@click.option(
    "--method",
    type=click.Choice(["auto", "lp", "combinatorial", "trivial"]),
    default="auto",
    show_default=True,
    help="auto: the LP relaxation when it is small enough, else combinatorial.",
)
@click.option(
    "--time-limit",
    type=click.FloatRange(min=0, min_open=True),
    default=60.0,
    show_default=True,
    callback=_finite,
    help="Seconds for the LP.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@max_nonzeros_option("5,000,000 for auto (above it: combinatorial), 20,000,000 for lp")
@verbose_option
@_bad_input
def bound(
    instance: str | None,
    method: str,
    time_limit: float,
    as_json: bool,
    max_nonzeros: int | None,
    verbose: bool,
) -> None:
    """A lower bound on the optimal TEL of INSTANCE (default: the shipped default instance)."""
    with _signals_as_interrupt():
        try:
            inst = _load(instance)
            try:
                with _solver_chatter_to_stderr(), cli_progress(verbose, "bound") as progress:
                    res = best_bound(
                        inst,
                        time_limit,
                        method=method,
                        max_nonzeros=max_nonzeros,
                        progress=progress,
                    )
            except RuntimeError as exc:  # the LP was not solved within the time limit
                raise InstanceError(f"{instance or 'default'}: {exc}") from None
            click.echo(json.dumps(res.to_dict()) if as_json else res.summary())
        except KeyboardInterrupt:
            _interrupted("no bound computed")


@main.command()
@click.argument("instance", required=False)
@click.option(
    "--time-limit",
    type=click.FloatRange(min=0, min_open=True),
    default=60.0,
    show_default=True,
    callback=_finite,
    help="Seconds for the whole run (the list policies always finish first).",
)
@click.option(
    "--threads",
    type=click.IntRange(min=1),
    default=None,
    help="HiGHS / CP-SAT threads (default: theirs).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the searches.")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    default=None,
    help="Write the best schedule found as schedule JSON.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@verbose_option
@_bad_input
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
    from ..certify import CertifyInterrupted
    from ..certify import certify as run_certify

    if output is not None:  # before a run of minutes, not after it
        folder = os.path.dirname(os.path.abspath(output))
        if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
            raise click.BadParameter(f"{output}: cannot write there", param_hint="-o")
    with _signals_as_interrupt():
        try:
            inst = _load(instance)
            stopped = False
            try:
                with _solver_chatter_to_stderr(), cli_progress(verbose, "certify") as progress:
                    res = run_certify(
                        inst, time_limit, threads=threads, seed=seed, progress=progress
                    )
            except CertifyInterrupted as exc:
                res, stopped = exc.result, True
            if output is not None:
                write_schedule(res.schedule, output)
            click.echo(
                json.dumps(res.to_dict())
                if as_json
                else res.summary() + _schedule_line(res.schedule, output)
            )
        except KeyboardInterrupt:
            _interrupted("no schedule found yet")
    if stopped:
        kept = f"; the schedule is in {output}" if output else ""
        _interrupted(f"reported the best schedule and bound found so far{kept}")


@main.command()
@click.argument("instance")
@click.option("--format", "fmt", type=click.Choice(EXPORT_FORMATS), default="lp", show_default=True)
@click.option("--relax", is_flag=True, help="Write the LP relaxation instead of the MIP.")
@click.option(
    "--backend",
    type=click.Choice(["pyomo", "highs"]),
    default="pyomo",
    show_default=True,
    help="pyomo: named variables x[i,k]; highs: fast for large instances.",
)
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True)
@max_nonzeros_option("2,000,000 for pyomo, 20,000,000 for highs")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (file, horizon).")
@_bad_input
def export(
    instance: str,
    fmt: str,
    relax: bool,
    backend: str,
    output: str,
    max_nonzeros: int | None,
    as_json: bool,
) -> None:
    """Write the time-indexed model of INSTANCE as an LP or MPS file for any solver.

    The horizon is the one 'exact' uses (min(T1, T2) with start windows); it is printed and
    written in the file's first comment lines. The file is written under a temporary name in
    the same folder and renamed once complete; a failed or interrupted write leaves no file.
    Arrivals are counted from the earliest one.
    """
    facts: dict[str, Any] = {}
    with _signals_as_interrupt():
        try:
            inst = _load(instance)
            with _solver_chatter_to_stderr():
                export_model(
                    inst,
                    output,
                    fmt,
                    relax=relax,
                    backend=backend,
                    max_nonzeros=max_nonzeros,
                    info=facts,
                )
        except KeyboardInterrupt:
            _interrupted(f"{output} not written")
    horizon = (
        f"horizon T = {facts['horizon']} (T1 = {facts['T1']}, T2 = {facts['T2']}"
        f"{', start windows' if facts['windows'] else ''})"
    )
    if as_json:
        click.echo(json.dumps({"output": output, "format": fmt, "relax": relax, **facts}))
    click.echo(f"wrote {output}: {horizon}", err=True)


@main.group()
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
    default=True,
    show_default=True,
    help="A yes-instance (planted triples) or a proven no-instance.",
)
@click.option("--distinct", is_flag=True, help="Make the 3m values distinct.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True)
@_bad_input
def three_partition(m: int, B: int, yes: bool, distinct: bool, seed: int, output: str) -> None:
    """Write the scheduling instance of a 3-Partition instance: TEL 3m(m+1)/2 is reachable
    iff the 3-Partition instance is a yes-instance."""
    inst = make_gadget(m, B, yes=yes, seed=seed, distinct=distinct)
    write_instance(inst, output)
    click.echo(
        f"wrote {output}: {'yes' if yes else 'no'}-instance, n = {inst.n}, "
        f"M = {inst.memory}, TEL threshold {tel_threshold(m)}",
        err=True,
    )


@main.command(name="policies")
@import_option
@click.option(
    "--json", "as_json", is_flag=True, help="Print one JSON list (name, description, options)."
)
@_bad_input
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


def _time_limits_option(text: str) -> float | dict[int, float]:
    """``--time-limits``: one number of seconds for every size, or ``N=S,N=S`` per size."""
    try:
        if "=" not in text:
            return float(text)
        pairs = [part.split("=") for part in text.split(",")]
        return {int(n): float(s) for n, s in pairs}
    except ValueError:
        raise click.BadParameter(
            f"expected seconds (e.g. 60) or comma-separated N=SECONDS (e.g. 30=60,2000=600), "
            f"got {text!r}",
            param_hint="--time-limits",
        ) from None


def _reproductions_epilog() -> str:
    lines = ["\b", "Reproductions:"]
    lines += [f"  {r.name:16s}{r.description}" for r in REPRODUCTIONS.values()]
    return "\n".join(lines)


@main.command(epilog=_reproductions_epilog())
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
@click.option("-v", "--verbose", is_flag=True, help="Name each task as it starts and ends.")
@_bad_input
def reproduce(
    name: str,
    out_dir: str,
    seeds: str | None,
    sizes: str | None,
    time_limits: str | None,
    trace_dir: str | None,
    workloads: tuple[str, ...],
    workers: int | None,
    scheduler: str | None,
    fresh: bool,
    strict: bool,
    verbose: bool,
) -> None:
    """Reproduce a paper table; rows are written as they finish and a rerun resumes.

    Every row records its parameters, the lpsched version and commit and the solver versions;
    the table uses only rows that match this run. Ctrl-C or SIGTERM stops the run (exit 130)
    and keeps every finished row; a worker process that dies (killed, out of memory) stops it
    with exit code 1, the finished rows kept.
    """
    opts: dict[str, Any] = {
        "workers": workers or (1 if scheduler not in (None, "local") else os.cpu_count() or 1),
        "scheduler": scheduler,
        "fresh": fresh,
        "strict": strict,
        "verbose": verbose,
    }
    repro = REPRODUCTIONS[name]
    for option, text, least in (("seeds", seeds, 0), ("sizes", sizes, 1)):
        if text is None:
            continue
        if not accepts(repro, option):
            raise click.UsageError(f"'{name}' has no {option}; drop --{option}")
        try:
            values = [int(s) for s in text.split(",")]
        except ValueError:
            values = []
        if not values or min(values) < least:
            raise click.BadParameter(
                f"expected comma-separated integers >= {least}, got {text!r}",
                param_hint=f"--{option}",
            )
        opts[option] = list(dict.fromkeys(values))  # each value once
    if time_limits is not None:
        if not accepts(repro, "time_limits"):
            raise click.UsageError(f"'{name}' has no time limits; drop --time-limits")
        opts["time_limits"] = _time_limits_option(time_limits)
    if trace_dir is not None:
        if not accepts(repro, "trace_dir"):
            raise click.UsageError(f"'{name}' does not read traces; drop --trace-dir")
        opts["trace_dir"] = trace_dir
    if workloads:
        chosen = list(dict.fromkeys(workloads))
        if accepts(repro, "workloads"):
            opts["workloads"] = chosen
        elif accepts(repro, "workload") and len(chosen) == 1:
            opts["workload"] = chosen[0]
        elif accepts(repro, "workload"):
            raise click.UsageError(f"'{name}' takes one --workload, got {len(chosen)}")
        else:
            raise click.UsageError(f"'{name}' has no workload option; drop --workload")
    try:
        with _signals_as_interrupt(), _solver_chatter_to_stderr():
            table = repro.run(out_dir, **opts)
    except KeyboardInterrupt:
        _interrupted(f"the finished rows are kept in {out_dir}/, rerun to resume")
    except SweepWorkerError as exc:
        click.echo(f"lpsched: error: {exc}", err=True)
        sys.exit(1)
    except ImportError as exc:
        raise click.UsageError(str(exc)) from None
    click.echo(table)
    written = sorted(p.name for p in Path(out_dir).iterdir())
    click.echo(f"\nresults in {out_dir}/: {', '.join(written)}", err=True)


@main.group()
def traces() -> None:
    """The public traces the workloads come from: list, fetch into the cache, show the cache.

    The cache is $LPSCHED_DATA_DIR, else the platform's user cache folder; $LPSCHED_TRACES_URL
    replaces the files' URLs by BASE/FILE (a mirror)."""


@traces.command(name="list")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def traces_list(as_json: bool) -> None:
    """The registered traces: name, file, rows, licence, source and whether they are cached."""
    rows = [
        {
            "name": t.name,
            "file": t.file,
            "rows": t.rows,
            "licence": t.licence,
            "repository": t.repository,
            "url": datasets.trace_url(t.name),
            "sha256": t.sha256,
            "cached": datasets.is_cached(t.name),
            "description": t.description,
        }
        for t in datasets.TRACES.values()
    ]
    if as_json:
        click.echo(json.dumps({"cache": str(datasets.cache_dir()), "traces": rows}))
        return
    keys = ["name", "file", "rows", "licence", "repository", "cached"]
    click.echo(tabulate([[r[k] for k in keys] for r in rows], headers=keys))
    click.echo(f"cache: {datasets.cache_dir()}")


@traces.command(name="fetch")
@click.argument("names", nargs=-1, type=RegistryChoice(datasets.TRACES), metavar="[NAME]...")
@_bad_input
def traces_fetch(names: tuple[str, ...]) -> None:
    """Download the traces NAMES (default: all; 'lpsched traces list' names them) into the
    cache and check their sha256; files already there with the right hash are kept."""
    for name, path in datasets.fetch(names or None, progressbar=True).items():
        click.echo(f"{name}: {path}")


@traces.command(name="path")
def traces_path() -> None:
    """Print the cache folder the reproductions read the traces from."""
    click.echo(datasets.cache_dir())


if __name__ == "__main__":
    main()
