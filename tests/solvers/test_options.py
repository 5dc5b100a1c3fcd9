"""SolveOptions: every option checked once when made (and again on replace), with the option's
name in the message; the Observer passes a back end's numbers on as bounds."""

from __future__ import annotations

import math

import pytest

from lpsched.solvers.options import SolveOptions
from lpsched.solvers.progress import Observer, Progress


@pytest.mark.parametrize(
    "field, bad",
    [
        ("time_limit", 0),
        ("time_limit", -1.0),
        ("time_limit", math.inf),
        ("time_limit", math.nan),
        ("time_limit", "60"),
        ("time_limit", True),
        ("time_limit", 10**400),
        ("threads", 3_000_000_000),
        ("threads", 0),
        ("threads", 1.5),
        ("threads", True),
        ("mip_gap", -0.1),
        ("mip_gap", 1.5),
        ("mip_gap", math.nan),
        ("mip_gap", 10**400),
        ("seed", -1),
        ("seed", 1.0),
        ("seed", None),
        ("max_nonzeros", 0),
        ("max_nonzeros", 1e6),
    ],
)
def test_a_bad_option_is_refused_by_name(field, bad):
    with pytest.raises(ValueError, match=field):
        SolveOptions(**{field: bad})
    with pytest.raises(ValueError, match=field):
        SolveOptions().replace(**{field: bad})


def test_good_options_are_normalised():
    opts = SolveOptions(time_limit=5, threads=2, mip_gap=0, seed=3, max_nonzeros=10)
    assert (opts.time_limit, opts.threads, opts.mip_gap, opts.seed, opts.max_nonzeros) == (
        5.0,
        2,
        0.0,
        3,
        10,
    )
    assert isinstance(opts.time_limit, float) and SolveOptions(time_limit=None).time_limit is None
    assert opts.replace(time_limit=1).time_limit == 1.0 and opts.time_limit == 5.0


def test_observer_passes_numbers_on_as_bounds_and_progress_keeps_the_best():
    seen: list[float] = []
    obs = Observer(on_bound=seen.append)
    obs.update(incumbent=80.0, bound=70.0)
    obs.update(incumbent=79.0)
    obs.update(bound=math.nan)
    assert seen == [70.0] and not obs.log_enabled
    shown = Progress("quiet")
    for b in (3.0, 5.0, 4.0):
        shown.on_bound(b)
    shown.update(incumbent=9.0)
    shown.update(incumbent=10.0)
    assert (shown.incumbent, shown.bound) == (9.0, 5.0)


def test_the_size_error_says_when_raising_the_limit_cannot_help(monkeypatch):
    """Issue 22, item 13: ``lpsched bound`` suggested raising --max-nonzeros for a model of
    192 billion non-zeros. Above this machine's memory (at BYTES_PER_NONZERO bytes each) the
    message says raising cannot help; below, how to raise it."""
    from lpsched.instance import Instance
    from lpsched.solvers import options
    from lpsched.solvers.result import LPTooLargeError

    inst = Instance.from_arrays([5] * 40, [30] * 40, 60, name="big")
    monkeypatch.setattr(options, "_physical_memory", lambda: 2**30)  # a 1 GiB machine
    cols, nnz = options.matrix_size(inst, 200, None)
    assert nnz * options.BYTES_PER_NONZERO < 2**30  # fits: the usual advice
    with pytest.raises(LPTooLargeError, match=r"raise it with --max-nonzeros"):
        options.check_size(inst, 200, None, max_nonzeros=nnz - 1)
    monkeypatch.setattr(options, "_physical_memory", lambda: nnz * options.BYTES_PER_NONZERO - 1)
    with pytest.raises(LPTooLargeError, match=r"raising the limit cannot help: .* GiB"):
        options.check_size(inst, 200, None, max_nonzeros=nnz - 1)
    monkeypatch.setattr(options, "_physical_memory", lambda: None)  # the system does not say
    with pytest.raises(LPTooLargeError, match=r"raise it with --max-nonzeros"):
        options.check_size(inst, 200, None, max_nonzeros=nnz - 1)
