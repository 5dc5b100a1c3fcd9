"""``lpsched exact``, ``bound``, ``certify`` and ``export``: one solve of the driver
(:func:`lpsched.solve`, through its shortcuts) printed by one printer, or the model written for
another solver."""

from __future__ import annotations

import json

import click

from ..certify import best_bound, bound_choices, export_model, solve_exact
from ..certify import certify as run_certify
from ..formulations.horizon import horizon_line
from ..instance import InstanceError
from ..solvers.options import MAX_THREADS, check_work_limit
from ..solvers.result import Result, SolveStatus
from ..solvers.solve import EXPORT_BACKENDS, EXPORT_FORMATS, SOLVERS
from .common import (
    RegistryChoice,
    bad_input,
    best_schedule_option,
    check_output,
    finite,
    interruptible,
    json_option,
    load_instance,
    max_nonzeros_option,
    output_option,
    seed_option,
    solve_and_report,
    solver_chatter_to_stderr,
    time_limit_option,
    verbose_option,
    work_limit_option,
)

#: What ``exact``, ``bound`` and ``certify`` say was lost when a signal stops them before they
#: have a result (the solve not started, or the instance still being read).
NOTHING = {
    "exact": "no result to report",
    "bound": "no bound computed",
    "certify": "no schedule found yet",
}


@click.command()
@click.argument("instance")
@click.option("--solver", type=RegistryChoice(SOLVERS), default="highs", show_default=True)
@time_limit_option(
    "Seconds for the whole solve: the local search gets at most a quarter (and 5 s), the model "
    "build and the solver the rest (see the reported build and solve times)."
)
@click.option(
    "--mip-gap",
    type=click.FloatRange(min=0, max=1),
    default=0.0,
    show_default=True,
    callback=finite,
    help="Relative gap at which to stop (0: prove optimality).",
)
@work_limit_option(
    "Deterministic work of the solver, the same result on a busy machine as on an idle one: "
    "HiGHS' branch-and-bound nodes (a whole number), CP-SAT's deterministic seconds; the "
    "time limit stays a safety net (status 'work-limit' or 'time-limit' says which stopped "
    "it). HiGHS counts nodes only after its root (presolve, root LP, root cuts), which the "
    "time limit alone bounds: a run stopped there says 'time-limit' [default: none]."
)
@best_schedule_option
@json_option()
@max_nonzeros_option("20,000,000; 2,000,000 for the pyomo backend")
@verbose_option
@bad_input
def exact(
    instance, solver, time_limit, work_limit, mip_gap, output, as_json, max_nonzeros, verbose
) -> None:
    """Solve INSTANCE exactly (time-indexed MIP, SPEC section 3): optimal TEL, or bound and gap.

    Ctrl-C or SIGTERM stops the solver: the best schedule and bound so far are printed (and
    written with -o) with status 'interrupted', exit code 130. Status 'error' exits with 1.
    """
    try:
        check_work_limit(work_limit, solver)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="'--work-limit'") from None
    check_output(output, instance)
    res = solve_and_report(
        instance,
        "exact",
        lambda inst, progress: solve_exact(
            inst,
            solver,
            time_limit,
            mip_gap,
            max_nonzeros=max_nonzeros,
            progress=progress,
            work_limit=work_limit,
        ),
        output=output,
        as_json=as_json,
        verbose=verbose,
        nothing=NOTHING["exact"],
        exit_on_error=True,
    )
    if not as_json and res.status is SolveStatus.TIME_LIMIT:
        click.echo(_not_proven_line(res, instance, time_limit))


def _not_proven_line(res: Result, instance: str, time_limit: float) -> str:
    """The line ``lpsched exact`` adds when its time limit stopped the MIP before a proof: the
    gap it reached, and ``lpsched certify`` on the same instance as the next step.

    Parameters
    ----------
    res : Result
        What :func:`lpsched.certify.solve_exact` returned (status ``time-limit``).
    instance : str
        The instance file as given on the command line.
    time_limit : float
        The seconds the MIP had.

    Returns
    -------
    str
        One line, without a final newline.

    Notes
    -----
    Source: ours.
    """
    gap = "no schedule" if res.gap is None else f"gap {100 * res.gap:.2f}%"
    return (
        f"not proven optimal within {time_limit:g} s ({gap} reached): lpsched certify "
        f"{instance} --time-limit {time_limit:g} adds the bounds and searches of its automatic "
        "plan and reports the certified gap"
    )


@click.command()
@click.argument("instance", required=False)
@click.option(
    "--method",
    type=RegistryChoice(bound_choices),
    default="auto",
    show_default=True,
    help="auto: the LP relaxation when it is small enough, else combinatorial; or one "
    "lower-bound method of the certify registry (lpsched.certify.methods.METHODS), run "
    "alone on the best list schedule.",
)
@time_limit_option(
    "Seconds for the bound: the LP of auto and lp, or the budget of the method run alone."
)
@json_option()
@max_nonzeros_option(
    "5,000,000 for auto (above it: combinatorial), 20,000,000 for lp and mip, the method's own "
    "for the others"
)
@verbose_option
@bad_input
def bound(instance, method, time_limit, as_json, max_nonzeros, verbose) -> None:
    """A lower bound on the optimal TEL of INSTANCE (default: the shipped default instance)."""

    def call(inst, progress):
        try:
            return best_bound(
                inst, time_limit, method=method, max_nonzeros=max_nonzeros, progress=progress
            )
        except RuntimeError as exc:  # the LP was not solved within the time limit
            raise InstanceError(f"{instance or 'default'}: {exc}") from None

    solve_and_report(
        instance, "bound", call, as_json=as_json, verbose=verbose, nothing=NOTHING["bound"]
    )


@click.command()
@click.argument("instance", required=False)
@time_limit_option(
    "Seconds for the whole run. The list policies run first and always finish, Sorted-F last "
    "and only when it fits (its Phase 1 takes about 15 s at n = 20,000); then the methods."
)
@click.option(
    "--threads",
    type=click.IntRange(min=1, max=MAX_THREADS),
    help="HiGHS / CP-SAT threads (default: theirs).",
)
@seed_option("Seed of the searches.", maximum=2**63 - 1)
@best_schedule_option
@json_option()
@verbose_option
@bad_input
def certify(instance, time_limit, threads, seed, output, as_json, verbose) -> None:
    """The best schedule, the best valid lower bound and the certified gap of INSTANCE
    (default: the shipped default instance), choosing methods by its size.

    Prints the schedule's TEL and the method that found it, the bound and the method that
    proved it, the gap, and which method improved which side when. Status 'optimal' only
    when the bound meets the TEL. Ctrl-C or SIGTERM stops it: the best schedule and bound so
    far are printed (and written with -o), exit code 130.

    The time limit covers the list policies that give the first schedule: they run cheapest
    first, and Sorted-F (whose Phase 1 grows about as n^2.3: 15 s at n = 20,000) is skipped
    when twice its expected time would pass the limit; the others take about a second at
    n = 20,000 and always run, so a limit below that is not kept at such sizes.
    """
    check_output(output, instance, writable=True)  # before a run of minutes, not after it
    solve_and_report(
        instance,
        "certify",
        lambda inst, progress: run_certify(
            inst, time_limit, threads=threads, seed=seed, progress=progress
        ),
        output=output,
        as_json=as_json,
        verbose=verbose,
        nothing=NOTHING["certify"],
    )


@click.command()
@click.argument("instance")
@click.option("--format", "fmt", type=click.Choice(EXPORT_FORMATS), default="lp", show_default=True)
@click.option("--relax", is_flag=True, help="Write the LP relaxation instead of the MIP.")
@click.option(
    "--backend",
    type=click.Choice(EXPORT_BACKENDS),
    default="pyomo",
    show_default=True,
    help="pyomo: named variables x[i,k]; highs: fast for large instances.",
)
@output_option()
@max_nonzeros_option("2,000,000 for pyomo, 20,000,000 for highs")
@json_option("one JSON object (file, horizon)")
@bad_input
def export(instance, fmt, relax, backend, output, max_nonzeros, as_json) -> None:
    """Write the time-indexed model of INSTANCE as an LP or MPS file for any solver.

    The horizon is the one 'exact' uses (min(T1, T2) with start windows); it is printed and
    written in the file's first comment lines. The file is written under a temporary name in
    the same folder and renamed once complete; a failed or interrupted write leaves no file.
    Arrivals are counted from the earliest one.
    """
    check_output(output, instance)
    facts: dict = {}
    with interruptible(f"{output} not written"), solver_chatter_to_stderr():
        inst = load_instance(instance)
        export_model(
            inst, output, fmt, relax=relax, backend=backend, max_nonzeros=max_nonzeros, info=facts
        )
    if as_json:
        click.echo(json.dumps({"output": output, "format": fmt, "relax": relax, **facts}))
    click.echo(f"wrote {output}: {horizon_line(facts)}", err=True)
