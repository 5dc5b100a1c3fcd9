"""What the commands of :mod:`lpsched.cli` share: loading instances, the exit codes of bad input
and interruption, the solvers' output kept off standard output, and the common options.

Every command module imports from here and from the library, never from another command module.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, NoReturn

import click

from ..instance import Instance, InstanceError, OptionError, one_line
from ..interrupts import kernel_call, signals_as_interrupt
from ..io import check_output as check_output
from ..io import default_instance, read_instance, write_schedule
from ..plugins import PluginError, import_plugins
from ..policies.registry import PolicySelectionError
from ..policies.selection import parse_policy_options
from ..policies.sorted_f import PHASE1_SOLVERS
from ..solvers.result import Result, SolveStatus
from ..timing.model import TimeModelError
from ..timing.registry import parse_time_model

#: Exit code of a run stopped by Ctrl-C or SIGTERM (128 + SIGINT, the shell's convention).
EXIT_INTERRUPTED = 130


def load_instance(path: str | None) -> Instance:
    """The instance file ``path`` (:func:`lpsched.io.read_instance`), or the shipped default
    without one."""
    return default_instance() if path is None else read_instance(path)


class RegistryChoice(click.Choice):
    """A ``click.Choice`` over a registry's names (or the names a function returns) at the
    time of the call, so that entries registered after import (plug-ins, tests) are valid
    choices too. Source: ours."""

    def __init__(self, registry: Mapping[str, Any] | Callable[[], Iterable[str]]) -> None:
        self._registry = registry
        super().__init__(list(self.choices))

    @property
    def choices(self) -> tuple[str, ...]:
        names = self._registry() if callable(self._registry) else self._registry
        return tuple(names)

    @choices.setter
    def choices(self, value: Any) -> None:  # click's __init__ assigns a snapshot; ignore it
        pass


def bad_input(fn):
    """Turn data errors into exit code 1 with one line naming file, request and field (a write
    that fails, :class:`lpsched.io.WriteError`, is an ``OSError`` naming the path), and an
    :class:`~lpsched.instance.OptionError` or a
    :class:`~lpsched.policies.registry.PolicySelectionError` into a usage error (exit code 2).
    A closed standard output (``lpsched run | head -1``) exits 1 without a message, as ``cat``
    does."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except BrokenPipeError:  # the reader of standard output closed it (``| head``): quiet
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())  # no second error when Python flushes at exit
            sys.exit(1)
        except (OptionError, PolicySelectionError) as exc:
            option = getattr(exc, "option", None)
            if option:
                raise click.BadParameter(str(exc), param_hint=option) from None
            raise click.UsageError(str(exc)) from None
        except (InstanceError, ValueError, KeyError, MemoryError, OSError) as exc:
            click.echo(f"lpsched: error: {error_text(exc)}", err=True)
            sys.exit(1)

    return wrapper


def error_text(exc: BaseException) -> str:
    """What an error line says about ``exc``: its message on one line (a ``KeyError``'s
    argument, unquoted), or, for an exception raised without one (``MemoryError()``, raised
    by numpy or Python when an allocation fails), what its type means. Never empty.

    Source: ours.
    """
    msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
    text = one_line(str(msg)).strip()
    if text:
        return text
    if isinstance(exc, MemoryError):
        return (
            "out of memory (an allocation failed); try smaller sizes, fewer --workers, or "
            "a machine with more memory"
        )
    return f"{type(exc).__name__} (raised without a message)"


@contextlib.contextmanager
def solver_chatter_to_stderr() -> Iterator[None]:
    """Send what solvers and plug-ins print to standard error, so that standard output holds
    only our table or JSON: the C-level standard output (HiGHS prints a banner whatever its
    options) and Python's ``sys.stdout`` (a plug-in policy's ``print``)."""
    sys.stdout.flush()
    with contextlib.redirect_stdout(sys.stderr):
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


def interrupted(message: str) -> NoReturn:
    """Say that the run was interrupted and what was kept; exit with :data:`EXIT_INTERRUPTED`.

    In the command's own process the exit skips the interpreter's teardown (``os._exit``
    once both streams are flushed; every row and schedule is written by then): after a
    Ctrl-C at the first task, that teardown ended the process by SIGINT (exit -2) or aborted
    in a compiled library's destructors ("double free", exit -6), about 1 run in 40. Under a
    test runner that captures the streams it raises ``SystemExit`` as usual.
    """
    click.echo(f"lpsched: interrupted; {message}", err=True)
    out, err = sys.__stdout__, sys.__stderr__
    if out is not None and err is not None and sys.stdout is out and sys.stderr is err:
        out.flush()
        err.flush()
        os._exit(EXIT_INTERRUPTED)
    sys.exit(EXIT_INTERRUPTED)


@contextlib.contextmanager
def interruptible(message: str) -> Iterator[None]:
    """Run the block with Ctrl-C and SIGTERM as ``KeyboardInterrupt``
    (:func:`lpsched.interrupts.signals_as_interrupt`); on one, exit as :func:`interrupted`,
    saying ``message``. A signal that landed inside a compiled kernel and came out as a
    ``SystemError`` is one too (:func:`lpsched.interrupts.kernel_call`, the net under the call
    sites that keep what they found)."""
    with signals_as_interrupt():
        try:
            with kernel_call():
                yield
        except KeyboardInterrupt:
            interrupted(message)


def solve_and_report(
    instance: str | None,
    command: str,
    call: Callable[[Instance, Any], Result],
    *,
    output: str | None = None,
    as_json: bool,
    verbose: bool,
    nothing: str,
    exit_on_error: bool = False,
) -> Result:
    """The one printer of ``exact``, ``bound`` and ``certify``: load INSTANCE, run
    ``call(instance, progress)`` (a :class:`~lpsched.solvers.result.Result`) with live progress,
    print the result in ``command``'s layout (``--json``: its keys,
    :data:`~lpsched.solvers.result.JSON_KEYS`), write its schedule with ``-o``.

    A result with status ``interrupted`` (Ctrl-C or SIGTERM) is printed and written, then the
    run exits with :data:`EXIT_INTERRUPTED`; ``nothing`` says what was lost when it stops
    before any result. With ``exit_on_error`` (``exact``), a result with status ``error`` is
    printed, then the run exits with 1, the solver's error on standard error. Returns the
    result. Source: ours.
    """
    from ..solvers.progress import cli_progress

    res: Result | None = None
    late = False  # a signal after the result was complete (as the progress display closed)
    with interruptible(nothing):
        inst = load_instance(instance)
        try:
            with solver_chatter_to_stderr(), cli_progress(verbose, command) as progress:
                res = call(inst, progress)
        except KeyboardInterrupt:
            if res is None:
                raise
            late = True
        if output is not None and res.schedule is not None:
            write_schedule(res.schedule, output)
        text = json.dumps(res.to_dict(command)) if as_json else res.summary(command, output)
        click.echo(text)
    assert res is not None  # interruptible exits when the call gave none
    if late or res.status is SolveStatus.INTERRUPTED:
        interrupted(interrupted_summary(command, res.schedule is not None, output))
    if exit_on_error and res.status is SolveStatus.ERROR:
        why = res.info.get("error", "the solver failed")
        click.echo(f"lpsched: error: {instance}: status error: {why}", err=True)
        sys.exit(1)
    return res


def interrupted_summary(command: str, has_schedule: bool, output: str | None) -> str:
    """What an interrupted ``exact``, ``bound`` or ``certify`` says it kept: never a schedule
    it did not find (``bound`` finds none), and where ``-o`` went (or that it was not
    written). Source: ours."""
    if command == "bound":
        return "reported the best bound found so far"
    if not has_schedule:
        unwritten = f"; {output} was not written" if output else ""
        return f"no schedule found yet; reported the bound found so far{unwritten}"
    kept = f"; the schedule is in {output}" if output else ""
    return f"reported the best schedule and bound found so far{kept}"


def finite(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    """Option callback: refuse NaN and infinity (click's FloatRange lets them through)."""
    if value is not None and not math.isfinite(value):
        raise click.BadParameter(f"must be a finite number, got {value}")
    return value


def parsed_by(parse: Callable[[Any], Any]) -> Callable[[click.Context, click.Parameter, Any], Any]:
    """An option callback: the option's value through ``parse`` (None stays None), what a
    plug-in prints on import sent to standard error. An unknown name (``KeyError``) or a
    refused value (:class:`~lpsched.instance.OptionError`,
    :class:`~lpsched.timing.model.TimeModelError`, :class:`~lpsched.plugins.PluginError`) is a
    usage error on one line (exit code 2), naming the option (an ``OptionError``'s own, if
    set)."""

    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        if value is None:
            return None
        try:
            with solver_chatter_to_stderr():
                return parse(value)
        except KeyError as exc:  # an unknown name: the message is its argument
            raise click.BadParameter(one_line(str(exc.args[0] if exc.args else exc))) from None
        except (OptionError, TimeModelError, PluginError) as exc:
            hint = getattr(exc, "option", None)
            raise click.BadParameter(one_line(str(exc)), param_hint=hint) from None

    return callback


@contextlib.contextmanager
def plugin_errors_after(load: Callable[[], None]) -> Iterator[None]:
    """Call ``load`` (a registry's plug-in loader), run the block (the listing of what loaded),
    then report a plug-in that failed to load on standard error and exit 1."""
    try:
        load()
        failed = ""
    except PluginError as exc:
        failed = str(exc)
    yield
    if failed:
        for line in failed.splitlines():
            click.echo(f"lpsched: error: {line}", err=True)
        sys.exit(1)


# --------------------------------------------------------------------------- shared options


def flag(*decls: str, help: str):
    """A boolean option, False unless given."""
    return click.option(*decls, is_flag=True, help=help)


def json_option(what: str = "one JSON object"):
    """``--json``: print ``what`` on standard output instead of the table."""
    return flag("--json", "as_json", help=f"Print {what}.")


verbose_option = flag(
    "-v",
    "--verbose",
    help="Stream the solver log, with an incumbent / bound / gap line every 2 s, on standard "
    "error (default: one live line (elapsed time, incumbent, bound, gap) on a terminal, that "
    "line every 30 s otherwise).",
)


def output_option(help: str | None = None, required: bool = True):
    """``-o FILE``: the file the command writes."""
    return click.option(
        "-o", "--output", type=click.Path(dir_okay=False), required=required, help=help
    )


def seed_option(help: str | None = None, maximum: int | None = None):
    """``--seed``: a seed >= 0 (default 0)."""
    return click.option(
        "--seed", type=click.IntRange(min=0, max=maximum), default=0, show_default=True, help=help
    )


def time_limit_option(help: str):
    """``--time-limit``: seconds > 0, default 60 (``exact``, ``bound``, ``certify``)."""
    return click.option(
        "--time-limit",
        type=click.FloatRange(min=0, min_open=True),
        default=60.0,
        show_default=True,
        callback=finite,
        help=help,
    )


def work_limit_option(help: str):
    """``--work-limit``: the solver's deterministic work, a number > 0, default none
    (``exact``, ``reproduce``; :class:`lpsched.solvers.options.SolveOptions`)."""
    return click.option(
        "--work-limit",
        type=click.FloatRange(min=0, min_open=True),
        default=None,
        metavar="WORK",
        callback=finite,
        help=help,
    )


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


#: ``-o FILE`` of ``exact`` and ``certify``: the best schedule found, as schedule JSON.
best_schedule_option = output_option("Write the best schedule found as schedule JSON.", False)


def phase1_option(note: str = "(default as for 'run')"):
    """``--phase1``: the Sorted-F Phase-1 solver (``lpsched.policies.sorted_f.PHASE1_SOLVERS``)."""
    return click.option(
        "--phase1",
        type=click.Choice(PHASE1_SOLVERS),
        help=f"Sorted-F Phase-1 solver {note}.",
    )


#: ``--import MODULE`` of every command that takes policy or time-model names: the modules
#: (:func:`lpsched.plugins.import_plugins`, the current directory searched first, as by
#: ``python -m``) are imported before the policy and time-model names are checked.
import_option = click.option(
    "--import",
    "imports",
    multiple=True,
    metavar="MODULE",
    expose_value=False,
    is_eager=True,
    callback=parsed_by(lambda modules: import_plugins(modules) if modules else None),
    help="Import MODULE first (repeatable): a module that calls lpsched.register_policy or "
    "lpsched.register_time_model, found in the current directory or on PYTHONPATH. Installed "
    "plug-ins (entry points 'lpsched.policies', 'lpsched.time_models') need no option.",
)


def time_model_option(what: str):
    """``--time-model NAME[:key=value,...]``: read the schedules in seconds (SPEC section 10),
    and ``--import`` (a plug-in time model)."""
    option = click.option(
        "--time-model",
        "model",
        metavar="NAME[:KEY=VALUE,...]",
        callback=parsed_by(parse_time_model),
        help=f"Read the schedules in seconds under this time model and {what} (SPEC section "
        "10): unit, linear, a fitted profile or a plug-in ('lpsched time-models' lists them), "
        "parameters after a colon, e.g. 'linear:base_s=0.02,prefill_token_s=2e-4'.",
    )
    return lambda fn: option(import_option(fn))


def policy_options(what: str):
    """``--option KEY=VALUE``, ``--time-model`` (its help ends with ``what``) and ``--import``:
    the options of every command that runs policies, in this order."""
    option = click.option(
        "--option",
        "policy_options",
        multiple=True,
        metavar="KEY=VALUE",
        callback=parsed_by(parse_policy_options),
        help="Pass KEY=VALUE to the selected policies that declare the option KEY (repeatable; "
        "'lpsched policies --json' lists each policy's options). VALUE is a bool (true/false), "
        "an int (12), a float (0.5, 1e-3) or else a string (swap). An option that no selected "
        "policy declares is refused.",
    )
    return lambda fn: option(time_model_option(what)(fn))
