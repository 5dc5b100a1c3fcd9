"""The provenance of a sweep row: what it was computed under.

Every row of a sweep CSV ends with the :data:`PROVENANCE` columns: the sweep parameters
(canonical JSON), the lpsched version, the git commit of the code (``-dirty-src-DIGEST`` with
uncommitted changes, ``src-DIGEST`` outside a checkout; ``+plug-ins-DIGEST`` when the sweep
uses plug-in code, :func:`plugin_digest`) and the solver versions. The sweep engine
(:mod:`.engine`) reuses a row only when all four match the current run.
:func:`trace_identity` puts the trace files a sweep reads into its parameters.

A plug-in's code is part of the rows' provenance through its source: the source file of the
module that defines it where it has one (so the helpers it calls count too), else the
function's own source (:func:`inspect.getsource`, as for a function defined in a notebook
cell), else its compiled code (``marshal`` of ``__code__``: code made by ``exec``). A builtin
or C function has neither: its qualified name and its module's ``__version__`` stand for it,
so a change to it under the same version is not seen.

Source: ours.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import marshal
import subprocess
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from ..policies.registry import POLICIES
from ..timing.registry import TIME_MODELS

__all__ = [
    "PROVENANCE",
    "provenance",
    "RowProvenance",
    "trace_identity",
    "plugin_digest",
    "source_digest",
]

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


@functools.cache
def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "-"


def provenance(params: Mapping[str, Any], uses: Iterable[Any] = ()) -> dict[str, str]:
    """The provenance columns of a row computed now under the sweep parameters ``params``.

    Parameters
    ----------
    params : mapping
        The sweep parameters (JSON-serialisable).
    uses : iterable, optional
        What else names the code the row runs (its key's values): every string in ``params``
        and ``uses`` that names a plug-in policy or time model puts a digest of its source in
        ``commit`` (:func:`plugin_digest`).

    Returns
    -------
    dict
        ``params`` (canonical JSON), ``lpsched`` (version), ``commit`` (git commit, ``-dirty``
        with uncommitted changes, '' outside a checkout; ``+plug-ins-DIGEST`` with plug-ins),
        ``solvers`` (``highspy``, ``ortools``, ``pyomo`` and ``numpy`` versions). Source: ours.
    """
    return _columns(params, _digest(_plugin_names([params, *uses])))


def _columns(params: Mapping[str, Any], plugins: str) -> dict[str, str]:
    return {
        "params": json.dumps(params, sort_keys=True, separators=(",", ":"), default=str),
        "lpsched": _version("lpsched"),
        "commit": _git_commit() + (f"+plug-ins-{plugins}" if plugins else ""),
        "solvers": " ".join(f"{p}={_version(p)}" for p in _SOLVER_PACKAGES),
    }


class RowProvenance:
    """The provenance of each row of one sweep run: :func:`provenance` of the sweep's
    parameters and the row's key, computed once per set of plug-ins named (so a row of a
    shipped policy keeps its provenance when a plug-in is loaded beside it).

    Parameters
    ----------
    params : mapping
        The sweep parameters. Source: ours.
    """

    def __init__(self, params: Mapping[str, Any]) -> None:
        self.params = params
        self._by_plugins: dict[tuple[str, ...], dict[str, str]] = {}

    def of(self, key: Iterable[Any]) -> dict[str, str]:
        """The provenance columns of the row whose key has the values ``key``."""
        names = _plugin_names([self.params, list(key)])
        if names not in self._by_plugins:
            self._by_plugins[names] = _columns(self.params, _digest(names))
        return self._by_plugins[names]


def _strings(value: Any) -> Iterator[str]:
    """Every string inside ``value`` (nested mappings and sequences, keys and values)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for k, v in value.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for v in value:
            yield from _strings(v)


def _ours(obj: Any) -> bool:
    """Whether ``obj`` is lpsched's own code (covered by the commit column)."""
    module = getattr(obj, "__module__", None) or ""
    return module == "lpsched" or module.startswith("lpsched.")


def _functions(obj: Any, seen: set[int]) -> Iterator[Callable[..., Any]]:
    """The code outside lpsched that calling ``obj`` runs, as far as it can be seen: ``obj``
    itself, the functions held in its closures (how the registries wrap a plug-in),
    ``functools.partial`` and bound methods unwrapped."""
    if id(obj) in seen or not callable(obj):
        return
    seen.add(id(obj))
    if isinstance(obj, functools.partial):
        yield from _functions(obj.func, seen)
        return
    fn = getattr(obj, "__func__", obj)
    if not _ours(fn):
        yield fn
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            yield from _functions(cell.cell_contents, seen)
        except ValueError:  # an empty cell
            continue


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:12]


def source_digest(fn: Callable[..., Any]) -> str:
    """A short SHA-256 of the code of ``fn`` (see the module docstring for what stands for a
    function without source). Source: ours."""
    code = getattr(fn, "__code__", None)
    module = inspect.getmodule(fn)
    if code is not None:  # a Python function: its module's file, else its own source
        own_file = module is not None and getattr(module, "__file__", None) == code.co_filename
        for target in (module, fn) if own_file else (fn,):
            try:
                return _sha(inspect.getsource(target).encode())  # type: ignore[arg-type]
            except (OSError, TypeError):
                continue
        return _sha(marshal.dumps(code))  # no source anywhere: the compiled code
    if not inspect.isroutine(fn):
        try:  # a callable object of a Python class
            return _sha(inspect.getsource(type(fn)).encode())
        except (OSError, TypeError):
            pass
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    version = getattr(sys.modules.get(getattr(fn, "__module__", None) or ""), "__version__", "")
    return _sha(f"{getattr(fn, '__module__', '?')}.{name} {version}".encode())


def _plugin_names(values: Iterable[Any]) -> tuple[str, ...]:
    """The names of plug-in policies and time models (registered in this process, not built
    in) that a string inside ``values`` gives: ``NAME``, ``NAME+backfill``, ``NAME:k=v``."""
    found = set()
    for text in set(_strings(list(values))):
        for name in {text, text.split("+", 1)[0], text.split(":", 1)[0]}:
            for reg in (POLICIES, TIME_MODELS):
                if name in reg and name not in reg.builtin:
                    found.add(name)
    return tuple(sorted(found))


def _digest(names: Iterable[str]) -> str:
    """A short SHA-256 of the plug-in code behind ``names``, '' when none is outside
    lpsched (the shipped time profiles: lpsched's own code, the commit's)."""
    digests: dict[str, str] = {}
    for name in names:
        entries = [
            POLICIES[name].run if name in POLICIES else None,
            TIME_MODELS[name].function if name in TIME_MODELS else None,
        ]
        seen: set[int] = set()
        for i, entry in enumerate(entries):
            for fn in _functions(entry, seen):
                where = f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', '?')}"
                digests[f"{i}:{name}:{where}"] = source_digest(fn)
    if not digests:
        return ""
    return _sha(json.dumps(digests, sort_keys=True).encode())


def plugin_digest(values: Iterable[Any]) -> str:
    """A short SHA-256 of the source of every plug-in policy and time model named in
    ``values`` (any string inside them: ``NAME``, ``NAME+backfill``, ``NAME:key=value``), or
    '' when they name none (lpsched's own code is the commit's). Only names registered in
    this process count: the sweeps look their names up before they start. Source: ours."""
    return _digest(_plugin_names(values))


def trace_identity(folder: Path | None, names: Iterable[str]) -> dict[str, int] | None:
    """What a sweep's trace rows depend on: each trace file's size in bytes (None without a
    trace folder). Part of the sweep parameters, so rows drawn from other trace files are not
    reused. Source: ours (a size is cheap; the shipped traces differ in size)."""
    if folder is None:
        return None
    return {name: (Path(folder) / name).stat().st_size for name in names}
