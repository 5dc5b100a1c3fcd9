"""The ``lpsched`` command line (``docs/architecture.md`` lists the names other tools rely on).

Thin: every command parses its options, calls one public function and prints. The choices of
``--solver``, ``--method``, ``--phase1``, ``--format``, ``--backend`` and ``reproduce NAME`` come
from the registries, so a new back end or reproduction appears here without an edit.

Exit codes: 0 ok, 1 bad input (the message names the file, request and field) or a failed run
(``exact`` with status ``error``, a sweep whose worker died), 2 usage error, 130 interrupted
(Ctrl-C or SIGTERM: ``exact`` and ``certify`` still print the best schedule and bound found so
far with status ``interrupted``; ``reproduce`` keeps every finished row).
``--json`` prints one JSON object on standard output; the default is a readable table.
Progress bars go to standard error.

One module per command group: :mod:`~lpsched.cli.policies` (run, schedule, priorities,
policies), :mod:`~lpsched.cli.timing` (time-models), :mod:`~lpsched.cli.check` (check, plot),
:mod:`~lpsched.cli.solvers` (exact, bound, certify, export),
:mod:`~lpsched.cli.generate` (generate, gadget), :mod:`~lpsched.cli.traces`,
:mod:`~lpsched.cli.reproduce`; what they share is in :mod:`~lpsched.cli.common`.
"""

from __future__ import annotations

import signal
from typing import Any

import click

from .. import __version__
from . import check, generate, policies, reproduce, solvers, timing, traces
from .common import interrupted

__all__ = ["main"]


class _Main(click.Group):
    """The command group; a Ctrl-C or SIGTERM that no command handles itself (during ``run``,
    ``schedule``, ``generate``, a plug-in's code) exits with 130 and one line, not click's
    ``Aborted!`` with exit 1 (or a silent death by SIGTERM)."""

    def invoke(self, ctx: click.Context) -> Any:
        if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:  # kill: as Ctrl-C, not -15
            signal.signal(signal.SIGTERM, _terminate)
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            interrupted(self._lost(ctx))

    def _lost(self, ctx: click.Context) -> str:
        """What a signal that no command handled has cost: a solver command's result (none
        yet), else the output file (none replaced), or nothing written."""
        name = ctx.invoked_subcommand
        command = None if name is None else self.get_command(ctx, name)
        lost = ["stopped before it finished"]
        if name in solvers.NOTHING:
            lost.append(solvers.NOTHING[name])
        if command is None or any(p.name == "output" for p in command.params):
            lost.append("no output file was replaced")
        elif name not in solvers.NOTHING:
            lost.append("nothing was written")
        return "; ".join(lost)


def _terminate(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt("SIGTERM")


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="lpsched")
def main() -> None:
    """lpsched: batch scheduling of LLM requests under a KV-cache budget (TEL, rounds)."""


for commands in (  # by command module
    (policies.run, policies.schedule, policies.priorities, policies.list_policies),
    (timing.list_time_models, check.check, check.plot),
    (generate.generate_cmd, generate.gadget, reproduce.reproduce, traces.traces),
    (solvers.exact, solvers.bound, solvers.export, solvers.certify),
):
    for command in commands:
        main.add_command(command)
