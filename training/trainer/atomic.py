"""Atomic files and directories: a reader sees the old version or the new one, never a mixture.

`write_atomic` (from `pisti_env.util.atomic`, the project's one atomic file writer)
writes one file through a temporary created exclusively beside it, flushed to disk, then
renamed into place. `publish_directory` moves a complete temporary directory into place
in one step (a rename, or an exchange with the old one). A killed write leaves only a
temporary ``.NAME.tmp-*`` (or ``.NAME.old-*``, ``.NAME.link-*``), which `remove_strays`
clears. Nothing here knows what a checkpoint holds.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from pathlib import Path

# The one atomic file writer (and its stray pattern, umask and directory flush) lives in
# pisti_env.util.atomic, shared by every writer of the project; the directories of a checkpoint are
# built on it here.
from pisti_env.util.atomic import STRAY, file_mode, fsync_dir, temporary_prefix, umask, write_atomic  # noqa: E402,F401
# A file's SHA-256 (what a checkpoint's metadata records of its tensor files): the policy loader's.
from pisti_env.util.regular_files import sha256  # noqa: F401


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
