"""Opening the history database: an integrity check, WAL, a busy timeout, owner-only files, migrations.

Every failure to open (damaged pages, corrupt file, lock held too long,
unwritable folder) becomes a ``StoreError`` whose one-line message names the
file; nothing here ever deletes or rewrites a database it could not read. An
existing file is checked read-only (``PRAGMA quick_check``) before it is
opened for writing, so a damaged one is never touched, and the message says
how to move it aside so that the next start makes a new one beside it.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import sqlite3
from pathlib import Path

from tractui.errors import StoreError

BUSY_TIMEOUT_MS = 10_000

# Each entry migrates from version i to i + 1; never edit a released entry, append.
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        head TEXT,
        title TEXT NOT NULL DEFAULT '',
        metadata TEXT NOT NULL DEFAULT '{}'
    );
    CREATE TABLE commits (
        id TEXT PRIMARY KEY,
        parent_id TEXT,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        kind TEXT NOT NULL CHECK (kind IN ('user', 'reasoning', 'assistant', 'tool', 'summary', 'system')),
        content TEXT NOT NULL,
        usage TEXT,
        provider TEXT,
        model TEXT,
        profile TEXT,
        created_at REAL NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('complete', 'interrupted', 'error')),
        metadata TEXT NOT NULL DEFAULT '{}'
    );
    CREATE INDEX commits_by_session ON commits(session_id, id);
    CREATE INDEX commits_by_parent ON commits(parent_id);
    CREATE INDEX sessions_by_update ON sessions(updated_at);
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)


def _prepare_folder(folder: Path, db_path: Path) -> None:
    if folder.is_dir():
        return
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"cannot create the history folder for {db_path}: {exc.strerror or exc}") from None


def _prepare_file(path: Path) -> None:
    """Create the database file owner-only before SQLite touches it (WAL/SHM inherit its mode)."""
    if path.exists():
        return
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        return
    except OSError as exc:
        raise StoreError(f"cannot create history database {path}: {exc.strerror or exc}") from None
    os.close(fd)


def move_aside(path: Path) -> str:
    """The shell command that moves ``path`` (with its WAL and shared-memory files) out of tractui's way."""
    aside = path.with_name(path.name + ".damaged")
    moves = [(path, aside)]
    for suffix in ("-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        if side.exists():
            moves.append((side, aside.with_name(aside.name + suffix)))
    return " && ".join(f"mv {shlex.quote(str(a))} {shlex.quote(str(b))}" for a, b in moves)


def _damaged(path: Path, detail: str) -> StoreError:
    return StoreError(
        f"history database {path} is damaged ({detail}); it was left untouched. "
        f"To start a new one beside it: {move_aside(path)}"
    )


def _wal_empty(path: Path) -> bool:
    """No write is waiting in the WAL: it is gone, or empty (left by a process that was killed
    after its last checkpoint)."""
    try:
        return path.with_name(path.name + "-wal").stat().st_size == 0
    except FileNotFoundError:
        return True
    except OSError:
        return False


def _signature(path: Path) -> str:
    """What changes whenever anything rewrites the file (its size, times and inode)."""
    st = path.stat()
    return f"{st.st_size} {st.st_mtime_ns} {st.st_ctime_ns} {st.st_ino}\n"


def _clean_marker(path: Path) -> Path:
    return path.with_name(path.name + "-clean")


def mark_clean(path: Path) -> None:
    """After the last connection closed with nothing left in the WAL: the file as SQLite left it,
    which the next start need not check again while it is unchanged (``needs_check``)."""
    marker = _clean_marker(path)
    try:
        if not _wal_empty(path):
            return  # another process still has it open, or writes are waiting: it checks next time
        partial = marker.with_name(marker.name + ".part")
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as out:
            out.write(_signature(path))
        os.replace(partial, marker)
    except OSError:
        return  # an unwritable folder: the next start checks, as before


def needs_check(path: Path) -> bool:
    """Whether ``path`` may have changed since tractui last closed it cleanly (then it is checked)."""
    try:
        return not _wal_empty(path) or _clean_marker(path).read_text(encoding="ascii") != _signature(path)
    except (OSError, ValueError):
        return True


def check_integrity(path: Path) -> None:
    """``PRAGMA quick_check`` on an existing database, read-only: damage is found before anything writes.

    Skipped when the file is exactly as tractui left it at a clean close (``needs_check``): the
    check reads the whole file, and so grew with the history. Without a WAL file no other process
    has the database open, so it is read as immutable (no side files are created); with one,
    read-only through the WAL.
    """
    if not path.exists() or path.stat().st_size == 0 or not needs_check(path):
        return
    wal = path.with_name(path.name + "-wal").exists()
    uri = f"{path.resolve().as_uri()}?{'mode=ro' if wal else 'immutable=1'}"
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000)
    except sqlite3.Error:
        return  # not openable read-only (a folder without access): the read-write open says why
    try:
        rows = conn.execute("PRAGMA quick_check(1)").fetchall()
    except sqlite3.DatabaseError as exc:
        text = str(exc)
        if "not a database" in text or "malformed" in text:
            raise _damaged(path, text) from None
        return  # locked, or unreadable for another reason: the read-write open says why
    finally:
        conn.close()
    if rows != [("ok",)]:
        raise _damaged(path, " ".join(str(rows[0][0]).split()) if rows else "quick_check found problems")


def _explain(exc: sqlite3.Error) -> str:
    text = str(exc)
    if "not a database" in text or "malformed" in text:
        return "the file is not a readable tractui database (corrupt?); it was left untouched"
    if "locked" in text or "busy" in text:
        return f"the database stayed locked for more than {BUSY_TIMEOUT_MS // 1000} s by another process"
    if "readonly" in text or "unable to open" in text:
        return "the file or its folder is not writable"
    return text


def connect(path: Path) -> sqlite3.Connection:
    """Open (creating if needed) and migrate the database at ``path``."""
    path = Path(path)
    _prepare_folder(path.parent, path)
    check_integrity(path)
    with contextlib.suppress(OSError):  # open for writing: no longer as it was left (a crash must not find it)
        _clean_marker(path).unlink(missing_ok=True)
    _prepare_file(path)
    try:
        conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open history database {path}: {_explain(exc)}") from None
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise sqlite3.OperationalError(f"cannot switch to WAL mode (got {mode})")
        # NORMAL is durable against a killed process in WAL mode; only a power cut may drop the last commits.
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        _migrate(conn)
    except sqlite3.Error as exc:
        conn.close()
        raise StoreError(f"cannot open history database {path}: {_explain(exc)}") from None
    return conn


def _migrate(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
    row = conn.execute("SELECT version FROM schema_version").fetchone()
    current = row[0] if row else 0
    if current > SCHEMA_VERSION:
        raise sqlite3.DatabaseError(
            f"the database is schema v{current}, newer than this tractui (v{SCHEMA_VERSION}); upgrade tractui"
        )
    if current == SCHEMA_VERSION:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        row = conn.execute("SELECT version FROM schema_version").fetchone()
        current = row[0] if row else 0  # another process may have migrated while we waited
        for script in MIGRATIONS[current:]:
            for statement in script.split(";"):
                if statement.strip():
                    conn.execute(statement)
        conn.execute("DELETE FROM schema_version")
        conn.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
