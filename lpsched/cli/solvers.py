"""``lpsched exact``, ``bound`` and ``export``: the time-indexed model of an instance, solved,
bounded or written for another solver."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Mapping
from typing import Any

import click

from ..certify import best_bound, bound_choices, export_model, solve_exact
from ..certify.methods import METHODS
from ..instance import InstanceError
from ..solvers.result import SolveStatus
from ..solvers.solve import EXPORT_FORMATS, SOLVERS
from .common import (
    RegistryChoice,
    bad_input,
    best_schedule_option,
    check_output,
    finite,
    interrupted,
    json_option,
    load_instance,
    max_nonzeros_option,
    signals_as_interrupt,
    solve_and_report,
    solver_chatter_to_stderr,
    verbose_option,
)


@click.command()
@click.argument("instance")
@click.option("--solver", type=RegistryChoice(SOLVERS), default="highs", show_default=True)
@click.option(
    "--time-limit",
    type=click.FloatRange(min=0, min_open=True),
    default=60.0,
    show_default=True,
    callback=finite,
    help="Seconds for the whole solve: the local search gets at most a quarter (and 5 s), "
    "the model build and the solver the rest (see the reported build and solve times).",
)
@click.option(
    "--mip-gap",
    type=click.FloatRange(min=0, max=1),
    default=0.0,
    show_default=True,
    callback=finite,
    help="Relative gap at which to stop (0: prove optimality).",
)
@best_schedule_option
@json_option
@max_nonzeros_option("20,000,000; 2,000,000 for the pyomo backend")
@verbose_option
@bad_input
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
    check_output(output, instance)
    res = solve_and_report(
        instance,
        "exact",
        lambda inst, progress: solve_exact(
            inst,
            solver=solver,
            time_limit=time_limit,
            mip_gap=mip_gap,
            max_nonzeros=max_nonzeros,
            progress=progress,
        ),
        output=output,
        as_json=as_json,
        verbose=verbose,
        nothing="no result to report",
    )
    if res.status is SolveStatus.ERROR:
        why = res.info.get("error", "the solver failed")
        click.echo(f"lpsched: error: {instance}: status error: {why}", err=True)
        sys.exit(1)


class _BoundMethods(Mapping[str, str]):
    """The choices of ``bound --method`` at the time of the call: ``auto`` and every
    lower-side method of the certify registry, with its summary."""

    def __getitem__(self, name: str) -> str:
        if name == "auto":
            return "the LP when small enough, else combinatorial"
        if name not in bound_choices():
            raise KeyError(name)
        return METHODS[name].summary

    def __iter__(self) -> Iterator[str]:
        return iter(bound_choices())

    def __len__(self) -> int:
        return len(bound_choices())


@click.command()
@click.argument("instance", required=False)
@click.option(
    "--method",
    type=RegistryChoice(_BoundMethods()),
    default="auto",
    show_default=True,
    help="auto: the LP relaxation when it is small enough, else combinatorial; or one "
    "lower-bound method of the certify registry (lpsched.certify.methods.METHODS), run "
    "alone on the best list schedule.",
)
@click.option(
    "--time-limit",
    type=click.FloatRange(min=0, min_open=True),
    default=60.0,
    show_default=True,
    callback=finite,
    help="Seconds for the bound: the LP of auto and lp, or the budget of the method run alone.",
)
@json_option
@max_nonzeros_option(
    "5,000,000 for auto (above it: combinatorial), 20,000,000 for lp and mip, the method's own "
    "for the others"
)
@verbose_option
@bad_input
def bound(
    instance: str | None,
    method: str,
    time_limit: float,
    as_json: bool,
    max_nonzeros: int | None,
    verbose: bool,
) -> None:
    """A lower bound on the optimal TEL of INSTANCE (default: the shipped default instance)."""

    def call(inst, progress):
        try:
            return best_bound(
                inst, time_limit, method=method, max_nonzeros=max_nonzeros, progress=progress
            )
        except RuntimeError as exc:  # the LP was not solved within the time limit
            raise InstanceError(f"{instance or 'default'}: {exc}") from None

    solve_and_report(
        instance, "bound", call, as_json=as_json, verbose=verbose, nothing="no bound computed"
    )


@click.command()
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
@bad_input
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
    check_output(output, instance)
    facts: dict[str, Any] = {}
    with signals_as_interrupt():
        try:
            inst = load_instance(instance)
            with solver_chatter_to_stderr():
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
            interrupted(f"{output} not written")
    horizon = (
        f"horizon T = {facts['horizon']} (T1 = {facts['T1']}, T2 = {facts['T2']}"
        f"{', start windows' if facts['windows'] else ''})"
    )
    if as_json:
        click.echo(json.dumps({"output": output, "format": fmt, "relax": relax, **facts}))
    click.echo(f"wrote {output}: {horizon}", err=True)
