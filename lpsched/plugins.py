"""The registries and plug-in modules: the one registry helper (:class:`Registry`) of the
policies (:mod:`lpsched.policies.registry`), the time models (:mod:`lpsched.timing.registry`),
the solver back ends (:data:`lpsched.solvers.solve.SOLVERS`), the certify methods
(:mod:`lpsched.certify.methods`) and the reproductions
(:mod:`lpsched.research.reproductions.registry`), and the one loader of plug-ins
(:func:`load_plugins`).

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
from operator import attrgetter
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

__all__ = [
    "PLUGINS_ENV",
    "PluginError",
    "import_module",
    "env_modules",
    "import_plugins",
    "plugin_modules",
    "load_plugins",
    "Registry",
    "module_entries",
    "call_plugin",
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


E = TypeVar("E", bound=Exception)


def call_plugin(
    function: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: Mapping[str, Any],
    *,
    who: str,
    returns: str,
    error: type[E],
) -> Any:
    """``function(*args, **kwargs)`` for a user's callable (a policy, a time model): the one
    guarded call of every user callable.

    Parameters
    ----------
    function : callable
        The user's callable.
    args, kwargs
        Its arguments.
    who : str
        The callable in messages (``"policy 'x' (module.f)"``).
    returns : str
        What it should do instead of exiting (``"a policy returns a priority list"``).
    error : type of Exception
        The error raised (``PolicyError``, ``TimeModelError``).

    Returns
    -------
    Any
        What ``function`` returned.

    Raises
    ------
    error
        ``function`` called ``sys.exit`` (the message gives its code), or raised any other
        exception, ``Exception`` or ``BaseException`` (its type and text in the message).
    KeyboardInterrupt
        Passed on: Ctrl-C and the signals of :mod:`lpsched.interrupts` stop the run.

    Notes
    -----
    Source: ours.
    """
    try:
        return function(*args, **kwargs)
    except KeyboardInterrupt:
        raise
    except SystemExit as exc:  # would end the run without a word
        raise error(
            f"{who} called sys.exit({exc.code!r}); {returns} or raises an exception"
        ) from None
    except BaseException as exc:
        raise error(f"{who} failed: {type(exc).__name__}: {exc}") from exc


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


def _reads_as_number(name: Any) -> bool:
    try:
        float(name)
    except (TypeError, ValueError):
        return False
    return True


T = TypeVar("T")


class Registry(dict[str, T]):
    """Names -> entries, in registration order: the one registry helper of lpsched.

    A ``dict`` (its callers and the tests read, set and restore it as one) whose entries given
    at construction are its built-ins. :meth:`register` refuses a malformed name, a built-in
    one and (unless ``replace``) a taken one; :meth:`lookup` loads what is missing, then raises
    a KeyError listing the registered names. A registry with an entry-point group loads its
    plug-ins through :func:`load_plugins`, lazily: those of one name on the first look-up of
    that name, all of them on :meth:`load_plugins`.

    Parameters
    ----------
    kind : str
        What an entry is, for the messages (``"policy"``, ``"time model"``).
    entries : iterable or mapping, default ()
        The built-in entries, in order; a mapping gives each entry's name (for entries that
        carry none, such as functions).
    name_of : callable, default ``attrgetter("name")``
        An entry's name, for the entries given without one.
    check_name : callable, optional
        ``check_name(name)`` raising for a malformed name; default: a non-empty string of
        letters, digits, ``-`` and ``_``, else ``error`` ("KIND name must be letters, digits,
        '-' or '_', got NAME").
    error : type of ValueError, default ValueError
        Raised for a malformed (by the default check), built-in or taken name.
    taken : str
        The message for a taken name, ``str.format``-ed with ``kind`` and ``name``.
    unknown : str
        The message of the KeyError for an unknown name, formatted with ``kind``, ``name``,
        ``names`` (the registered names, comma-separated) and ``plugins`` (``"; installed
        plug-ins not loaded: A, B"`` when the entry-point group holds names not registered,
        else empty).
    group : str, optional
        Entry-point group of the plug-ins (``lpsched.policies``); needs ``plugin``.
    plugin : callable, optional
        ``plugin(name, function, description, source)``: registers an entry point's object
        (the ``register`` of :func:`load_plugins`).
    extra : callable, optional
        ``extra() -> iterable of entries``: entries shipped with lpsched but read lazily, once
        per process, on the first look-up of a name not registered, the first :meth:`names` or
        the first registration (the shipped time profiles). Their names are reserved as the
        built-in ones are: a plug-in of such a name is refused, whichever comes first, and so
        is a look-up of the name while an installed entry point of the group claims it (ours:
        one name, one model, so that a file recording the name means the same everywhere).

    Raises
    ------
    ValueError
        (``error``) Two built-in entries of one name, or a malformed built-in name.

    Notes
    -----
    Source: ours. A registry written by hand (a dict, a register function, a look-up) adopts
    it in three steps; its readers and its tests are unchanged, since it stays a dict:

    * the dict becomes ``NAMES = Registry("kind", entries, ...)``; ``taken`` and ``unknown``
      keep the old messages (``taken="a certify method named {name!r} exists already"``);
    * the register function becomes ``NAMES.register(entry)``, or calls it after its own
      checks (a type check of the entry stays with the caller); :meth:`check_new` refuses a
      name before an entry is built from it;
    * the look-up becomes ``NAMES.lookup(name)``; a caller that raises ValueError for an
      unknown name raises ``ValueError(NAMES.missing(name))``.

    Entries that each live in a module of their own (the certify methods, the reproductions)
    come from :func:`module_entries` over a tuple of module names: adding one is its module and
    one line of that tuple. Back ends that are functions come as a mapping,
    ``Registry("solver", {"highs": highs.solve_mip, ...})``.
    """

    def __init__(
        self,
        kind: str,
        entries: Iterable[T] | Mapping[str, T] = (),
        *,
        name_of: Callable[[T], str] = attrgetter("name"),
        check_name: Callable[[Any], object] | None = None,
        error: type[ValueError] = ValueError,
        taken: str = "{kind} {name!r} is already registered",
        unknown: str = "unknown {kind} {name!r}; registered: {names}{plugins}",
        group: str | None = None,
        plugin: Callable[[str, Callable[..., Any], str, str], Any] | None = None,
        extra: Callable[[], Iterable[T]] | None = None,
    ) -> None:
        super().__init__()
        #: What an entry is, for the messages.
        self.kind = kind
        #: Entry-point group of the plug-ins, or None.
        self.group = group
        #: Names of the built-in entries (never replaced).
        self.builtin: frozenset[str] = frozenset()
        #: Names of the ``extra`` entries read so far (never replaced either).
        self.shipped: frozenset[str] = frozenset()
        self._name_of = name_of
        self._check_name = check_name or self._default_check
        self._error = error
        self._taken, self._unknown = taken, unknown
        self._plugin, self._extra = plugin, None
        pairs = entries.items() if isinstance(entries, Mapping) else ((None, e) for e in entries)
        for name, entry in pairs:
            self.register(entry, name=name)
        self.builtin = frozenset(self)
        self._extra = extra  # after the built-ins: reading it stays lazy

    def _default_check(self, name: Any) -> None:
        """Refuse a name that is not letters, digits, ``-`` and ``_``."""
        if not isinstance(name, str) or not name or not all(c.isalnum() or c in "-_" for c in name):
            raise self._error(f"{self.kind} name must be letters, digits, '-' or '_', got {name!r}")

    def check_new(self, name: str, replace: bool = False) -> str:
        """``name``, if an entry may be registered under it.

        Raises
        ------
        ValueError
            (the registry's ``error``; ``check_name``'s own for a malformed name) A malformed
            name, one that reads as a number (``inf``, ``nan``, ``1e3``: a results CSV would
            read it as one), a built-in or shipped one, or one already registered and
            ``replace`` False.

        Notes
        -----
        Source: ours.
        """
        self._check_name(name)
        if _reads_as_number(name):  # "inf", "nan", "1e3": a results CSV would read a number
            raise self._error(f"{self.kind} name must not read as a number, got {name!r}")
        if name in self.builtin:
            raise self._error(
                f"{self.kind} {name!r} is built in and cannot be registered again; register "
                "yours under another name"
            )
        self._load_extra()
        if name in self.shipped:
            raise self._error(self._shipped_message(name))
        if name in self and not replace:
            raise self._error(self._taken.format(kind=self.kind, name=name))
        return name

    def register(self, entry: T, *, name: str | None = None, replace: bool = False) -> T:
        """Add ``entry`` under ``name`` (default its own name) and return it.

        Parameters
        ----------
        entry : object
            The entry.
        name : str, optional
            Its name; default ``name_of(entry)``.
        replace : bool, default False
            Replace an entry of this name registered earlier (never a built-in one).

        Returns
        -------
        object
            ``entry``.

        Raises
        ------
        ValueError
            As :meth:`check_new`.

        Notes
        -----
        Source: ours.
        """
        self[self.check_new(self._name_of(entry) if name is None else name, replace)] = entry
        return entry

    def __repr__(self) -> str:
        """``Registry('KIND', [NAMES])``: the kind and the names registered so far, in order
        (the entries themselves are functions and records whose reprs say little; nothing is
        loaded to write it). Source: ours."""
        return f"Registry({self.kind!r}, {list(self)!r})"

    def names(self) -> list[str]:
        """The registered names in registry order, the ``extra`` entries loaded first (their
        errors propagate). Source: ours."""
        self._load_extra()
        return list(self)

    def lookup(self, name: str, shown: Any = None) -> T:
        """The entry ``name``; on a miss, the ``extra`` entries and then the plug-ins of that
        name (:meth:`load_plugins`) are loaded first.

        Parameters
        ----------
        name : str
            A registered name.
        shown : object, optional
            What the message names instead of ``name`` (the text the user wrote).

        Returns
        -------
        object
            The entry.

        Raises
        ------
        KeyError
            An unknown name: :meth:`missing`, which lists the registered names.
        PluginError
            A plug-in (a module of ``LPSCHED_PLUGINS`` or an entry point of this name) that
            fails to load, or an installed entry point named like a shipped entry.

        Notes
        -----
        Source: ours.
        """
        if name not in self:
            self._load_extra()
            if isinstance(name, str) and name and name not in self:
                self.load_plugins(name)
        if name not in self:
            raise KeyError(self.missing(name if shown is None else shown))
        if name in self.shipped and self.group is not None:
            for module in env_modules():  # a module of LPSCHED_PLUGINS claiming it is refused
                import_module(module)
            for ep in (e for e in metadata.entry_points(group=self.group) if e.name == name):
                raise PluginError(
                    f"plug-in {self.kind} entry point '{ep.name} = {ep.value}' (group "
                    f"{self.group}): {self._shipped_message(name)}"
                )
        return self[name]

    def missing(self, name: Any) -> str:
        """The message for the unknown name ``name`` (the registry's ``unknown``). Source:
        ours."""
        others = self.unloaded_plugins()
        plugins = f"; installed plug-ins not loaded: {', '.join(others)}" if others else ""
        return self._unknown.format(
            kind=self.kind, name=name, names=", ".join(self), plugins=plugins
        )

    def load_plugins(self, name: str | None = None) -> None:
        """Register the plug-ins of this registry: :func:`load_plugins` with its entry-point
        group, its ``kind`` and its ``plugin`` (the modules of ``LPSCHED_PLUGINS``, then the
        entry points named ``name``, or all of them); nothing without a group.

        Raises
        ------
        PluginError
            Naming each module or entry point that fails to load (:func:`load_plugins`).

        Notes
        -----
        Source: ours.
        """
        if self.group is not None and self._plugin is not None:
            load_plugins(self.group, self.kind, self._plugin, name)

    def unloaded_plugins(self) -> list[str]:
        """Names of the installed entry points of the registry's group that are not registered
        (not loaded, or failing to load), sorted; none without a group. Source: ours."""
        if self.group is None:
            return []
        return sorted({ep.name for ep in metadata.entry_points(group=self.group)} - set(self))

    def _load_extra(self) -> None:
        """Register the ``extra`` entries, once per process (marked before they are read: a
        failing read fails one look-up); an entry registered before them under one of their
        names is replaced (registering it was refused only if they had been read)."""
        key = f"extra:{self.kind}"
        if self._extra is None or key in _loaded:
            return
        _loaded.add(key)
        entries = {self._name_of(entry): entry for entry in self._extra()}
        self.shipped = self.shipped | frozenset(entries)
        self.update(entries)

    def _shipped_message(self, name: str) -> str:
        return (
            f"{self.kind} {name!r} is shipped with lpsched and cannot be registered again; "
            "register yours under another name"
        )


def module_entries(
    package: str, modules: Iterable[str], entry: Callable[[ModuleType], T]
) -> list[T]:
    """The entries that modules of ``package`` declare, in the order of ``modules``: each module
    ``package.NAME`` imported by its name, and ``entry(module)`` taken from it. A registry over
    a package's modules (:class:`Registry`) is then one tuple of module names.

    Parameters
    ----------
    package : str
        The dotted package name (``__package__`` or ``__name__`` of its ``__init__``).
    modules : iterable of str
        Module names in ``package``.
    entry : callable
        ``entry(module) -> entry`` (``lambda module: module.METHOD``).

    Returns
    -------
    list
        The entries, one per module.

    Raises
    ------
    ImportError
        A module that does not exist or fails to import.

    Notes
    -----
    Source: ours.
    """
    return [entry(importlib.import_module(f"{package}.{module}")) for module in modules]
