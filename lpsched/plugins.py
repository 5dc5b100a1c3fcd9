"""Plug-in modules: what the registries of policies (:mod:`lpsched.policies.registry`) and of
time models (:mod:`lpsched.timing.registry`) share.

A plug-in module registers its entries when it is imported (``lpsched.register_policy(...)``,
``lpsched.register_time_model(...)`` at module level). The command line's ``--import MODULE``
imports it through :func:`import_plugins`, which also adds it to the environment variable
``LPSCHED_PLUGINS``, so that the worker processes a sweep starts afterwards import it too: each
registry imports the modules of that variable (:func:`env_modules`, :func:`import_module`) on
the first look-up of a name it does not know. The sweep engine also passes the modules imported
here (:func:`plugin_modules`) to its worker processes, which import them before their first
task. Installed packages reach a registry through its own entry-point group instead
(``lpsched.policies``, ``lpsched.time_models``); :func:`load_plugins` is the one loader of both.

Source: ours (the plug-in route of ``docs/architecture.md``).
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = [
    "PLUGINS_ENV",
    "PluginError",
    "import_module",
    "env_modules",
    "import_plugins",
    "plugin_modules",
    "load_plugins",
]

#: Environment variable: comma-separated modules that register plug-ins on import.
PLUGINS_ENV = "LPSCHED_PLUGINS"
#: Modules (``"module:NAME"``) and entry points (each registry's own keys) tried in this
#: process; shared by the registries so that a module is imported once.
_loaded: set[str] = set()
#: Modules imported in this process by :func:`import_module`, in order, each with the folder
#: searched first for it (the current folder of its import).
_imported: dict[str, str] = {}


class PluginError(ValueError):
    """A plug-in failed to load; the message names the entry point and its distribution, or
    the module, and the error. Source: ours."""


def import_module(module: str, folder: str | None = None) -> None:
    """Import ``module`` once per process; the current directory (or ``folder``) is searched
    first, as by ``python -m`` (so ``--import`` and ``LPSCHED_PLUGINS`` find the same modules),
    but only while this import runs: afterwards a stray ``highspy.py`` there cannot shadow a
    library.

    Raises
    ------
    PluginError
        A file path instead of a module name, a module that fails to import (its error in the
        message), or one that calls ``sys.exit()`` while importing.

    Notes
    -----
    Source: ours.
    """
    if "module:" + module in _loaded:
        return
    if module.endswith(".py") or "/" in module or os.sep in module:
        raise PluginError(
            f"plug-in {module!r}: give a module name (such as {Path(module).stem!r}, run from "
            "the folder that holds it, or a dotted name on PYTHONPATH), not a file path"
        )
    _loaded.add("module:" + module)
    cwd = os.getcwd() if folder is None else folder
    added = cwd not in sys.path and (folder is not None or "" not in sys.path)
    if added:
        sys.path.insert(0, cwd)
    try:
        importlib.import_module(module)
    except SystemExit as exc:
        raise PluginError(
            f"plug-in module {module!r} called sys.exit({exc.code!r}) while importing"
        ) from None
    except Exception as exc:
        raise PluginError(
            f"plug-in module {module!r} failed to import: {type(exc).__name__}: {exc}"
        ) from exc
    finally:
        if added and cwd in sys.path:
            sys.path.remove(cwd)
    _imported[module] = cwd


def env_modules() -> list[str]:
    """The modules named in ``LPSCHED_PLUGINS`` (comma-separated, blanks ignored). Source:
    ours."""
    return [m.strip() for m in os.environ.get(PLUGINS_ENV, "").split(",") if m.strip()]


def import_plugins(modules: Iterable[str] | Mapping[str, str]) -> None:
    """Import modules that register policies or time models on import (each once per
    process), and add them to ``LPSCHED_PLUGINS``; the sweeps pass them to their worker
    processes (:func:`plugin_modules`).

    Parameters
    ----------
    modules : iterable of str, or mapping of str to str
        Dotted module names, importable from ``sys.path`` or the current folder; or a
        mapping module -> the folder to search first instead of the current one (what
        :func:`plugin_modules` returns: a worker imports the parent's modules with it).

    Raises
    ------
    PluginError
        A module that cannot be imported (its error in the message).

    Notes
    -----
    Source: ours (the command line's ``--import MODULE``). A Dask worker on another machine
    needs the module importable there (installed, or in the same folder).
    """
    names = env_modules()
    folders = modules if isinstance(modules, Mapping) else dict.fromkeys(modules)
    for module, folder in folders.items():
        import_module(module, folder)
        if module not in names:
            names.append(module)
    os.environ[PLUGINS_ENV] = ",".join(names)


def plugin_modules() -> dict[str, str]:
    """The plug-in modules imported in this process (by :func:`import_plugins`, the command
    line's ``--import``, or from ``LPSCHED_PLUGINS``), in import order, each with the folder
    searched first for it (the current folder of its import).

    The sweep engine passes them to its worker processes, which import them before their
    first task (:func:`import_plugins`): a worker does not depend on inheriting
    ``LPSCHED_PLUGINS`` (a ``forkserver`` started before the import keeps the environment of
    its start) nor on the current folder. Source: ours.
    """
    return dict(_imported)


def load_plugins(
    group: str,
    kind: str,
    register: Callable[[str, Callable[..., Any], str, str], Any],
    name: str | None = None,
) -> None:
    """Import the modules of ``LPSCHED_PLUGINS``, then register the entry points of ``group``
    (those named ``name``, or all); each module and entry point once per process.

    Parameters
    ----------
    group : str
        Entry-point group (``lpsched.policies``, ``lpsched.time_models``).
    kind : str
        What an entry point is, for the messages (``"policy"``, ``"time model"``).
    register : callable
        ``register(name, function, description, source)``: the registry's own registration.
        ``description`` is the first line of the function's docstring (else the entry point's
        value) and ``[plug-in DISTRIBUTION VERSION]``; ``source`` names the entry point.
    name : str, optional
        Load only the entry points of this name (a name looked up and not registered).

    Raises
    ------
    PluginError
        Naming each failing module or entry point (``NAME = module:function``) and its
        distribution, with the error: an import error (or ``sys.exit`` on import), an object
        that is not callable, a name already registered. Every other plug-in is still
        registered; with several failures the message lists them all, one per line.

    Notes
    -----
    Source: ours (the plug-in route of ``docs/architecture.md``).
    """
    errors: list[str] = []
    for module in env_modules():
        try:
            import_module(module)
        except PluginError as exc:
            errors.append(str(exc))
    for ep in metadata.entry_points(group=group):
        key = f"{group}:{ep.name}"
        if (name is not None and ep.name != name) or key in _loaded:
            continue
        _loaded.add(key)
        dist = f"{ep.dist.name} {ep.dist.version}" if ep.dist is not None else "unknown"
        try:
            function = ep.load()
            if not callable(function):
                raise TypeError(f"{type(function).__name__} object is not callable")
            doc = (inspect.getdoc(function) or "").splitlines()
            description = f"{doc[0] if doc else ep.value} [plug-in {dist}]"
            register(ep.name, function, description, f"entry point {ep.name} = {ep.value} ({dist})")
        except (Exception, SystemExit) as exc:  # SystemExit: a sys.exit() on import
            errors.append(
                f"plug-in {kind} entry point '{ep.name} = {ep.value}' (group {group}, "
                f"distribution {dist}): {type(exc).__name__}: {exc}"
            )
    if errors:
        raise PluginError("\n".join(errors))
