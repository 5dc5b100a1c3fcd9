"""``lpsched reproduce`` refuses what it cannot do before it starts: a size whose exact model
is surely too large (without drawing the instance), a worker count outside its range; and an
error raised without a message still says what went wrong."""

from __future__ import annotations

import os
import time

import pytest
from click.testing import CliRunner

from lpsched.cli import main
from lpsched.generators import small
from lpsched.research.reproductions import optimality_gaps

#: The documented cap (lpsched.sweeps.workers.MAX_WORKERS): four per core, at least 8.
MAX_WORKERS = max(8, 4 * (os.cpu_count() or 1))


def _reproduce(*args):
    return CliRunner().invoke(main, ["reproduce", *args])


@pytest.fixture
def nothing_built(monkeypatch):
    """Fail a test that draws an instance of more than 10,000 requests or solves anything."""
    for name, make in list(small.EXACT_WORKLOADS.items()):

        def guarded(n, *args, _make=make, **kwargs):
            assert n <= 10_000, f"drew an instance of n = {n}"
            return _make(n, *args, **kwargs)

        monkeypatch.setitem(small.EXACT_WORKLOADS, name, guarded)

    def no_solve(*args, **kwargs):
        raise AssertionError("solved a model")

    monkeypatch.setattr(optimality_gaps, "solve_exact", no_solve)
    monkeypatch.setattr(optimality_gaps, "lp_bound", no_solve)


def test_a_size_above_the_model_limit_is_refused_before_drawing_it(nothing_built, tmp_path):
    """The command line refuses n above what a generator draws (10,000,000); in Python the
    study itself refuses n = 10**8 on n alone, before drawing it."""
    from lpsched.solvers import LPTooLargeError

    with pytest.raises(LPTooLargeError, match=r"n = 100,000,000 \(paper-scaled seed 0\) is"):
        optimality_gaps.run(
            tmp_path / "out", workloads=["paper-scaled"], sizes=[30, 10**8], seeds=[0], workers=1
        )
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("size", "says"),
    [("1000", "n = 1,000 (paper-scaled seed 0) is refused before any model is built")],
)
def test_a_size_too_large_is_refused_before_anything_is_built(nothing_built, tmp_path, size, says):
    t0 = time.perf_counter()
    res = _reproduce(
        "optimality-gaps", "--workload", "paper-scaled", "--sizes", f"30,{size}",
        "--seeds", "0", "--workers", "1", "--out", str(tmp_path / "out"),
    )  # fmt: skip
    assert time.perf_counter() - t0 < 10
    assert res.exit_code == 1, res.output
    assert says in res.stderr and "20,000,000" in res.stderr
    assert "--max-nonzeros" not in res.stderr  # reproduce has no such option
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "name", ["optimality-gaps", "certified-gaps", "jaillet-synthetic", "ratios", "algorithms"]
)
def test_sizes_beyond_what_a_generator_draws_are_refused_by_every_reproduction(tmp_path, name):
    """certified-gaps and the others had no size check: ``--sizes 100000000`` started drawing."""
    res = _reproduce(name, "--sizes", "30,100000000", "--out", str(tmp_path / "out"))
    assert res.exit_code == 2, res.output
    assert "--sizes" in res.output and "100,000,000 is more than 10,000,000" in res.output
    assert not (tmp_path / "out").exists()


def test_an_error_without_a_message_still_says_what(monkeypatch, tmp_path):
    def out_of_memory(*args, **kwargs):
        raise MemoryError  # as numpy raises it when an allocation fails

    monkeypatch.setattr(optimality_gaps, "check_choices", out_of_memory)
    res = _reproduce("optimality-gaps", "--sizes", "6", "--out", str(tmp_path / "out"))
    assert res.exit_code == 1
    line = res.stderr.strip().splitlines()[-1]
    assert line.startswith("lpsched: error: out of memory"), line


@pytest.mark.parametrize("workers", [str(MAX_WORKERS + 1), "100000"])
def test_workers_outside_the_range_are_refused(tmp_path, workers):
    res = _reproduce(
        "optimality-gaps", "--workload", "scaled-mix", "--sizes", "6", "--seeds", "0",
        "--workers", workers, "--out", str(tmp_path / "out"),
    )  # fmt: skip
    assert res.exit_code == 2, res.output
    assert f"workers must be an integer in 1..{MAX_WORKERS}" in res.stderr
    assert not (tmp_path / "out").exists()
