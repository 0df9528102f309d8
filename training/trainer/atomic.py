"""Atomic files and directories: a reader sees the old version or the new one, never a mixture.

:func:`write_atomic` writes one file through a temporary beside it, flushed to disk, then
renamed into place. :func:`publish_directory` moves a complete temporary directory into place
in one step (a rename, or an exchange with the old one). A killed write leaves only a
temporary ``.NAME.tmp-*`` (or ``.NAME.old-*``, ``.NAME.link-*``), which :func:`remove_strays`
clears. Nothing here knows what a checkpoint holds.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Callable

STRAY = re.compile(r"^\..+\.(tmp|old|link)-[A-Za-z0-9_]+$")  # what a killed write leaves


def fsync_dir(path: Path) -> None:
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
    with open(path, "rb") as f:
        os.fsync(f.fileno())


def umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def remove_strays(parent: str | os.PathLike, name: str | None = None) -> list[Path]:
    """Remove what killed saves left in ``parent`` (temporary directories, files and links
    named ``.NAME.tmp-*``, ``.NAME.old-*``, ``.NAME.link-*``; only NAME's if given); returns them."""
    parent = Path(parent)
    removed = []
    if not parent.is_dir():
        return removed
    for entry in parent.iterdir():
        if not STRAY.match(entry.name) or (name is not None and not entry.name.startswith(f".{name}.")):
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)
        removed.append(entry)
    return removed


def write_atomic(path: str | os.PathLike, write: Callable[[str], None]) -> None:
    """Write one file through ``write(temporary_path)``, flush it to disk and move it into
    place (atomic on POSIX), with the permissions of any new file. An ``OSError`` (a full
    disk...) names ``path``, never the temporary, and leaves ``path`` as it was."""
    path = Path(path)
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.tmp-", dir=path.parent)
        os.close(fd)
        write(tmp)
        _fsync_file(tmp)
        os.chmod(tmp, 0o666 & ~umask())  # mkstemp makes it owner-only; a checkpoint is shared like any file
        os.replace(tmp, path)
    except OSError as error:
        raise OSError(error.errno, error.strerror or str(error), str(path)) from None
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)



def publish_directory(tmp: Path, target: Path) -> None:
    """Move the complete directory ``tmp`` to ``target`` in one atomic step: a rename, or
    (``target`` a directory already) an exchange of the two (``renameat2``, Linux) after which
    the old one is removed. Where the exchange is unsupported, the old directory is moved aside
    first: a kill between the two renames leaves no ``target``, the old copy in
    ``.NAME.old-*`` (removed by the next save)."""
    if target.is_dir() and not target.is_symlink():
        if _exchange(tmp, target):
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
            os.rename(target, old / "previous")
            os.rename(tmp, target)
            shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(tmp, target)  # a link (or nothing) there: replaced in one step
    fsync_dir(target.parent)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (Linux ``renameat2(RENAME_EXCHANGE)``); ``False`` where the
    system or the file system cannot."""
    import ctypes

    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    return False  # EINVAL / ENOSYS: not supported here (the fallback then renames)



def remove_directory(directory: Path) -> None:
    """Remove a published directory: renamed to a temporary name first (one step), so that a
    kill during the removal never leaves a half-deleted directory under its name."""
    doomed = directory.parent / f".{directory.name}.old-{uuid.uuid4().hex}"
    os.rename(directory, doomed)
    shutil.rmtree(doomed, ignore_errors=True)
