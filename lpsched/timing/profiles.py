"""Fitted time profiles: ``linear`` models with measured coefficients, read from
``lpsched/data/time_profiles.json`` (package data) or any file of the same schema.

Schema::

    {"profiles": [{"name": "llama2-70b-a100x2", "model": "Llama-2-70B",
                   "gpu": "2 x A100 80GB, tensor parallel 2", "form": "linear",
                   "coefficients": {"base_s": ..., "prefill_token_s": ..., "prefill_token2_s": ...,
                                    "decode_request_s": ..., "kv_token_s": ...},
                   "source": {...}, "fit": {...}}, ...]}

``form`` is ``"linear"`` (:func:`lpsched.timing.builtin.linear`); a coefficient left out is 0
(``base_s`` is required); ``source`` and ``fit`` are free-form objects (where the measurements
come from, how well the fit does) shown by ``lpsched time-models --json``.

Source: ours (the profiles are fitted from the Vidur simulator's profiling data; a profile whose
``source`` says ``PLACEHOLDER`` is not a fit).
"""

from __future__ import annotations

import json
import os
from importlib import resources
from typing import Any

from .builtin import LINEAR_DOCS, check_linear, linear
from .model import TimeModel, TimeModelError

__all__ = ["PROFILES_FILE", "PROFILE_KEYS", "read_profiles"]

#: The shipped profiles, package data.
PROFILES_FILE = "data/time_profiles.json"
#: The keys of one profile: the first five required, ``source`` and ``fit`` optional.
PROFILE_KEYS = ("name", "model", "gpu", "form", "coefficients", "source", "fit")


def _where(path: str | os.PathLike[str] | None) -> str:
    """The profiles file as messages name it."""
    return f"lpsched/{PROFILES_FILE}" if path is None else os.fspath(path)


def _text(path: str | os.PathLike[str] | None) -> str:
    if path is None:
        return resources.files("lpsched").joinpath(PROFILES_FILE).read_text(encoding="utf-8")
    with open(path, encoding="utf-8") as f:
        return f.read()


def read_profiles(path: str | os.PathLike[str] | None = None) -> list[TimeModel]:
    """The time models of a profiles file, one per profile, in file order.

    Parameters
    ----------
    path : path-like, optional
        A profiles JSON file (schema above); default the shipped
        ``lpsched/data/time_profiles.json``.

    Returns
    -------
    list of TimeModel
        Each named as its profile, the ``linear`` function with the profile's coefficients as
        parameter values (overridable, as any parameter: ``NAME:base_s=0.02``); its summary
        names the model and the GPUs, its ``source`` the file and the profile's ``source``.

    Raises
    ------
    TimeModelError
        An unreadable or malformed file: not JSON (the message gives the line and column), no
        ``profiles`` list, a profile with a missing or unknown key, a ``form`` other than
        ``linear``, an unknown coefficient, a coefficient that ``linear`` refuses, or a name
        given twice. The message names the file
        and the profile.

    Notes
    -----
    Source: ours.
    """
    where = _where(path)
    try:
        data = json.loads(_text(path))
    except json.JSONDecodeError as exc:
        raise TimeModelError(
            f"time profiles {where}, line {exc.lineno}, column {exc.colno}: cannot read: "
            f"not JSON: {exc.msg}"
        ) from None
    except (OSError, ValueError) as exc:
        raise TimeModelError(f"time profiles {where}: cannot read: {exc}") from None
    profiles = data.get("profiles") if isinstance(data, dict) else None
    if not isinstance(profiles, list):
        raise TimeModelError(f"time profiles {where}: needs a list 'profiles'")
    out: list[TimeModel] = []
    seen: set[str] = set()
    for k, prof in enumerate(profiles):
        out.append(_profile(prof, f"time profiles {where}, profile {k}", where))
        if out[-1].name in seen:
            raise TimeModelError(f"time profiles {where}: profile {out[-1].name!r} given twice")
        seen.add(out[-1].name)
    return out


def _profile(prof: Any, who: str, where: str) -> TimeModel:
    """One profile as a :class:`TimeModel` (see :func:`read_profiles`)."""
    if not isinstance(prof, dict):
        raise TimeModelError(f"{who}: not an object")
    unknown = sorted(set(prof) - set(PROFILE_KEYS))
    missing = [key for key in PROFILE_KEYS[:5] if key not in prof]
    if unknown or missing:
        raise TimeModelError(
            f"{who}: "
            + (f"unknown key {', '.join(map(repr, unknown))}" if unknown else "")
            + ("; " if unknown and missing else "")
            + (f"missing {', '.join(map(repr, missing))}" if missing else "")
            + f" (a profile has {', '.join(PROFILE_KEYS)})"
        )
    name = prof["name"]
    who = f"{who} ({name!r})"
    for key in ("name", "model", "gpu"):
        if not isinstance(prof[key], str) or not prof[key]:
            raise TimeModelError(f"{who}: {key!r} must be a non-empty string")
    if prof["form"] != "linear":
        raise TimeModelError(f"{who}: form {prof['form']!r} is not known; lpsched reads 'linear'")
    coef = prof["coefficients"]
    if not isinstance(coef, dict) or "base_s" not in coef:
        raise TimeModelError(f"{who}: 'coefficients' must be an object with at least base_s")
    unknown = sorted(set(coef) - set(LINEAR_DOCS))
    if unknown:
        raise TimeModelError(
            f"{who}: unknown coefficient {', '.join(map(repr, unknown))}; linear has "
            f"{', '.join(LINEAR_DOCS)}"
        )
    for key in ("source", "fit"):
        if not isinstance(prof.get(key, {}), dict):
            raise TimeModelError(f"{who}: {key!r} must be an object")
    values = {key: coef.get(key, 0.0) for key in LINEAR_DOCS}
    note = prof.get("source", {}).get("note")
    summary = f"{prof['model']} on {prof['gpu']}, fitted linear" + (
        f" ({note})" if isinstance(note, str) and note else ""
    )
    source = f"{where}: " + json.dumps(prof.get("source", {}), sort_keys=True)
    try:
        return TimeModel(
            name,
            linear,
            summary,
            tuple(values.items()),
            tuple(LINEAR_DOCS.items()),
            check_linear,
            source,
        )
    except TimeModelError as exc:
        raise TimeModelError(f"{who}: {exc}") from None
