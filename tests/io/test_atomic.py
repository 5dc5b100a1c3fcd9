"""Atomic writes (lpsched.io.atomic): every writer writes a file whole or not at all, and a
failure raises :class:`~lpsched.io.WriteError` naming the path."""

from __future__ import annotations

import re

import pytest

from lpsched.instance import Instance
from lpsched.io import atomic_write_text, write_instance, write_schedule
from lpsched.schedule import Schedule

# the hand instance of tests/test_schedule.py, arriving at rounds 0, 1, 2
ONLINE = Instance.from_arrays(
    [2, 1, 0], [3, 2, 1], 10, [0, 1, 2], ids=["A", "B", "C"], name="hand-online"
)


# --------------------------------------------------------------------------- atomic writes


def _enospc_after(monkeypatch, nbytes):
    """Make os.write write ``nbytes`` bytes of the next file, then fail with ENOSPC."""
    import errno
    import os

    real = os.write
    left = [nbytes]

    def fake(fd, data):
        if fd <= 2:
            return real(fd, data)
        if left[0] <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        k = real(fd, bytes(data[: left[0]]))
        left[0] -= k
        return k

    monkeypatch.setattr("lpsched.io.atomic.os.write", fake)


@pytest.mark.parametrize("writer", ["instance", "schedule", "text"])
def test_full_disk_leaves_the_previous_file_intact(tmp_path, monkeypatch, writer):
    import errno

    from lpsched.io import WriteError, atomic_write_text

    path = tmp_path / "out.json"
    path.write_text("previous\n")

    def write():
        if writer == "instance":
            write_instance(ONLINE, path)
        elif writer == "schedule":
            write_schedule(Schedule(ONLINE, [0, 1, 3]), path)
        else:
            atomic_write_text(path, "x" * 10_000)

    _enospc_after(monkeypatch, 7)
    with pytest.raises(WriteError, match=re.escape(f"{path}: cannot write: No space left")) as info:
        write()
    assert info.value.errno == errno.ENOSPC and isinstance(info.value, OSError)
    assert path.read_text() == "previous\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]  # no temporary file left


def test_atomic_write_replaces_whole_and_keeps_mode(tmp_path):
    import os
    import stat

    from lpsched.io import WriteError, atomic_write_text

    path = tmp_path / "a.txt"
    path.write_text("old")
    os.chmod(path, 0o640)
    atomic_write_text(path, "new text")
    assert path.read_text() == "new text" and stat.S_IMODE(path.stat().st_mode) == 0o640
    link = tmp_path / "link.txt"
    link.symlink_to(path)
    atomic_write_text(link, "via link")
    assert link.is_symlink() and path.read_text() == "via link"
    with pytest.raises(WriteError, match="folder .*missing does not exist"):
        atomic_write_text(tmp_path / "missing" / "a.txt", "x")
    with pytest.raises(WriteError, match="is a directory"):
        atomic_write_text(tmp_path, "x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "link.txt"]


def test_a_fifo_or_device_target_is_written_into_not_replaced(tmp_path):
    """Issue 22, item 1: the rename replaced /dev/null (as root) and FIFOs by regular files."""
    import os
    import stat
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    atomic_write_text(fifo, "whole text\n")
    reader.join(10)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and got == [b"whole text\n"]
    if os.path.exists("/dev/null"):
        atomic_write_text("/dev/null", "nothing\n")
        assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
