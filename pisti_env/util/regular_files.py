"""Files read as untrusted: regular files at their own names, never followed through a
symbolic link, and a file's SHA-256.

A link inside a checkpoint or a run could lead out of it (``metadata.json`` pointing at
``/proc/self/environ``, ``metrics.csv`` at a file elsewhere that would get rows appended) or
loop; a FIFO would block a reader and a device never end. So a file read from a checkpoint, a
run or a report must be a regular file found at that name (`regular_file`, `read_regular`); a
directory kept must be a directory, not a link to one. The directory the user names (``--out``,
a checkpoint path) may itself be a link: the user chose it. The policy loader
(`pisti_env.policies`) reads checkpoints through this module; the trainer
(``training.trainer.paths`` re-exports it), the benchmark and the learning protocol read their
runs and reports through it too, as `pisti_env.util.atomic` is the one writer.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import Callable


Refusal = Callable[[str], Exception]
READ_CHUNK = 1 << 20  # bytes read at a time when hashing a file


def file_kind(mode: int) -> str:
    """What a path's ``st_mode`` says it is, for messages: ``"a directory"``, ``"a FIFO (named
    pipe)"``, ``"a character device"``, ... (``"a regular file"`` for one)."""
    if stat.S_ISREG(mode):
        return "a regular file"
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "a special file"


def entry_kind(path: str | os.PathLike) -> str | None:
    """What is at ``path`` without following a link: ``"file"``, ``"directory"``, ``"link"``,
    or the kind of anything else (``"a FIFO"``...); ``None`` when nothing is there."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as error:  # e.g. a component that is not a directory
        return f"unreadable ({error.strerror})"
    if stat.S_ISLNK(mode):
        return "link"
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "directory"
    return file_kind(mode)


def describe(kind: str | None) -> str:
    """An `entry_kind` in words, for messages (``None``: ``"missing"``)."""
    return {"link": "a symbolic link", "file": "a regular file", "directory": "a directory", None: "missing"}.get(kind, kind)


def regular_file(path: str | os.PathLike, refuse: Refusal = ValueError) -> Path:
    """``path`` if it is a regular file (not a link to one); else ``refuse(message)`` is raised."""
    kind = entry_kind(path)
    if kind != "file":
        raise refuse(f"{path} is {describe(kind)}, not a regular file" + (
            " (links inside a checkpoint or a run are not followed)" if kind == "link" else ""))
    return Path(path)


def read_regular(path: str | os.PathLike, limit: int, refuse: Refusal = ValueError) -> bytes:
    """The bytes of the regular file ``path`` (at most ``limit``: a larger file is refused
    before it is read), opened without following a link and without blocking on a FIFO."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise refuse(f"{path} is missing") from None
    except OSError as error:  # ELOOP: a link (O_NOFOLLOW); EACCES...
        kind = entry_kind(path)
        problem = f"is {describe(kind)}, not a regular file" if kind != "file" else f"cannot be read ({error.strerror})"
        raise refuse(f"{path} {problem}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise refuse(f"{path} is {file_kind(info.st_mode)}, not a regular file")
        if info.st_size > limit:
            raise refuse(f"{path} is corrupt: {info.st_size} bytes, more than the {limit} it may have")
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, limit + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as error:
        raise refuse(f"{path} cannot be read ({error.strerror})") from None
    finally:
        os.close(fd)
    if size > limit:  # grew while read, or a file whose size stat does not tell (procfs)
        raise refuse(f"{path} is corrupt: more than the {limit} bytes it may have")
    return b"".join(chunks)


def sha256(path: str | os.PathLike) -> str:
    """The SHA-256 hex digest of the file at ``path``, read in chunks (a checkpoint's tensor
    files record theirs in its metadata)."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(READ_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()
