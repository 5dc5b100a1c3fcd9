"""Time models: a schedule read in seconds (SPEC section 10), one concept per module.

* :mod:`.model` -- the contract: :class:`~.model.TimeModel` (name, summary, parameters, the
  vectorised ``durations(prefill_tokens, decoding, kv_tokens)`` and the scalar ``duration``);
* :mod:`.builtin` -- ``unit`` (every round 1 s) and ``linear`` (a base cost plus costs per
  prefill token, squared prefill token, decoding request and KV token);
* :mod:`.profiles` -- fitted ``linear`` profiles from ``lpsched/data/time_profiles.json``;
* :mod:`.registry` -- names to models: :func:`~.registry.register_time_model`,
  :func:`~.registry.parse_time_model` (``NAME:key=value,...``), entry points
  ``lpsched.time_models``;
* :mod:`.seconds` -- :func:`~.seconds.round_loads` and :func:`~.seconds.to_seconds`
  (:class:`~.seconds.ScheduleSeconds`: the clock, each request's latency, TTFT and TPOT).

Schedules are never changed: rounds stay the unit of every model of SPEC sections 1-9.
"""

from __future__ import annotations

from .model import TimeModel, TimeModelError
from .registry import (
    TIME_MODELS,
    parse_time_model,
    register_time_model,
    time_model,
    time_model_names,
)
from .seconds import ScheduleSeconds, round_loads, to_seconds

__all__ = [
    "TimeModel",
    "TimeModelError",
    "TIME_MODELS",
    "parse_time_model",
    "register_time_model",
    "time_model",
    "time_model_names",
    "ScheduleSeconds",
    "round_loads",
    "to_seconds",
]
