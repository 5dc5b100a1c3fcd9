"""Report files of the reproductions (lpsched.sweeps.tables): written whole or not at all."""

from __future__ import annotations

import errno
import os

import pytest

from lpsched.io import WriteError
from lpsched.sweeps.tables import markdown_table, write_report


def test_write_report_adds_a_newline_and_replaces(tmp_path):
    assert write_report(tmp_path / "sub", "r", "a\n\n") == "a\n\n"
    assert (tmp_path / "sub" / "r.md").read_text() == "a\n"
    write_report(tmp_path / "sub", "r", markdown_table([{"x": 1}], ["x"]))
    assert (tmp_path / "sub" / "r.md").read_text() == markdown_table([{"x": 1}], ["x"]) + "\n"


def test_write_report_on_a_full_disk_keeps_the_old_report(tmp_path, monkeypatch):
    path = tmp_path / "r.md"
    path.write_text("old table\n")
    real = os.write
    calls = []

    def half_then_full(fd, data):
        if fd <= 2:
            return real(fd, data)
        calls.append(fd)
        if len(calls) > 1:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd, bytes(data[:3]))

    monkeypatch.setattr("lpsched.io.os.write", half_then_full)
    with pytest.raises(WriteError, match=f"{path}: cannot write: No space left on device"):
        write_report(tmp_path, "r", "new table " * 100)
    assert path.read_text() == "old table\n" and os.listdir(tmp_path) == ["r.md"]


def test_write_report_into_a_file_names_the_path(tmp_path):
    (tmp_path / "f").write_text("")
    with pytest.raises(WriteError, match="f/r.md: cannot write"):
        write_report(tmp_path / "f", "r", "x")
