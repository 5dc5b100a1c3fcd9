"""Writing a file whole or not at all: :func:`atomic_write_text` and its :class:`WriteError`.

Every writer of lpsched writes through :func:`atomic_write_text` (SPEC section 9's files,
reports, priority lists), or, for a file a solver writes itself (an exported model), writes a
temporary file and puts it in place with :func:`install_file`. Source: ours.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

__all__ = ["WriteError", "atomic_write_text", "install_file"]


class WriteError(OSError):
    """A file could not be written whole; the message names the path and the reason.

    Raised by :func:`atomic_write_text` (and so by every writer of lpsched); the file at the
    path, if any, is unchanged. It is an ``OSError`` (with the ``errno`` of the cause).
    Source: ours.
    """


def atomic_write_text(path: str | os.PathLike[str], text: str, *, encoding: str = "utf-8") -> None:
    """Write ``text`` to ``path`` whole or not at all.

    The text goes to a new temporary file in the same folder, is flushed to disk, and then
    replaces ``path`` in one step (``os.replace``), so that a reader never sees half a file and
    a failed write (an unwritable folder, a full disk) leaves the previous file, if any, intact
    and no temporary file behind. A new file gets the permissions the umask gives; a replaced
    file keeps its permission bits; a symbolic link is followed (the link stays). A target that
    exists and is not a regular file (``/dev/null``, a FIFO, a terminal) is written in place,
    never renamed over: a device stays a device (the write is then not atomic).

    Parameters
    ----------
    path : path-like
        The file to write.
    text : str
        Its whole content.
    encoding : str, default "utf-8"

    Raises
    ------
    WriteError
        The file cannot be written; the message names the path and the reason.

    Notes
    -----
    Source: ours (the usual write-then-rename idiom).
    """
    target = Path(path)
    if target.is_symlink():
        target = Path(os.path.realpath(target))
    tmp: str | None = None
    try:
        data = text.encode(encoding)
        folder = target.parent
        if not folder.is_dir():
            raise FileNotFoundError(
                f"folder {os.fspath(folder) or '.'} does not exist"
                if not folder.exists()
                else f"{os.fspath(folder)} is not a folder"
            )
        if target.is_dir():
            raise IsADirectoryError("is a directory")
        if target.exists() and not target.is_file():  # a device or a FIFO: write into it
            with open(target, "wb") as fh:
                fh.write(data)
            return
        for _ in range(100):
            tmp = os.path.join(folder, f".{target.name}.{secrets.token_hex(4)}.tmp")
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
                break
            except FileExistsError:
                tmp = None
        else:
            raise FileExistsError("no free temporary file name in the folder")
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        with contextlib.suppress(OSError):  # a replaced file keeps its permission bits
            os.chmod(tmp, stat.S_IMODE(os.stat(target).st_mode))
        os.replace(tmp, target)
        tmp = None
    except (OSError, UnicodeEncodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        err = WriteError(f"{path}: cannot write: {reason} (nothing was written)")
        err.errno = getattr(exc, "errno", None)
        raise err from None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def install_file(tmp: str | os.PathLike[str], path: str | os.PathLike[str]) -> None:
    """Put the finished temporary file ``tmp`` (in the folder of ``path``) at ``path`` as
    :func:`atomic_write_text` does: a symbolic link is followed (the link stays), a target that
    exists and is not a regular file (``/dev/null``, a FIFO) is written in place from ``tmp``
    and never renamed over, and a regular file is replaced in one step. ``tmp`` is gone
    afterwards, also on an error.

    Raises
    ------
    OSError
        From the copy or the rename (the caller names the path). Source: ours.
    """
    target = Path(path)
    if target.is_symlink():
        target = Path(os.path.realpath(target))
    try:
        if target.exists() and not target.is_file():  # a device or a FIFO: write into it
            with open(tmp, "rb") as src, open(target, "wb") as dst:
                while chunk := src.read(1 << 20):
                    dst.write(chunk)
            return
        with contextlib.suppress(OSError):  # a replaced file keeps its permission bits
            os.chmod(tmp, stat.S_IMODE(os.stat(target).st_mode))
        os.replace(tmp, target)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
