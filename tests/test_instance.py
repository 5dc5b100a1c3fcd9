"""Instance: construction, validation, and the error messages of bad values.

Every bad value must raise :class:`InstanceError` (a ``ValueError``) whose message names the
source, the request id and the field (SPEC section 1). File formats: ``tests/test_io.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

from lpsched.instance import Instance, InstanceError, Request

# --------------------------------------------------------------------------- construction


def test_from_arrays_defaults():
    inst = Instance.from_arrays([3, 0, 7], [2, 5, 1], 20)
    assert inst.n == len(inst) == 3
    assert inst.memory == 20
    assert inst.ids == ("r0", "r1", "r2")
    assert inst.prefill.tolist() == [3, 0, 7]
    assert inst.decode.tolist() == [2, 5, 1]
    assert inst.arrival.tolist() == [0, 0, 0]
    assert inst.size.tolist() == [5, 5, 8]
    assert inst.offline
    assert not inst.has_intervals
    assert inst[1] == Request("r1", 0, 5, 0)
    assert [r.size for r in inst] == [5, 5, 8]


def test_from_arrays_is_read_only():
    inst = Instance.from_arrays([3, 0], [2, 5], 20)
    with pytest.raises(ValueError):
        inst.prefill[0] = 4


def test_from_arrays_with_arrivals_and_interval():
    inst = Instance.from_arrays(
        [1, 2], [3, 4], 10, [0, 5], ids=["x", "y"], decode_lo=[1, 4], decode_hi=[5, 8]
    )
    assert not inst.offline
    assert inst.has_intervals
    assert inst[1] == Request("y", 2, 4, 5, 4, 8)


def test_from_requests_matches_from_arrays():
    reqs = [Request("a", 3, 2, 1, 1, 4), Request("b", 0, 5, 0, 5, 6)]
    inst = Instance.from_requests(reqs, 12, name="n1", metadata={"seed": 3})
    assert list(inst) == reqs
    assert inst.name == "n1"
    assert inst.metadata == {"seed": 3}
    assert inst.decode_lo.tolist() == [1, 5]
    assert inst.decode_hi.tolist() == [4, 6]
    plain = Instance.from_requests([Request("a", 3, 2)], 5)
    assert not plain.has_intervals


@pytest.mark.parametrize(
    "kwargs, field",
    [
        (dict(prefill=[-1, 0], decode=[1, 1], memory=5), "prefill"),
        (dict(prefill=[0, 0], decode=[1, 0], memory=5), "decode"),
        (dict(prefill=[0, 0], decode=[1, 1.5], memory=5), "decode"),
        (dict(prefill=[0, float("nan")], decode=[1, 1], memory=5), "prefill"),
        (dict(prefill=[0, 4], decode=[1, 2], memory=5), "decode"),
        (dict(prefill=[0, 0], decode=[1, 1], memory=5, arrival=[0, -2]), "arrival"),
    ],
)
def test_from_arrays_rejects_bad_values(kwargs, field):
    with pytest.raises(InstanceError, match=field):
        Instance.from_arrays(**kwargs)


def test_from_arrays_rejects_duplicate_ids_and_empty():
    with pytest.raises(InstanceError, match="'q'.*id"):
        Instance.from_arrays([0, 0], [1, 1], 5, ids=["q", "q"])
    with pytest.raises(InstanceError):
        Instance.from_arrays([], [], 5)


def test_prefill_plus_decode_equal_memory_is_accepted():
    inst = Instance.from_arrays([3], [2], 5)
    assert inst.size.tolist() == [5]


def test_instance_error_is_value_error():
    assert issubclass(InstanceError, ValueError)


# --------------------------------------------------------------------------- hardening


def test_quote_escapes_control_characters():
    from lpsched.instance import quote

    assert quote("r1") == "'r1'"
    assert quote("a\nb") == "'a\\nb'" and quote("\x1b[31m") == "'\\x1b[31m'"
    assert quote(3) == "'3'" and quote("it's") == '"it\'s"'
    assert all(quote(t).isprintable() for t in ("\r", "\u202e", "\x00", "\t"))


@pytest.mark.parametrize("rid", ["line\nbreak", "\x1b]0;title\x07", "\u202eabc"])
def test_error_messages_escape_ids(rid):
    for build in (
        lambda: Instance.from_arrays([1, 2], [1, 0], 10, ids=["ok", rid]),
        lambda: Instance.from_arrays([1, 20], [1, 1], 10, ids=["ok", rid]),
        lambda: Instance.from_arrays([1, 2], [1, 1], 10, ids=[rid, rid]),
    ):
        with pytest.raises(InstanceError) as info:
            build()
        assert repr(rid) in str(info.value) and str(info.value).isprintable()


def test_too_large_value_prints_a_plain_number():
    # used to print np.int64(2000000000000000)
    with pytest.raises(InstanceError) as info:
        Instance.from_arrays([1, 1], [1, 1], 10, arrival=np.array([0, 2 * 10**15]))
    msg = str(info.value)
    assert "np." not in msg and "got 2000000000000000" in msg and "field 'arrival'" in msg
    with pytest.raises(InstanceError) as info:
        Instance.from_arrays(np.array([0.5, 1.0]), [1, 1], 10)
    assert "np." not in str(info.value) and "got 0.5" in str(info.value)


# ---------------------------------------------------------------- arrivals in seconds
def test_arrival_seconds_frozen_and_carried():
    inst = Instance.from_arrays([1, 2, 3], [1, 1, 1], 10, arrival_s=[0.0, 2.5, 1.25])
    assert inst.arrival_s.dtype == np.float64 and not inst.arrival_s.flags.writeable
    assert inst.arrival.tolist() == [0, 0, 0]  # the rounds are separate
    assert inst.subset([2, 0]).arrival_s.tolist() == [1.25, 0.0]
    assert inst.replace(memory=12).arrival_s.tolist() == [0.0, 2.5, 1.25]
    assert inst.replace(arrival_s=None).arrival_s is None
    assert inst[1] == Request("r1", 2, 1, 0, arrival_s=2.5)
    again = Instance.from_requests(list(inst), 10)
    assert again.arrival_s.tolist() == [0.0, 2.5, 1.25]
    assert Instance.from_arrays([1], [1], 4).arrival_s is None


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf"), 2.0**41])
def test_bad_arrival_seconds_names_request_and_field(bad):
    with pytest.raises(InstanceError) as err:
        Instance.from_arrays(
            [1, 1], [1, 1], 4, ids=["x", "y"], arrival_s=[0.0, bad], source="f.json"
        )
    msg = str(err.value)
    assert msg.startswith("f.json: request 'y': field 'arrival_s'") and repr(bad) in msg


def test_arrival_seconds_of_the_wrong_length_or_kind():
    with pytest.raises(InstanceError, match="'arrival_s' has 1 values for 2 requests"):
        Instance.from_arrays([1, 1], [1, 1], 4, arrival_s=[0.0])
    with pytest.raises(InstanceError, match="'arrival_s' must be a one-dimensional"):
        Instance.from_arrays([1, 1], [1, 1], 4, arrival_s=[["a"], ["b"]])
