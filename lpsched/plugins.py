"""Plug-in modules: what the registries of policies (:mod:`lpsched.policies.registry`) and of
time models (:mod:`lpsched.timing.registry`) share.

A plug-in module registers its entries when it is imported (``lpsched.register_policy(...)``,
``lpsched.register_time_model(...)`` at module level). The command line's ``--import MODULE``
imports it through :func:`import_plugins`, which also adds it to the environment variable
``LPSCHED_PLUGINS``, so that the worker processes a sweep starts afterwards import it too: each
registry imports the modules of that variable (:func:`env_modules`, :func:`import_module`) on
the first look-up of a name it does not know. Installed packages reach a registry through its
own entry-point group instead (``lpsched.policies``, ``lpsched.time_models``).

Source: ours (the plug-in route of ``docs/architecture.md``).
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterable
from pathlib import Path

__all__ = ["PLUGINS_ENV", "PluginError", "import_module", "env_modules", "import_plugins"]

#: Environment variable: comma-separated modules that register plug-ins on import.
PLUGINS_ENV = "LPSCHED_PLUGINS"
#: Modules (``"module:NAME"``) and entry points (each registry's own keys) tried in this
#: process; shared by the registries so that a module is imported once.
_loaded: set[str] = set()


class PluginError(ValueError):
    """A plug-in failed to load; the message names the entry point and its distribution, or
    the module, and the error. Source: ours."""


def import_module(module: str) -> None:
    """Import ``module`` once per process; the current directory is searched first, as by
    ``python -m`` (so ``--import`` and ``LPSCHED_PLUGINS`` find the same modules), but only
    while this import runs: afterwards a stray ``highspy.py`` there cannot shadow a library.

    Raises
    ------
    PluginError
        A file path instead of a module name, or a module that fails to import (its error in
        the message).

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
    cwd = os.getcwd()
    added = "" not in sys.path and cwd not in sys.path
    if added:
        sys.path.insert(0, cwd)
    try:
        importlib.import_module(module)
    except Exception as exc:
        raise PluginError(
            f"plug-in module {module!r} failed to import: {type(exc).__name__}: {exc}"
        ) from exc
    finally:
        if added and cwd in sys.path:
            sys.path.remove(cwd)


def env_modules() -> list[str]:
    """The modules named in ``LPSCHED_PLUGINS`` (comma-separated, blanks ignored). Source:
    ours."""
    return [m.strip() for m in os.environ.get(PLUGINS_ENV, "").split(",") if m.strip()]


def import_plugins(modules: Iterable[str]) -> None:
    """Import modules that register policies or time models on import, and add them to
    ``LPSCHED_PLUGINS`` so that the worker processes a sweep starts afterwards import them too.

    Parameters
    ----------
    modules : iterable of str
        Dotted module names, importable from ``sys.path``.

    Raises
    ------
    PluginError
        A module that cannot be imported (its error in the message).

    Notes
    -----
    Source: ours (the command line's ``--import MODULE``). A Dask worker on another machine
    needs the module installed and ``LPSCHED_PLUGINS`` set in its own environment.
    """
    names = env_modules()
    for module in modules:
        import_module(module)
        if module not in names:
            names.append(module)
    os.environ[PLUGINS_ENV] = ",".join(names)
