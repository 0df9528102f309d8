"""Files written whole or not at all: the one atomic writer of the project.

Every file a command writes (a replay page, a picture, a checkpoint's files, an export, a
report, a run's config) goes through [`write_atomic`][pisti_env.util.atomic.write_atomic]: the content is written to a
temporary file created exclusively beside the target (a fresh unique name, `O_CREAT | O_EXCL`
through `tempfile.mkstemp`, so a link or file planted at any name is never followed or
overwritten), flushed to disk, given the permissions of any new file (`0o666` less the
umask: 0644 under the usual umask 022, the same for every file the project writes) and renamed
over the target in one step. A reader sees the old file or the new one, never half of one; a
write that fails, however it fails, leaves the target as it was and no temporary behind, and
its error names the target (never the temporary).

`training.trainer.atomic` builds the checkpoints' directories on this module; `pisti_env` code
(the replay page, pictures) uses it directly, since `pisti_env` never imports `training`.
"""

from __future__ import annotations

import errno
import os
import re
import tempfile
from pathlib import Path
from typing import Callable

STRAY = re.compile(r"^\..+\.(tmp|old|link)-[A-Za-z0-9_]+$")  # what a killed write leaves
NAME_IN_TEMPORARY = 100  # characters of the target's name kept in its temporary's name


def umask() -> int:
    """The process's umask (read by setting it and setting it back)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


def file_mode() -> int:
    """The permissions of every file the project writes: those of any new file, `0o666` less
    the umask (0644 under the usual umask 022)."""
    return 0o666 & ~umask()


def fsync_dir(path: str | os.PathLike) -> None:
    """Flush a directory's entries to disk (where the platform can)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - a platform without directory descriptors
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def _fsync_file(path: str | os.PathLike) -> None:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def temporary_prefix(name: str, kind: str = "tmp") -> str:
    """The prefix of a temporary beside a file called `name`: `.NAME.tmp-` (the name cut to
    `NAME_IN_TEMPORARY` characters, so that a long name still leaves room for the suffix)."""
    return f".{name[:NAME_IN_TEMPORARY]}.{kind}-"


def write_atomic(path: str | os.PathLike, write: Callable[[str], None]) -> None:
    """Write one file whole or not at all.

    Args:
        path: the file to write (its folder is created). A link at `path` is replaced by the
            file, never followed.
        write: called with the temporary's path (a new empty file, created exclusively beside
            `path`, that only this call uses) to write the content there.

    Raises:
        OSError: the write failed (a full disk, a name the file system refuses, content that
            cannot be encoded...): the error names `path` (shown escaped where it holds a lone
            surrogate), never the temporary; `path` is left as it was and the temporary removed.
    """
    path = Path(path)
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=temporary_prefix(path.name), dir=path.parent)
        os.close(fd)
        write(tmp)
        _fsync_file(tmp)
        os.chmod(tmp, file_mode())  # mkstemp makes it owner-only: every written file is shared alike
        os.replace(tmp, path)
        tmp = None
    except OSError as error:
        raise OSError(error.errno, error.strerror or str(error), str(path)) from None
    except UnicodeError as error:  # a name or content the encoding refuses (a lone surrogate)
        raise OSError(errno.EINVAL, f"cannot be written ({error.reason})", str(path)) from None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """[`write_atomic`][pisti_env.util.atomic.write_atomic] of `text` as UTF-8."""
    write_atomic(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))


def write_bytes_atomic(path: str | os.PathLike, data: bytes) -> None:
    """[`write_atomic`][pisti_env.util.atomic.write_atomic] of `data`."""
    write_atomic(path, lambda tmp: Path(tmp).write_bytes(data))
