"""The provenance of a sweep row: what it was computed under.

Every row of a sweep CSV ends with the :data:`PROVENANCE` columns: the sweep parameters
(canonical JSON), the lpsched version, the git commit of the code (``-dirty-src-DIGEST`` with
uncommitted changes, ``src-DIGEST`` outside a checkout) and the solver versions. The sweep
engine (:mod:`.engine`) reuses a row only when all four match the current run.
:func:`trace_identity` puts the trace files a sweep reads into its parameters.

Source: ours.
"""

from __future__ import annotations

import functools
import hashlib
import json
import subprocess
from collections.abc import Iterable, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = ["PROVENANCE", "provenance", "trace_identity"]

#: Columns every sweep CSV ends with: what the row was computed under.
PROVENANCE = ("params", "lpsched", "commit", "solvers")
_SOLVER_PACKAGES = ("highspy", "ortools", "pyomo", "numpy")


def _sources_digest() -> str:
    """A short SHA-256 of every ``.py`` file of the installed package (paths and bytes)."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(str(path.relative_to(root)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:12]


@functools.cache
def _git_commit() -> str:
    """What identifies the code that computes a row: the git commit of the checkout this
    package runs from; with uncommitted changes (or outside a checkout) also a digest of the
    package's sources, so two different working trees never share a provenance. Changes
    anywhere in the package count (the whole ``lpsched/`` folder, not only this module's)."""
    here = Path(__file__).resolve().parents[1]
    try:
        head = subprocess.run(
            ["git", "-C", str(here), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(here), "status", "--porcelain", "--", "."],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return f"src-{_sources_digest()}"
    return head + (f"-dirty-src-{_sources_digest()}" if dirty else "")


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "-"


def provenance(params: Mapping[str, Any]) -> dict[str, str]:
    """The provenance columns of a row computed now under the sweep parameters ``params``.

    Returns
    -------
    dict
        ``params`` (canonical JSON), ``lpsched`` (version), ``commit`` (git commit, ``-dirty``
        with uncommitted changes, '' outside a checkout), ``solvers`` (``highspy``, ``ortools``,
        ``pyomo`` and ``numpy`` versions). Source: ours.
    """
    return {
        "params": json.dumps(params, sort_keys=True, separators=(",", ":"), default=str),
        "lpsched": _version("lpsched"),
        "commit": _git_commit(),
        "solvers": " ".join(f"{p}={_version(p)}" for p in _SOLVER_PACKAGES),
    }


def trace_identity(folder: Path | None, names: Iterable[str]) -> dict[str, int] | None:
    """What a sweep's trace rows depend on: each trace file's size in bytes (None without a
    trace folder). Part of the sweep parameters, so rows drawn from other trace files are not
    reused. Source: ours (a size is cheap; the shipped traces differ in size)."""
    if folder is None:
        return None
    return {name: (Path(folder) / name).stat().st_size for name in names}
