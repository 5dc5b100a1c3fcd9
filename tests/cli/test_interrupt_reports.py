"""What an interrupt finds is kept and said right: ``bound`` and ``certify`` print the best
bound and schedule found before the signal, a Ctrl-C before the solve says what was lost,
and ``reproduce`` says when no row had finished. The interrupts are raised in-process (a
``KeyboardInterrupt`` where the signal handler would raise it), never timed."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from lpsched.cli import main
from lpsched.research.reproductions import optimality_gaps
from lpsched.sweeps.engine import Sweep, Task, run_sweep


def _ctrl_c(*args, **kwargs):
    raise KeyboardInterrupt("SIGINT")


def test_reproduce_interrupted_before_any_row_says_none_was_kept(monkeypatch, tmp_path):
    """Before: "the finished rows are kept in OUT/" although no task had finished."""
    monkeypatch.setattr(optimality_gaps, "solve_exact", _ctrl_c)
    monkeypatch.setattr(optimality_gaps, "lp_bound", _ctrl_c)
    res = CliRunner().invoke(
        main,
        ["reproduce", "optimality-gaps", "--sizes", "8", "--seeds", "0", "--workers", "1",
         "--out", str(tmp_path / "out")],
    )  # fmt: skip
    assert res.exit_code == 130, res.output
    assert "no task had finished" in res.stderr
    assert "finished rows are kept" not in res.stderr


def test_an_interrupted_sweep_says_how_many_rows_it_kept(tmp_path):
    def compute(params, missing):
        if params["x"] == 2:
            raise KeyboardInterrupt("SIGINT")
        for key in missing:
            yield {**key, "y": params["x"]}

    tasks = [Task({"x": i}, ({"p": "a"},)) for i in range(3)]
    sweep = Sweep("r", ["x", "p", "y"], ["x", "p"], tasks, compute, types={"y": int})
    with pytest.raises(KeyboardInterrupt, match="SIGINT") as caught:
        run_sweep(sweep, tmp_path, progress=False)
    assert caught.value.rows_kept == 2


def _small_instance_file(tmp_path):
    from lpsched.generators.small import scaled_mix
    from lpsched.io import write_instance

    path = tmp_path / "i.json"
    write_instance(scaled_mix(10, seed=0, memory=50), path)
    return str(path)


def test_bound_interrupted_prints_the_bound_found_marked_interrupted(monkeypatch, tmp_path):
    """`bound --method lp-aggregated` stopped after a bound was found: the line gives that
    bound and says it was interrupted (before: the bound alone, as if the method had ended)."""
    from lpsched.certify.methods import aggregated

    def found_then_stopped(instance, schedule=None, **options):
        options["observer"].on_bound(40.5)
        raise KeyboardInterrupt("SIGINT")

    monkeypatch.setattr(aggregated, "aggregated_lp_bound", found_then_stopped)
    path = _small_instance_file(tmp_path)
    res = CliRunner().invoke(main, ["bound", path, "--method", "lp-aggregated"])
    assert res.exit_code == 130, res.output
    assert res.stdout.startswith("lp-aggregated lower bound 40.5")
    assert "interrupted" in res.stdout
    data = CliRunner().invoke(main, ["bound", path, "--method", "lp-aggregated", "--json"])
    got = json.loads(data.stdout)
    assert (got["bound"], got["status"]) == (40.5, "interrupted")


def test_certify_interrupted_in_sorted_f_keeps_the_list_schedules_found(monkeypatch, tmp_path):
    """Ctrl-C while Sorted-F's Phase 1 runs (15 s at n = 20,000): the schedules of the list
    policies that had finished are kept (before: "TEL -", no schedule)."""
    from lpsched.policies import local_search

    monkeypatch.setitem(local_search.LIST_ORDERS, "sorted-f", _ctrl_c)
    path = _small_instance_file(tmp_path)
    res = CliRunner().invoke(main, ["certify", path, "--time-limit", "30", "--json"])
    assert res.exit_code == 130, res.output
    got = json.loads(res.stdout)
    assert got["status"] == "interrupted"
    assert got["objective"] is not None and got["bound"] > 0


def test_a_signal_as_the_progress_closes_keeps_the_result(monkeypatch, tmp_path):
    """The result is complete when a Ctrl-C lands as the progress display closes: it is
    printed (before: "no bound computed")."""
    import contextlib

    from lpsched.solvers import progress

    @contextlib.contextmanager
    def closing_interrupted(verbose, label, stream=None):
        yield progress.Progress("quiet")
        raise KeyboardInterrupt("SIGINT")

    monkeypatch.setattr(progress, "cli_progress", closing_interrupted)
    res = CliRunner().invoke(main, ["bound", _small_instance_file(tmp_path)])
    assert res.exit_code == 130, res.output
    assert "lower bound" in res.stdout
    assert "no bound computed" not in res.stderr


def test_a_signal_before_bound_starts_says_no_bound(monkeypatch, tmp_path):
    """Ctrl-C before `bound` reaches its solve (while its options are read): it writes no file,
    so the message says no bound was computed (before: "no output file was replaced")."""
    from lpsched.cli import solvers

    monkeypatch.setattr(solvers, "solve_and_report", _ctrl_c)
    res = CliRunner().invoke(main, ["bound", _small_instance_file(tmp_path)])
    assert res.exit_code == 130, res.output
    assert "no bound computed" in res.stderr
    assert "output file" not in res.stderr


def test_a_signal_inside_a_compiled_kernel_is_an_interrupt():
    """A SIGTERM that landed inside numba's ``price_starts`` (``bound --method lp-colgen`` at
    n = 2000, 4-8 s) came out as ``SystemError: CPUDispatcher(...) returned a result with an
    exception set``: exit 1, the bound lost. It is the interrupt it carries."""
    from lpsched import interrupts

    def kernel_that_was_interrupted():
        try:
            raise KeyboardInterrupt("SIGTERM")
        except KeyboardInterrupt as exc:
            raise SystemError("CPUDispatcher(...) returned a result with an exception set") from exc

    with pytest.raises(KeyboardInterrupt):
        with interrupts.kernel_call():
            kernel_that_was_interrupted()
    with pytest.raises(SystemError, match="other"):  # any other SystemError is left alone
        with interrupts.kernel_call():
            raise SystemError("other")


@pytest.mark.parametrize(
    ("command", "has_schedule", "output", "says", "never"),
    [
        ("bound", False, None, "best bound found so far", "schedule"),
        ("certify", False, "f.json", "no schedule found yet", "the schedule is in"),
        ("exact", False, "f.json", "f.json was not written", "best schedule"),
        ("certify", True, "f.json", "the schedule is in f.json", "not written"),
    ],
)
def test_an_interrupted_solve_claims_only_what_it_found(command, has_schedule, output, says, never):
    """Before: "reported the best schedule and bound found so far" when TEL was "-" (no
    schedule, -o not written), and from ``bound``, which finds no schedule."""
    from lpsched.cli.common import interrupted_summary

    text = interrupted_summary(command, has_schedule, output)
    assert says in text and never not in text


def test_a_signal_inside_any_kernel_exits_as_an_interrupt():
    """The command line's net: a kernel's SystemError carrying the interrupt exits 130 with
    the interrupt's message, never a traceback (the pricing kernel's own call site keeps its
    bound; this covers every other kernel)."""
    from lpsched.cli.common import interruptible

    with pytest.raises(SystemExit) as stop:
        with interruptible("nothing was written"):
            try:
                raise KeyboardInterrupt("SIGINT")
            except KeyboardInterrupt as exc:
                raise SystemError(
                    "CPUDispatcher(...) returned a result with an exception set"
                ) from exc
    assert stop.value.code == 130
