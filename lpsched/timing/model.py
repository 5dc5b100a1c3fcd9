"""The time-model contract (SPEC section 10): round ``t`` lasts ``d(t) = f(P_t, D_t, K_t)`` seconds.

A :class:`TimeModel` is a name, a one-line summary, named parameters (numbers, with their
values) and a vectorised duration function ``f(prefill_tokens, decoding, kv_tokens,
**parameters)``, evaluated elementwise on the loads of many rounds at once:

* ``prefill_tokens`` ``P_t``: tokens of the prompts prefilled in round ``t`` (the sum of ``s_i``
  over the runs whose first round is ``t``; a request restarted after a preemption or an
  eviction pays its prefill again);
* ``decoding`` ``D_t``: requests processed in round ``t`` (each emits one output token);
* ``kv_tokens`` ``K_t = m(t)``: the KV-cache tokens held in round ``t`` (SPEC section 2).

The schedule is never changed: a time model only reads it in seconds
(:func:`lpsched.timing.seconds.to_seconds`). Source: SPEC section 10; the class is ours.
"""

from __future__ import annotations

import contextlib
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..plugins import call_plugin

__all__ = ["TimeModel", "TimeModelError", "check_name"]


class TimeModelError(ValueError):
    """A time model is misused or misbehaves: an unknown or malformed parameter, a duration
    function that raises, or a duration that is not a positive finite number of seconds. The
    message names the model. Source: ours."""


def check_name(name: Any) -> str:
    """``name`` if it is a valid registry name (letters, digits, ``-``, ``_`` and ``.``, not
    empty), else raise :class:`TimeModelError`. Source: ours (as policy names, plus ``.``
    for profile names such as ``llama3.1-8b``)."""
    if (
        not isinstance(name, str)
        or not name
        or not all(c.isascii() and (c.isalnum() or c in "-_.") for c in name)
    ):
        raise TimeModelError(
            f"time model name must be letters, digits, '-', '_' or '.', got {name!r}"
        )
    return name


def _number(model: str, key: str, value: Any) -> float:
    """A parameter value as a finite float, or raise naming the model and the key."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(
        value, (int, float, np.integer, np.floating)
    ):
        raise TimeModelError(
            f"time model {model!r}: parameter {key!r} must be a number, got {value!r}"
        )
    out = float(value)
    if not math.isfinite(out):
        raise TimeModelError(
            f"time model {model!r}: parameter {key!r} must be a finite number, got {value!r}"
        )
    return out


def _loads(prefill_tokens: Any, decoding: Any, kv_tokens: Any) -> tuple[np.ndarray, ...]:
    """The three load arrays as int64 (or float64 when given as floats), each shape (T,)."""
    arrays = []
    for what, x in (
        ("prefill_tokens", prefill_tokens),
        ("decoding", decoding),
        ("kv_tokens", kv_tokens),
    ):
        a = np.asarray(x)
        if a.dtype.kind not in "iuf" and a.size:
            raise TimeModelError(f"{what} must be numbers (one a round), got dtype {a.dtype}")
        arrays.append(a.astype(np.float64 if a.dtype.kind == "f" else np.int64, copy=False))
    shapes = {a.shape for a in arrays}
    if len(shapes) != 1 or arrays[0].ndim != 1:
        raise TimeModelError(
            "prefill_tokens, decoding and kv_tokens must be flat arrays of one shape (T,), "
            f"got shapes {', '.join(str(a.shape) for a in arrays)}"
        )
    return tuple(arrays)


@dataclass(frozen=True)
class TimeModel:
    """A round-duration model: round ``t`` lasts ``f(P_t, D_t, K_t; parameters)`` seconds.

    Parameters
    ----------
    name : str
        Registry name (``unit``, ``linear``, a profile such as ``llama2-70b-a100x2``, a
        plug-in); letters, digits, ``-``, ``_``, ``.``.
    function : callable
        ``function(prefill_tokens, decoding, kv_tokens, **parameters) -> array_like``: the
        durations in seconds, elementwise over rounds. The three loads are int64 arrays of
        one shape (T,) (tokens, requests, tokens); the result has shape (T,) (a scalar is
        broadcast). It may be called on any subset of rounds, in chunks, so ``d(t)`` must
        depend on round ``t``'s load alone.
    summary : str
        One line for ``lpsched time-models`` and the tables.
    parameters : tuple of (str, float)
        The parameter values in use, by name (seconds per unit of load, typically); see
        :attr:`values` for a dict. Each a finite number.
    docs : tuple of (str, str)
        What each parameter means, with its unit, by name (for the listing).
    check : callable, optional
        ``check(values: dict) -> None``: raise ``ValueError`` for values the model refuses
        (``linear``: a negative coefficient); called by :meth:`with_parameters` and at
        construction.
    source : str
        Where the model comes from ("SPEC section 10", a profile's origin, a plug-in's
        distribution).

    Raises
    ------
    TimeModelError
        A malformed name, a parameter that is not a finite number, or values that ``check``
        refuses.

    Notes
    -----
    Frozen and hashable; two models are equal when name, function and parameter values are.
    :meth:`duration` is the scalar form an online executor can call round by round.
    Source: SPEC section 10; the class is ours.
    """

    name: str
    function: Callable[..., Any] = field(repr=False)
    summary: str = ""
    parameters: tuple[tuple[str, float], ...] = ()
    docs: tuple[tuple[str, str], ...] = field(default=(), repr=False, compare=False)
    check: Callable[[dict[str, float]], None] | None = field(
        default=None, repr=False, compare=False
    )
    source: str = field(default="", repr=False, compare=False)

    def __post_init__(self) -> None:
        check_name(self.name)
        if not callable(self.function):
            raise TimeModelError(f"time model {self.name!r}: function must be callable")
        params = tuple(
            (str(k), _number(self.name, str(k), v)) for k, v in dict(self.parameters).items()
        )
        object.__setattr__(self, "parameters", params)
        object.__setattr__(
            self, "docs", tuple((str(k), str(v)) for k, v in dict(self.docs).items())
        )
        self._check(self.values)

    def _check(self, values: dict[str, float]) -> None:
        if self.check is None:
            return
        try:
            self.check(dict(values))
        except (ValueError, TypeError) as exc:
            raise TimeModelError(f"time model {self.name!r}: {exc}") from None

    @property
    def values(self) -> dict[str, float]:
        """The parameter values, ``{name: value}`` (a fresh dict)."""
        return dict(self.parameters)

    @property
    def spec(self) -> str:
        """The model as the command line writes it: ``name`` or ``name:key=value,...``
        (``repr`` of each float, so that it reads back exactly)."""
        if not self.parameters:
            return self.name
        return self.name + ":" + ",".join(f"{k}={v!r}" for k, v in self.parameters)

    def to_dict(self) -> dict[str, Any]:
        """``{"name": ..., "parameters": {...}}``: what a schedule file and ``--json`` record
        (SPEC section 9)."""
        return {"name": self.name, "parameters": self.values}

    def describe(self) -> dict[str, Any]:
        """``name``, ``summary``, ``parameters`` (``{name: value}``), ``docs`` (``{name:
        text}``) and ``source``: a row of ``lpsched time-models --json``."""
        return {
            "name": self.name,
            "summary": self.summary,
            "parameters": self.values,
            "docs": dict(self.docs),
            "source": self.source,
        }

    def with_parameters(self, **values: Any) -> TimeModel:
        """The same model with some parameters replaced.

        Parameters
        ----------
        **values : float
            New values by parameter name (each a finite number).

        Returns
        -------
        TimeModel

        Raises
        ------
        TimeModelError
            An unknown parameter name (the message lists the model's), a value that is not a
            finite number, or values the model refuses (its ``check``).

        Notes
        -----
        Source: ours (the ``NAME:key=value`` of the command line).
        """
        known = self.values
        unknown = sorted(set(values) - set(known))
        if unknown:
            raise TimeModelError(
                f"time model {self.name!r} has no parameter "
                f"{', '.join(map(repr, unknown))}; its parameters: {', '.join(known) or 'none'}"
            )
        for k, v in values.items():
            known[k] = _number(self.name, k, v)
        return TimeModel(
            self.name,
            self.function,
            self.summary,
            tuple(known.items()),
            self.docs,
            self.check,
            self.source,
        )

    def durations(self, prefill_tokens: Any, decoding: Any, kv_tokens: Any) -> np.ndarray:
        """Seconds of rounds with the given loads, ``d = f(P, D, K)`` elementwise.

        Parameters
        ----------
        prefill_tokens : array_like of int, shape (T,)
            ``P_t``, prompt tokens prefilled in each round (tokens).
        decoding : array_like of int, shape (T,)
            ``D_t``, requests processed in each round.
        kv_tokens : array_like of int, shape (T,)
            ``K_t = m(t)``, KV-cache tokens held in each round (tokens).

        Returns
        -------
        ndarray of float64, shape (T,)
            Seconds, each positive and finite.

        Raises
        ------
        TimeModelError
            Loads of different shapes or not flat; the function raised (its error in the
            message) or called ``sys.exit``; or it returned a result of another shape, or a
            duration that is not a positive finite number of seconds (the message gives the
            first such round's load).

        Notes
        -----
        Source: SPEC section 10.
        """
        P, D, K = _loads(prefill_tokens, decoding, kv_tokens)
        d = self.call(P, D, K)
        if d.ndim == 0:
            d = np.full(P.shape, float(d))
        if d.shape != P.shape:
            raise TimeModelError(
                f"time model {self.name!r} returned durations of shape {d.shape} for "
                f"{P.shape[0]} rounds"
            )
        bad = np.flatnonzero(~(np.isfinite(d) & (d > 0)))
        if bad.size:
            j = int(bad[0])
            raise TimeModelError(
                f"time model {self.name!r} gives {float(d[j])!r} s for a round with P = {P[j]} "
                f"prefill tokens, D = {D[j]} requests, K = {K[j]} KV tokens; every round must "
                "last a positive finite number of seconds"
            )
        return d

    def call(self, P: np.ndarray, D: np.ndarray, K: np.ndarray) -> np.ndarray:
        """The model's function on loads already checked (:meth:`durations` checks them and
        the result), as float64, what it prints sent to standard error.

        Raises
        ------
        TimeModelError
            The function called ``sys.exit``, raised, or returned what is not real numbers
            (a string such as ``"0.01"``, a boolean, a complex number: refused, not converted;
            :func:`lpsched.plugins.call_plugin`; ``KeyboardInterrupt`` passes).

        Notes
        -----
        Source: ours.
        """
        with contextlib.redirect_stdout(sys.stderr):  # a plug-in's print, off a JSON
            out = call_plugin(
                self.function,
                (P, D, K),
                self.values,
                who=f"time model {self.name!r}",
                returns="a time model returns durations",
                error=TimeModelError,
            )
        try:
            raw = np.asarray(out)
            real = raw.dtype.kind in "iuf"  # a str, bool, complex or object is not seconds
        except Exception as exc:
            raise TimeModelError(
                f"time model {self.name!r} failed: {type(exc).__name__}: {exc}"
            ) from exc
        if not real:
            first = raw.ravel()[0].item() if raw.size else None
            raise TimeModelError(
                f"time model {self.name!r} returned {first!r} ({raw.dtype.name}); a time "
                "model returns real numbers of seconds (int or float)"
            )
        return raw.astype(np.float64)

    def require_finite(self, seconds: Any, what: str) -> None:
        """Raise when ``seconds`` (a sum of durations, e.g. the clock ``tau``) overflowed.

        Parameters
        ----------
        seconds : float or array_like of float
            Seconds computed from this model's durations.
        what : str
            What they are, for the message (``"tau at round 12"``).

        Raises
        ------
        TimeModelError
            A value that is not finite: the clock overflows float64 (about 1.8e308 s).

        Notes
        -----
        Source: ours (every round lasts a finite number of seconds, but their sum may not).
        """
        x = np.asarray(seconds, dtype=np.float64)
        if x.size and not np.isfinite(x).all():
            raise TimeModelError(
                f"time model {self.name!r}: the clock overflows: {what} is "
                f"{float(x.ravel()[~np.isfinite(x.ravel())][0])!r} s, beyond float64 (about "
                "1.8e308 s); give durations whose sums are finite"
            )

    def duration(self, prefill_tokens: int, decoding: int, kv_tokens: int) -> float:
        """Seconds of one round with load ``(P, D, K)``: the scalar form of :meth:`durations`
        (for an executor that advances its clock round by round).

        Raises
        ------
        TimeModelError
            As :meth:`durations`.

        Notes
        -----
        Source: SPEC section 10 (``d(t) = f(P_t, D_t, K_t)`` for one round).
        """
        return float(self.durations([prefill_tokens], [decoding], [kv_tokens])[0])

    @property
    def idle_s(self) -> float:
        """Seconds of a round with nothing running, ``f(0, 0, 0)`` (SPEC section 10: idle rounds
        count too)."""
        return self.duration(0, 0, 0)
