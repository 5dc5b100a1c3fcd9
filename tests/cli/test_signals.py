"""``lpsched reproduce`` and the long commands stopped: SIGINT / SIGTERM during ``exact`` and
``reproduce``, a killed sweep worker, the study's workloads."""

from __future__ import annotations

import json
import os
import signal

import pytest
from click.testing import CliRunner

from lpsched.cli import main
from lpsched.io import read_instance, read_schedule
from lpsched.policies.local_search import best_heuristic


def invoke(*args):
    return CliRunner().invoke(main, list(args))


def test_reproduce_takes_the_studys_workloads(tmp_path):
    import csv

    out = tmp_path / "gaps"
    r = invoke(
        "reproduce", "optimality-gaps", "--workload", "paper-scaled", "--sizes", "5",
        "--seeds", "0", "--workers", "1", "--out", str(out),
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    with (out / "optimality-gaps.csv").open() as fh:
        assert {row["workload"] for row in csv.DictReader(fh)} == {"paper-scaled"}
    r = invoke("reproduce", "optimality-gaps", "--workload", "nosuch", "--out", str(out))
    assert r.exit_code == 2 and "unknown small workload 'nosuch'" in r.stderr
    r = invoke("reproduce", "algorithms", "--workload", "paper-scaled", "--out", str(out))
    assert r.exit_code == 2 and "unknown family 'paper-scaled'; known: paper," in r.stderr
    assert "workloads of optimality-gaps and certified-gaps" in r.stderr
    r = invoke("reproduce", "families", "--workload", "paper-mix", "--out", str(out))
    assert r.exit_code == 2 and "has no workload option" in r.stderr
    r = invoke("reproduce", "intervals", "--workload", "a", "--workload", "b", "--out", str(out))
    assert r.exit_code == 2 and "takes one --workload, got 2" in r.stderr


def _python_lpsched(*args: str) -> list[str]:
    """The command line as a separate process (signals go to it alone)."""
    import sys

    return [sys.executable, "-m", "lpsched.cli", *args]


#: ``python -c`` program: the command line that touches a marker file in a folder when the exact
#: solve reaches a stage (argv: the folder, then the command's arguments): ``heuristic`` at the
#: entry of the local search (after the list policies; the signal handlers are installed long
#: before), ``solve`` when the solver run itself starts (the model built, either back end).
_MARKED = """
import functools, pathlib, sys

from lpsched.certify import driver
from lpsched.solvers.backends import cpsat, highs

folder = pathlib.Path(sys.argv[1])


def marked(fn, stage):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        (folder / stage).touch()
        return fn(*args, **kwargs)

    return wrapper


driver.improve_schedule = marked(driver.improve_schedule, "heuristic")
for backend in (cpsat, highs):
    backend.run_interruptible = marked(backend.run_interruptible, "solve")

from lpsched.cli import main

main(sys.argv[2:], prog_name="lpsched")
"""


def _python_lpsched_marked(folder, *args: str) -> list[str]:
    """:func:`_python_lpsched` that touches ``folder / stage`` when the run reaches a stage
    of :data:`_MARKED`: a readiness signal, so that a test's signal lands in that stage at
    any speed of the machine."""
    import sys

    return [sys.executable, "-c", _MARKED, str(folder), *args]


def _slow_instance(tmp_path, n: int = 30):
    """The instance of the issue: the scaled 80/20 mix, n = 30, M = 50, seed 0 (HiGHS does not
    prove it within a minute)."""
    path = tmp_path / f"slow{n}.json"
    r = invoke(
        "generate", "--workload", "scaled-mix", "-n", str(n), "--memory", "50", "--seed", "0",
        "-o", str(path),
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    return path


def _signal_after(cmd, sig, delay: float, cwd, until=None, timeout: float = 120.0):
    """Run ``cmd``, send ``sig`` ``delay`` seconds after ``until()`` holds (default: at once),
    wait; return (exit code, stdout, stderr, seconds from the signal to the exit)."""
    import subprocess
    import time

    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    t0 = time.monotonic()
    try:
        while until is not None and not until():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() - t0 < timeout
            time.sleep(0.05)
        time.sleep(delay)
        sent = time.monotonic()
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return proc.returncode, out, err, time.monotonic() - sent


def _assert_interrupted_exact(rc, out, err, waited, tmp_path, schedule):
    assert rc == 130, (rc, out, err[-2000:])
    data = json.loads(out)
    assert data["status"] == "interrupted"
    assert waited < 40, waited  # a hang guard, below the 60 s limit (it takes ~1 s)
    assert "interrupted" in err
    if schedule.exists():
        sched = read_schedule(schedule, read_instance(tmp_path / "slow30.json"))
        assert sched.tel == data["objective"]
        assert data["bound"] <= data["objective"]
    return data


@pytest.mark.slow
@pytest.mark.parametrize(
    "solver,sig",
    [
        ("highs", signal.SIGINT),
        ("highs", signal.SIGTERM),
        ("cpsat", signal.SIGINT),
        ("cpsat", signal.SIGTERM),
    ],
    ids=["highs-INT", "highs-TERM", "cpsat-INT", "cpsat-TERM"],
)
def test_exact_stops_on_a_signal_during_the_solve(tmp_path, solver, sig):
    path = _slow_instance(tmp_path)
    out = tmp_path / "best.json"
    stages = tmp_path / "stages"
    stages.mkdir()
    cmd = _python_lpsched_marked(
        stages,
        "exact", str(path), "--solver", solver, "--time-limit", "60", "--json", "-o", str(out),
    )  # fmt: skip
    # the signal 0.5 s after the solver started (list policies, local search and build done)
    solving = (stages / "solve").exists
    rc, stdout, stderr, waited = _signal_after(cmd, sig, 0.5, tmp_path, solving)
    data = _assert_interrupted_exact(rc, stdout, stderr, waited, tmp_path, out)
    assert data["objective"] is not None and out.exists()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["INT", "TERM"])
def test_exact_stops_on_a_signal_during_the_heuristic(tmp_path, sig):
    path = _slow_instance(tmp_path, 150)  # its local search runs for seconds (4 s here)
    stages = tmp_path / "stages"
    stages.mkdir()
    cmd = _python_lpsched_marked(stages, "exact", str(path), "--time-limit", "60", "--json")
    # the signal 0.3 s into the local search (its 4000 moves take 4 s here, longer when slower)
    started = (stages / "heuristic").exists
    rc, stdout, stderr, waited = _signal_after(cmd, sig, 0.3, tmp_path, started)
    assert rc == 130, (rc, stdout, stderr[-2000:])
    data = json.loads(stdout)
    assert data["status"] == "interrupted" and waited < 40  # a hang guard
    # stopped in the local search: the list policies' schedule is kept, no solver ran
    assert data["objective"] == best_heuristic(read_instance(path)).tel
    assert not (stages / "solve").exists()


def _csv_rows(path):
    if not path.exists():
        return []
    text = path.read_text()
    return text.splitlines()[1:]


@pytest.mark.slow
@pytest.mark.parametrize(
    "sig,when",
    [
        (signal.SIGINT, "rows"),
        (signal.SIGTERM, "rows"),
        (signal.SIGINT, "start"),
        (signal.SIGTERM, "start"),
    ],
    ids=["INT-mid", "TERM-mid", "INT-start", "TERM-start"],
)
def test_reproduce_stops_on_a_signal_and_keeps_whole_rows(tmp_path, sig, when):
    """Sizes 6 and 8 solve in a moment, n = 60 of the first workload (paper-scaled, seed 0)
    takes tens of seconds in its MIP, which HiGHS interrupts (its LP takes 0.1 s; at n = 200
    the LP, which HiGHS cannot stop, took long enough to miss the deadline): the signal arrives
    during the MIP (or right at the start); the rows written stay whole and a rerun reuses
    them."""
    import csv

    out = tmp_path / "gaps"
    table = out / "optimality-gaps.csv"
    cmd = _python_lpsched(
        "reproduce", "optimality-gaps", "--seeds", "0", "--sizes", "6,8,60", "--workers", "1",
        "--out", str(out),
    )  # fmt: skip
    if when == "rows":  # the n = 6 and 8 rows are written, the n = 60 MIP runs
        until = lambda: len(_csv_rows(table)) >= 10  # noqa: E731
    else:  # the CSV has just been created: the first task starts
        until = table.exists
    rc, stdout, stderr, waited = _signal_after(
        cmd, sig, 1.0 if when == "rows" else 0.0, tmp_path, until
    )
    assert rc == 130, (rc, stderr[-2000:])
    assert "interrupted" in stderr and "Traceback" not in stderr
    assert waited < 60, waited  # a hang guard (it takes about a second)
    text = table.read_text()
    assert text.endswith("\n")
    rows = list(csv.DictReader(text.splitlines()))
    assert all(None not in r and None not in r.values() for r in rows)  # whole rows only
    assert {r["n"] for r in rows} <= {"6", "8"}
    assert all(r["status"] == "optimal" for r in rows)  # no interrupted row recorded
    if when == "rows":
        assert len(rows) >= 10
        r = invoke(
            "reproduce", "optimality-gaps", "--seeds", "0", "--sizes", "6,8", "--workers", "1",
            "--out", str(out),
        )  # fmt: skip
        assert r.exit_code == 0, r.output
        assert f"reused {len(rows)} of 30" in r.stderr  # 3 workloads x 2 sizes x 5 policies
        assert "rejected" not in r.stderr and "incomplete" not in r.stderr


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _left_alive(pids, timeout: float = 30.0) -> list[int]:
    """Those of ``pids`` still alive once they all ended or ``timeout`` seconds passed (a hang
    guard: a worker the command ended may take a moment to go on a loaded machine)."""
    import time

    t0 = time.monotonic()
    while (alive := [p for p in pids if _alive(p)]) and time.monotonic() - t0 < timeout:
        time.sleep(0.1)
    return alive


def _children(pids) -> list[int]:
    """Live processes whose parent is in ``pids`` (from /proc)."""
    import os

    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) in pids and fields[0] != "Z":
                out.append(int(entry))
    return out


@pytest.mark.slow
@pytest.mark.skipif(not __import__("os").path.isdir("/proc/self"), reason="needs Linux /proc")
def test_reproduce_with_a_killed_worker_is_one_clear_error_and_resumes(tmp_path):
    import csv
    import os
    import subprocess
    import time

    out = tmp_path / "gaps"
    table = out / "optimality-gaps.csv"
    cmd = _python_lpsched(
        "reproduce", "optimality-gaps", "--seeds", "0", "--sizes", "6,60", "--workers", "2",
        "--out", str(out),
    )  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        t0 = time.monotonic()
        # tasks in order: paper-scaled 6 and 60, scaled-mix 6 and 60, ...: one worker takes
        # paper-scaled 60 (tens of seconds), the other the two n = 6 tasks, then scaled-mix 60
        while len(_csv_rows(table)) < 10:  # both n = 6 tasks done, two n = 60 ones running
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() - t0 < 120
            time.sleep(0.1)
        # the workers are the forkserver's children: grandchildren of the command
        workers = sorted(_children(_children([proc.pid])))
        assert workers
        os.kill(workers[0], signal.SIGKILL)
        killed = time.monotonic()
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    err = stderr.decode()
    assert proc.returncode == 1, (proc.returncode, err[-2000:])
    assert "a worker process died" in err and "rerun to resume" in err
    assert "Traceback" not in err
    assert time.monotonic() - killed < 60  # a hang guard
    text = table.read_text()
    assert text.endswith("\n")
    rows = list(csv.DictReader(text.splitlines()))
    assert len(rows) == 10 and {r["n"] for r in rows} == {"6"}
    assert not _left_alive(workers)  # no worker left behind
    r = invoke(
        "reproduce", "optimality-gaps", "--seeds", "0", "--sizes", "6", "--workers", "2",
        "--out", str(out),
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "reused 10 of 15" in r.stderr  # uniform-small's n = 6 is new


@pytest.mark.slow
@pytest.mark.skipif(not __import__("os").path.isdir("/proc/self"), reason="needs Linux /proc")
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["INT", "TERM"])
def test_reproduce_with_workers_stops_on_a_signal_and_ends_its_workers(tmp_path, sig):
    import csv
    import subprocess
    import time

    out = tmp_path / "gaps"
    table = out / "optimality-gaps.csv"
    cmd = _python_lpsched(
        "reproduce", "optimality-gaps", "--seeds", "0", "--sizes", "6,30", "--workers", "2",
        "--out", str(out),
    )  # fmt: skip
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        t0 = time.monotonic()
        while len(_csv_rows(table)) < 10:  # the n = 30 tasks are busy in both workers
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() - t0 < 120
            time.sleep(0.1)
        time.sleep(1.0)
        workers = _children(_children([proc.pid]))
        assert workers
        proc.send_signal(sig)  # to the command alone, not to its workers
        sent = time.monotonic()
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    err = stderr.decode()
    assert proc.returncode == 130, (proc.returncode, err[-2000:])
    assert "interrupted" in err and "Traceback" not in err
    assert time.monotonic() - sent < 60  # a hang guard
    text = table.read_text()
    assert text.endswith("\n") and len(list(csv.DictReader(text.splitlines()))) >= 10
    assert not _left_alive(workers)  # the busy workers were ended


def test_a_signal_while_the_extensions_load_is_held_until_they_have(monkeypatch):
    """Issue 22, item 8: a Ctrl-C during CP-SAT's first import, raised inside the extension's
    initialisation, became ``ImportError: initialization failed`` (exit 1, nothing kept).
    Now the signal waits until the extensions have loaded, then stops the command as a
    Ctrl-C does; the block is never entered and the handlers are restored."""
    import signal
    import time

    from lpsched import interrupts

    loaded = []

    def slow_extension_import():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.2)  # the signal arrives in here
        loaded.append(True)

    monkeypatch.setattr(interrupts, "_load_extensions", slow_extension_import)
    before = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        with interrupts.signals_as_interrupt():
            pytest.fail("the block must not run after a held signal")
    assert loaded == [True]
    assert signal.getsignal(signal.SIGINT) is before


def test_sigterm_stops_run_with_exit_130(tmp_path):
    """An attacker's pass: ``run``, ``schedule`` and ``generate`` died silently (-15) on
    SIGTERM. The command group turns it into the Ctrl-C path. The signal is sent once the
    policy is running (a marker file the wrapper's policy writes), not after a fixed sleep."""
    import subprocess
    import sys
    import time

    marker = tmp_path / "running"
    script = (
        "import sys, time, pathlib, numpy, lpsched\n"
        "def slow(instance):\n"
        f"    pathlib.Path({str(marker)!r}).touch()\n"
        "    time.sleep(600)\n"
        "    return numpy.arange(instance.n)\n"
        "lpsched.register_policy('slow', slow)\n"
        "from lpsched.cli import main\n"
        "sys.argv = ['lpsched', 'run', sys.argv[1], '--policies', 'slow']\n"
        "main()\n"
    )
    inst = tmp_path / "i.json"
    inst.write_bytes(read_instance_bytes())
    proc = subprocess.Popen(
        [sys.executable, "-c", script, str(inst)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not marker.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "lpsched: interrupted" in err


def read_instance_bytes() -> bytes:
    from reference.shipped import MIX10

    return MIX10.read_bytes()
