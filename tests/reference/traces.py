"""Where the tests find the public traces (the five CSV files of ``lpsched.datasets.TRACES``),
and the mark of the tests that need them.

The first of: the trace cache, ``$LPSCHED_DATA_DIR`` or the user cache folder, when it holds
every trace with its registered sha256 (``lpsched traces fetch`` fills it); a folder
``shared/traces`` beside the clone (a development layout). Read once, when the tests are
collected, before the suite points ``LPSCHED_DATA_DIR`` at an empty folder of its own.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lpsched import datasets

#: Why a test that needs the traces is skipped, and how to get them.
SKIP_REASON = (
    "the public traces are not here: run `lpsched traces fetch` (about 3.5 MB, into "
    f"{datasets.DATA_DIR_ENV} or the user cache), or set {datasets.DATA_DIR_ENV} to a folder "
    "that holds them"
)


def _trace_dir() -> Path | None:
    cached = datasets.cached_trace_dir(list(datasets.TRACES))
    if cached is not None:
        return cached
    beside = Path(__file__).resolve().parents[3] / "shared" / "traces"
    return beside if beside.is_dir() else None


#: The folder of the traces, or None.
TRACE_DIR = _trace_dir()
#: Skip a test when the traces are not found.
needs_traces = pytest.mark.skipif(TRACE_DIR is None, reason=SKIP_REASON)
