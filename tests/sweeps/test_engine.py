"""The sweep engine: rows written at once, resume, provenance, bad rows, lock, workers, Dask."""

from __future__ import annotations

import csv
import os
from functools import partial
from pathlib import Path

import pytest
from filelock import FileLock

from lpsched.generators.small import EXACT_WORKLOADS
from lpsched.policies.registry import import_plugins, run_policy
from lpsched.sweeps.engine import (
    Sweep,
    SweepLockedError,
    SweepParameterError,
    Task,
    run_sweep,
)
from lpsched.sweeps.provenance import PROVENANCE, provenance

FIELDS = ["x", "p", "y"]


def square_rows(params, missing, *, offset=0, kill_marker=None):
    """Module level, so that worker processes can import it. With ``kill_marker``, the task
    x = 3 kills its worker process the first time it runs (the marker file says it did)."""
    if kill_marker is not None and params["x"] == 3 and not Path(kill_marker).exists():
        Path(kill_marker).write_text("killed")
        os._exit(1)
    for key in missing:
        yield {**key, "y": params["x"] ** 2 + offset + (key["p"] == "b")}


def _check(v):
    return None if v["y"] >= 0 else f"y = {v['y']} is negative"


def _sweep(tasks, compute=square_rows, **params):
    return Sweep(
        "r", FIELDS, ["x", "p"], tasks, compute, params=params, types={"y": int}, check=_check
    )


def _tasks(xs):
    return [Task({"x": i}, ({"p": "a"}, {"p": "b"})) for i in xs]


def _file_rows(path):
    with path.open() as fh:
        return list(csv.DictReader(fh))


def _values(rows):
    return sorted((r["x"], r["p"], r["y"]) for r in rows)


def test_sweep_writes_each_row_and_resumes(tmp_path):
    calls = []

    def compute(params, missing):
        for key in missing:
            calls.append((params["x"], key["p"]))
            if (params["x"], key["p"]) == (3, "b") and len(calls) == 8:
                raise KeyboardInterrupt  # the first run is interrupted at x = 3, p = b
            yield {**key, "y": params["x"] ** 2 + (key["p"] == "b")}

    with pytest.raises(KeyboardInterrupt):
        run_sweep(_sweep(_tasks(range(6)), compute), tmp_path, progress=False)
    done = [(r["x"], r["p"]) for r in _file_rows(tmp_path / "r.csv")]
    assert done == [(str(i), p) for i in range(3) for p in "ab"] + [("3", "a")]
    messages = []
    rows = run_sweep(
        _sweep(_tasks(range(6)), compute), tmp_path, progress=False, report=messages.append
    )
    # finished rows are not computed again: the interrupted task computes only its missing row
    assert calls[8:] == [(3, "b"), (4, "a"), (4, "b"), (5, "a"), (5, "b")]
    assert [int(r["y"]) for r in rows] == [y for i in range(6) for y in (i * i, i * i + 1)]
    assert any("reused 7 of 12" in m for m in messages)
    assert list(rows[0])[-len(PROVENANCE) :] == list(PROVENANCE)


def test_provenance_names_parameters_version_commit_and_solvers():
    prov = provenance({"n": 10, "solver": "swap"})
    assert prov["params"] == '{"n":10,"solver":"swap"}'
    assert prov["lpsched"] and "highspy=" in prov["solvers"] and "ortools=" in prov["solvers"]


def test_rows_of_other_parameters_are_ignored_or_refused(tmp_path):
    run_sweep(_sweep(_tasks(range(2)), n=10), tmp_path, progress=False)
    messages = []
    rows = run_sweep(
        _sweep(_tasks(range(2)), n=20), tmp_path, progress=False, report=messages.append
    )
    assert len(rows) == 4 and all('"n":20' in r["params"] for r in rows)
    assert any(
        "4 row(s) were computed under other parameters" in m
        and 'line(s) 2, 3, 4, 5: params {"n":10} (now {"n":20})' in m
        for m in messages
    )
    assert len(_file_rows(tmp_path / "r.csv")) == 8  # the old rows stay in the file
    with pytest.raises(SweepParameterError, match="--strict refuses them"):
        run_sweep(_sweep(_tasks(range(2)), n=30), tmp_path, progress=False, strict=True)


def test_a_run_uses_only_the_rows_of_its_own_tasks(tmp_path):
    """The stale-row case of the experiments issue: seeds 0, 1 then seed 0 alone."""
    run_sweep(_sweep(_tasks(range(4))), tmp_path, progress=False)
    rows = run_sweep(_sweep(_tasks([1])), tmp_path, progress=False)
    assert _values(rows) == [("1", "a", "1"), ("1", "b", "2")]


def test_another_version_is_recomputed(tmp_path, monkeypatch):
    run_sweep(_sweep(_tasks([0])), tmp_path, progress=False)
    from lpsched.sweeps import provenance as prov

    monkeypatch.setattr(prov, "_git_commit", lambda: "another-commit")
    messages = []
    rows = run_sweep(_sweep(_tasks([0])), tmp_path, progress=False, report=messages.append)
    assert rows[0]["commit"] == "another-commit"
    assert any("line(s) 2, 3: commit" in m and "(now another-commit)" in m for m in messages)


def test_corrupt_rows_are_reported_moved_and_recomputed(tmp_path):
    run_sweep(_sweep(_tasks(range(3))), tmp_path, progress=False)
    path = tmp_path / "r.csv"
    lines = path.read_text().splitlines(keepends=True)
    cells = lines[1].split(",")
    lines[1] = ",".join([cells[0], cells[1], "abc", *cells[3:]])  # x=0 a: y not a number
    cells = lines[2].split(",")
    lines[2] = ",".join([cells[0], cells[1], "-5", *cells[3:]])  # x=0 b: impossible value
    lines[4] = lines[4][:5] + "\n"  # x=1 b: truncated
    lines[6] = lines[6].rstrip("\n")  # x=2 b: the last line lost its newline
    path.write_text("".join(lines))
    messages = []
    rows = run_sweep(_sweep(_tasks(range(3))), tmp_path, progress=False, report=messages.append)
    assert _values(rows) == _values(
        [{"x": str(i), "p": p, "y": str(i * i + (p == "b"))} for i in range(3) for p in "ab"]
    )
    text = "\n".join(messages)
    assert "line 2: field 'y' is not a valid int: 'abc'" in text
    assert "line 3: y = -5 is negative" in text
    assert "line 5: 3 fields, expected 7 (truncated or glued)" in text
    assert "line 7: incomplete line" in text
    rejected = _file_rows(tmp_path / "r.rejected.csv")
    assert sorted(int(r["line"]) for r in rejected) == [2, 3, 5, 7]
    assert len(_file_rows(path)) == 6  # every key once, every line complete
    assert path.read_text().endswith("\n")


def test_a_glued_line_loses_no_finished_row(tmp_path):
    """A CSV whose last line lacks its newline gets the next row appended on a new line."""
    run_sweep(_sweep(_tasks([0])), tmp_path, progress=False)
    path = tmp_path / "r.csv"
    path.write_text(path.read_text().rstrip("\n"))  # the newline of the last row is lost
    run_sweep(_sweep(_tasks([0, 1])), tmp_path, progress=False, report=lambda m: None)
    assert _values(_file_rows(path)) == [
        ("0", "a", "0"),
        ("0", "b", "1"),
        ("1", "a", "1"),
        ("1", "b", "2"),
    ]


def test_fresh_keeps_a_backup(tmp_path):
    run_sweep(_sweep(_tasks([0])), tmp_path, progress=False)
    run_sweep(_sweep(_tasks([1])), tmp_path, progress=False, fresh=True, report=lambda m: None)
    backups = list(tmp_path.glob("r.csv.bak-*"))
    assert len(backups) == 1 and len(_file_rows(backups[0])) == 2
    assert _values(_file_rows(tmp_path / "r.csv")) == [("1", "a", "1"), ("1", "b", "2")]


def test_a_second_writer_is_refused(tmp_path):
    from lpsched.sweeps.engine import lock_path

    (tmp_path / "out").mkdir()
    os.symlink(tmp_path / "out", tmp_path / "alias")  # the same folder by another name
    lock = FileLock(str(lock_path(tmp_path / "out")))
    with lock, pytest.raises(SweepLockedError, match="another lpsched run is writing here"):
        run_sweep(_sweep(_tasks([0])), tmp_path / "alias", progress=False)
    assert run_sweep(_sweep(_tasks([0])), tmp_path / "out", progress=False)  # free again
    # issue 22, item 13: the results folder holds the results only (the lock was left there)
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["r.csv"]


def test_other_columns_are_refused(tmp_path):
    run_sweep(_sweep(_tasks([0])), tmp_path, progress=False)
    other = Sweep("r", ["x", "p", "z"], ["x", "p"], _tasks([0]), square_rows)
    with pytest.raises(ValueError, match="header .* differs .* use --fresh"):
        run_sweep(other, tmp_path, progress=False)


def test_a_computed_row_must_have_every_column(tmp_path):
    def compute(params, missing):
        yield {"x": 0, "p": "a"}

    with pytest.raises(ValueError, match="lacks column"):
        run_sweep(_sweep(_tasks([0]), compute), tmp_path, progress=False)


def test_local_processes_give_the_serial_rows(tmp_path):
    serial = run_sweep(_sweep(_tasks(range(8))), tmp_path / "s", progress=False)
    parallel = run_sweep(_sweep(_tasks(range(8))), tmp_path / "p", progress=False, workers=2)
    assert parallel == serial  # same values, provenance and task order


def policy_rows(params, missing):
    """Module level, for the worker processes: each missing policy on a small instance."""
    inst = EXACT_WORKLOADS["uniform-small"](6, params["x"])
    for key in missing:
        yield {**key, "y": run_policy(inst, key["p"]).tel}


def test_workers_import_the_plugin_modules_of_the_parent(own_policy, tmp_path, monkeypatch):
    """Issue 22, item 12: the workers found a plug-in only through ``LPSCHED_PLUGINS`` in
    their environment, which a forkserver started before the import does not have (it keeps
    the environment of its start), and in their current folder: the modules are now passed
    with the tasks, with the folder they were imported from."""
    run_sweep(_sweep(_tasks(range(2))), tmp_path / "first", progress=False, workers=2)
    import_plugins([own_policy.module])  # after the forkserver started
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")  # the workers start here
    tasks = [Task({"x": i}, ({"p": own_policy.name}, {"p": "fcfs"})) for i in range(2)]
    rows = run_sweep(_sweep(tasks, policy_rows), tmp_path / "second", progress=False, workers=2)
    got = {(r["x"], r["p"]): int(r["y"]) for r in rows}
    for x in range(2):
        inst = EXACT_WORKLOADS["uniform-small"](6, x)
        assert got[(str(x), own_policy.name)] == own_policy.tel(inst)
    calls = own_policy.calls()
    assert len(calls) == 2 and os.getpid() not in {pid for pid, _, _ in calls}


@pytest.mark.slow
def test_dask_local_cluster_survives_a_killed_worker(tmp_path):
    pytest.importorskip("distributed")
    from distributed import LocalCluster

    compute = partial(square_rows, kill_marker=str(tmp_path / "killed"))
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        rows = run_sweep(
            _sweep(_tasks(range(8)), compute),
            tmp_path / "d",
            progress=False,
            scheduler=cluster.scheduler_address,
        )
    assert (tmp_path / "killed").exists()  # a worker died in the middle of the sweep
    serial = run_sweep(_sweep(_tasks(range(8))), tmp_path / "s", progress=False)
    assert _values(rows) == _values(serial)
    assert len(_file_rows(tmp_path / "d" / "r.csv")) == 16  # nothing lost, nothing twice


def test_fresh_twice_in_one_second_keeps_both_backups(tmp_path):
    for _ in range(3):
        run_sweep(_sweep(_tasks([0])), tmp_path, progress=False, fresh=True, report=lambda m: None)
    assert len(list(tmp_path.glob("r.csv.bak-*"))) == 2


def test_left_out_rows_are_named_by_their_key_values(tmp_path):
    run_sweep(_sweep(_tasks([0, 1, 2])), tmp_path, progress=False)
    messages = []
    run_sweep(_sweep(_tasks([1])), tmp_path, progress=False, report=messages.append)
    assert any(
        "4 row(s) in the file belong to tasks outside this run (x 0, 2)" in m for m in messages
    )
    # and how to get the study's own table with every row, the new values included
    run_sweep(_sweep(_tasks([1, 10])), tmp_path, progress=False, report=messages.append)
    assert any(
        "a run over x 0, 1, 2, 10 writes the study's table with every row" in m for m in messages
    )


def test_non_finite_values_and_failing_checks_reject_the_row(tmp_path):
    from lpsched.sweeps.engine import finite_float

    def check(v):
        if v["y"] == 7:
            raise KeyError("boom")  # a check that fails on a broken row rejects it
        return None

    sweep = Sweep(
        "r", FIELDS, ["x", "p"], _tasks([0, 1]), square_rows, types={"y": finite_float}, check=check
    )
    run_sweep(sweep, tmp_path, progress=False)
    path = tmp_path / "r.csv"
    lines = path.read_text().splitlines(keepends=True)
    lines[1] = lines[1].replace("0,a,0,", "0,a,nan,", 1)
    lines[2] = lines[2].replace("0,b,1,", "0,b,7,", 1)
    path.write_text("".join(lines))
    messages = []
    rows = run_sweep(sweep, tmp_path, progress=False, report=messages.append)
    assert [r["y"] for r in rows] == ["0", "1", "1", "2"]
    text = "\n".join(messages)
    assert "line 2: field 'y' is not a valid finite_float: 'nan'" in text
    assert "line 3: the row's values cannot be checked" in text


def test_conflicting_duplicates_are_named(tmp_path):
    run_sweep(_sweep(_tasks([0])), tmp_path, progress=False)
    path = tmp_path / "r.csv"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines + [lines[1], lines[1].replace("0,a,0,", "0,a,5,", 1)]))
    messages = []
    rows = run_sweep(_sweep(_tasks([0])), tmp_path, progress=False, report=messages.append)
    assert rows[0]["y"] == "0"
    assert any("line(s) 4, 5 repeat the key" in m and "line(s) 5 disagree" in m for m in messages)


def test_uncommitted_code_is_part_of_the_provenance():
    from lpsched.sweeps import provenance as prov

    commit = prov._git_commit()
    assert commit  # a commit, a commit with a digest of the changed sources, or a digest
    if "dirty" in commit or commit.startswith("src-"):
        assert commit.endswith(prov._sources_digest())


def test_run_folder_writes_outside_the_current_folder(tmp_path, monkeypatch):
    """Issue 22, item 13: notebooks wrote their results inside the checkout (``results/`` of
    the current folder). The default is ``$LPSCHED_RESULTS``, else the user's cache."""
    from lpsched.sweeps.engine import RESULTS_ENV, results_root, run_folder

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(RESULTS_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert results_root() == tmp_path / "cache" / "lpsched" / "results"
    folder = run_folder("nb", {"a": 1})
    assert folder.parent == tmp_path / "cache" / "lpsched" / "results"
    assert (folder / "params.json").read_text() == '{\n "a": 1\n}\n'
    monkeypatch.setenv(RESULTS_ENV, str(tmp_path / "mine"))
    assert run_folder("nb", {"a": 1}).parent == tmp_path / "mine"
    assert run_folder("nb", {"a": 1}, root=tmp_path / "given").parent == tmp_path / "given"
    assert not (tmp_path / "results").exists()


def test_a_change_anywhere_in_the_package_marks_the_provenance_dirty(tmp_path):
    """The provenance looked for uncommitted changes in ``lpsched/sweeps/`` only (where the
    engine lives since the house move), so rows computed with an edited policy carried the
    clean commit. A copy of the package in a fresh repository, one policy file edited."""
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    import lpsched

    src = Path(lpsched.__file__).resolve().parent
    shutil.copytree(src, tmp_path / "lpsched", ignore=shutil.ignore_patterns("__pycache__"))
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "x"], check=True)
    probe = "from lpsched.sweeps import provenance; print(provenance._git_commit())"

    def commit() -> str:
        out = subprocess.run(
            [sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True
        )
        assert out.returncode == 0, out.stderr
        return out.stdout.strip()

    assert "dirty" not in commit()
    with (tmp_path / "lpsched" / "policies" / "baselines.py").open("a") as fh:
        fh.write("\n# an edit\n")
    assert "-dirty-src-" in commit()


def test_a_recorded_interrupt_stops_the_sweep_at_the_next_task(tmp_path):
    """A Ctrl-C whose KeyboardInterrupt compiled code dropped (numba's object-cache callback
    printed and ignored it) is still recorded (lpsched.interrupts): the sweep stops before its
    next task, keeping the rows already written."""
    from lpsched import interrupts

    def drops_the_interrupt(params, missing):
        yield from square_rows(params, missing)
        if params["x"] == 0:
            interrupts.request("SIGINT")  # as the handler does, its exception then lost

    try:
        with pytest.raises(KeyboardInterrupt, match="SIGINT"):
            run_sweep(_sweep(_tasks([0, 1, 2]), drops_the_interrupt), tmp_path, progress=False)
    finally:
        interrupts.clear()
    assert [row["x"] for row in _file_rows(tmp_path / "r.csv")] == ["0", "0"]
    interrupts.check()  # cleared: nothing raised
