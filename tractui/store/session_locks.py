"""Which sessions a tractui has open: each window holds a shared lock on its session's file.

Deleting a session takes the lock alone or is refused, so a window is never left writing to
a session another window deleted (every send then failed). The operating system lets go of a
dead process's locks, so a crash leaves nothing held. Where the locks cannot be taken (no
``fcntl``, an unwritable folder) nothing is guarded, as before.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no guard
    fcntl = None  # type: ignore[assignment]


HOLD_WAIT = 0.5  # seconds a window opening a session waits for a deletion of it under way
HOLD_RETRY = 0.01


class SessionLocks:
    """The lock files of one history database, in a folder beside it (``history.db-open``)."""

    def __init__(self, db_path: Path) -> None:
        self.folder = db_path.with_name(db_path.name + "-open")
        self._held: tuple[str, int] | None = None

    @property
    def held(self) -> str | None:
        """The session this window holds (``None``: none, or none could be held)."""
        return self._held[0] if self._held else None

    def hold(self, session_id: str | None) -> None:
        """Hold ``session_id`` (shared with other windows on it), letting go of the one held before."""
        if session_id == self.held:
            return
        self.release()
        if session_id is not None and (fd := self._locked(session_id, shared=True)) is not None:
            self._held = (session_id, fd)

    def release(self) -> None:
        """Let go of the held session; its file goes when no other window holds it."""
        held, self._held = self._held, None
        if held is not None:
            session_id, fd = held
            self._close(fd, self._path(session_id))

    @contextlib.contextmanager
    def alone(self, session_id: str) -> Iterator[bool]:
        """While open: whether no other window holds ``session_id`` (none can take it until the
        end); ``True`` where locks cannot be taken."""
        try:
            fd = self._locked(session_id, shared=False)
        except BlockingIOError:
            yield False
            return
        if fd is None:
            yield True
            return
        try:
            yield True
        finally:
            self._close(fd, self._path(session_id))

    def _path(self, session_id: str) -> Path:
        return self.folder / session_id

    def _locked(self, session_id: str, *, shared: bool) -> int | None:
        """An open file of the session holding its lock, shared (waiting out a deletion's moment,
        up to ``HOLD_WAIT``: ``None`` after it) or alone (``BlockingIOError`` at once when another
        holds it); ``None`` where locks cannot be taken. A file removed while this one waited is
        opened again: the lock taken is always on the file the path names."""
        if fcntl is None:
            return None
        path = self._path(session_id)
        try:
            self.folder.mkdir(mode=0o700, exist_ok=True)
        except OSError:
            return None
        while True:
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
            except OSError:
                return None
            try:
                _take(fd, shared=shared)
            except BlockingIOError:
                os.close(fd)
                if shared:
                    return None
                raise
            except OSError:
                os.close(fd)
                return None
            if _same_file(fd, path):
                return fd
            os.close(fd)

    @staticmethod
    def _close(fd: int, path: Path) -> None:
        """Close ``fd``, removing its file first when no other window holds it."""
        assert fcntl is not None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            pass  # another window holds it: the file stays theirs
        else:
            with contextlib.suppress(OSError):
                path.unlink()
        os.close(fd)


def _take(fd: int, *, shared: bool) -> None:
    """Lock ``fd``: alone at once or ``BlockingIOError``; shared within ``HOLD_WAIT`` (a deletion
    holds the lock alone for a moment; the window opening waits on the event loop, so not long)."""
    assert fcntl is not None
    if not shared:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return
    deadline = time.monotonic() + HOLD_WAIT
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(HOLD_RETRY)


def _same_file(fd: int, path: Path) -> bool:
    """Whether ``fd`` is still the file at ``path`` (a deletion may have removed it meanwhile)."""
    try:
        return os.fstat(fd).st_ino == path.stat().st_ino
    except OSError:
        return False
