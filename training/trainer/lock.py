"""One trainer at a time in a run directory: an OS lock on ``OUT/.lock``.

``pisti-train`` (fresh, ``--fresh`` or ``--resume``) takes the lock before it changes anything
in OUT and holds it until it ends. The lock is ``flock`` on the file: the operating system
releases it when the process ends however it ends, so a lock left by a killed process (even
``SIGKILL``) never blocks the next run. The file holds the holder's process id, which a refused
second trainer names; the holder removes the file when it releases the lock.

A second trainer into a run in use is refused at once with `RunInUse` (a
``ValueError``): it never waits, and never touches the run.
"""

from __future__ import annotations

import os
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - a platform without flock (Windows): no lock, as before
    fcntl = None  # type: ignore[assignment]

LOCK_FILE = ".lock"


class RunInUse(ValueError):
    """The run directory is held by another live process."""


class RunLock:
    """The lock of run directory ``out`` (which must exist). `acquire` takes it or raises
    `RunInUse`; `release` (or leaving a ``with`` block) gives it back."""

    def __init__(self, out: str | os.PathLike) -> None:
        self.out = Path(out)
        self.path = self.out / LOCK_FILE
        self._fd: int | None = None

    def acquire(self) -> "RunLock":
        if fcntl is None or self._fd is not None:
            return self
        while True:
            try:  # O_NOFOLLOW: a symbolic link planted at the lock's name is refused, never followed
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
            except OSError as error:
                raise RunInUse(f"cannot lock {self.out} ({self.path}: {error.strerror or error})") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _holder(fd)
                os.close(fd)
                who = f"process {holder}" if holder else "another process"
                raise RunInUse(
                    f"{self.out} is in use by another pisti-train ({who}): wait for it to end (or stop it), "
                    "or train into another --out"
                ) from None
            # The holder before us may have removed the file between our open and our lock: a
            # lock on a file no longer at that name guards nothing, so take the one that is there.
            try:
                same = os.path.samestat(os.fstat(fd), os.lstat(self.path))
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd
        return self

    def release(self) -> None:
        """Give the lock back and remove the file (while still holding it: a process that opened
        the file meanwhile finds it gone and opens the new one)."""
        if self._fd is None:
            return
        try:
            if os.path.samestat(os.fstat(self._fd), os.lstat(self.path)):
                os.unlink(self.path)
        except OSError:
            pass  # the directory went away or is read-only now: the OS lock goes with the descriptor
        os.close(self._fd)
        self._fd = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def __enter__(self) -> "RunLock":
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def _holder(fd: int) -> int | None:
    """The process id the lock file names (``None`` if it names none yet)."""
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None
