"""Every file lpsched reads or writes: instance and schedule JSON, trace CSV (SPEC section 9).

Readers validate once and raise :class:`~lpsched.instance.InstanceError` naming the file, the
request (or line) and the field; a key the format does not define is an error naming it and the
closest defined key (free-form data goes under ``metadata``), and so are ``NaN``, ``Infinity``
and numbers beyond the float range. Writers produce the stable, versioned formats of SPEC
section 9, each file whole or not at all (:func:`~.atomic.atomic_write_text`; a failure raises
:class:`~.atomic.WriteError` naming the path). The public helpers :func:`~.json_text.load_json`
(duplicate keys are an error) and :func:`~lpsched.instance.int_field` (one integer coercion
rule) are shared by every reader; user text in messages is quoted with
:func:`~lpsched.instance.quote`.

One module per format, all names re-exported here:

* :mod:`.instances` -- instance JSON: :func:`~.instances.read_instance`,
  :func:`~.instances.write_instance`, :func:`~.instances.instance_to_dict`,
  :func:`~.instances.instance_from_dict` and the format's keys; the shipped default instance;
  :func:`~.instances.check_output` (an output file that would overwrite an input);
* :mod:`.schedules` -- schedule JSON: :func:`~.schedules.read_schedule`,
  :func:`~.schedules.write_schedule`, :func:`~.schedules.schedule_to_dict` and the keys;
  :func:`~.schedules.schedule_summary_to_dict` and :func:`~.schedules.schedule_summary_line`
  (what ``lpsched schedule`` prints);
* :mod:`.traces` -- trace CSV: :func:`~.traces.read_trace_csv` and
  :func:`~.traces.require_files`;
* :mod:`.priorities` -- priority lists for a serving engine: :func:`~.priorities.write_priorities`;
* :mod:`.check` -- a schedule file checked against its instance (``lpsched check``):
  :func:`~.check.check_schedule_file`, :class:`~.check.ScheduleCheck`,
  :func:`~.check.schedule_seconds`;
* :mod:`.atomic` -- :func:`~.atomic.atomic_write_text` and :class:`~.atomic.WriteError`;
* :mod:`.json_text` -- :func:`~.json_text.load_json` and :class:`~.json_text.NonFiniteNumber`.
"""

from __future__ import annotations

# ``os`` stays an attribute of the package: tests patch ``lpsched.io.os.write`` (the
# ``os.write`` of :func:`~.atomic.atomic_write_text`) to simulate a full disk.
import os  # noqa: F401

from .atomic import WriteError, atomic_write_text
from .check import ScheduleCheck, check_schedule_file, schedule_seconds
from .instances import (
    DEFAULT_INSTANCE_SPEC,
    INSTANCE_FORMAT,
    INSTANCE_KEYS,
    INSTANCE_VERSION,
    REQUEST_KEYS,
    check_output,
    default_instance,
    instance_from_dict,
    instance_to_dict,
    read_instance,
    write_instance,
)
from .json_text import NonFiniteNumber as NonFiniteNumber
from .json_text import load_json
from .priorities import write_priorities
from .schedules import (
    SCHEDULE_FORMAT,
    SCHEDULE_KEYS,
    SCHEDULE_KEYS_V1,
    SCHEDULE_REQUEST_KEYS,
    SCHEDULE_VERSION,
    SECONDS_KEYS,
    read_schedule,
    schedule_summary_line,
    schedule_summary_to_dict,
    schedule_to_dict,
    write_schedule,
)
from .traces import TRACE_ARRIVAL as TRACE_ARRIVAL
from .traces import TRACE_DECODE as TRACE_DECODE
from .traces import TRACE_PREFILL as TRACE_PREFILL
from .traces import read_trace_csv, require_files

__all__ = [
    "default_instance",
    "DEFAULT_INSTANCE_SPEC",
    "check_output",
    "WriteError",
    "atomic_write_text",
    "INSTANCE_KEYS",
    "REQUEST_KEYS",
    "SCHEDULE_KEYS",
    "SCHEDULE_REQUEST_KEYS",
    "SCHEDULE_KEYS_V1",
    "INSTANCE_FORMAT",
    "INSTANCE_VERSION",
    "SCHEDULE_FORMAT",
    "SCHEDULE_VERSION",
    "SECONDS_KEYS",
    "instance_to_dict",
    "instance_from_dict",
    "read_instance",
    "write_instance",
    "load_json",
    "read_trace_csv",
    "require_files",
    "schedule_to_dict",
    "schedule_summary_to_dict",
    "schedule_summary_line",
    "write_schedule",
    "read_schedule",
    "write_priorities",
    "ScheduleCheck",
    "check_schedule_file",
    "schedule_seconds",
]
