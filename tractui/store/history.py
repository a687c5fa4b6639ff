"""Sessions as chains of commits, like a git log, in one SQLite file.

One exchange reads ``user → reasoning → assistant``; retrying or editing makes
a sibling branch and moves the session's head, so nothing is ever deleted.
Summary commits (written by compaction) name the first and last commit they
replace in ``metadata["replaces"]``; the originals stay.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import TypeAdapter

from tractui.core.content import Content, Usage
from tractui.core.heap import gc_paused
from tractui.errors import SessionGone, StoreError
from tractui.store.db import connect, mark_clean
from tractui.store.session_locks import SessionLocks

Kind = Literal["user", "reasoning", "assistant", "tool", "summary", "system"]
Status = Literal["complete", "interrupted", "error"]
KINDS: tuple[str, ...] = ("user", "reasoning", "assistant", "tool", "summary", "system")
STATUSES: tuple[str, ...] = ("complete", "interrupted", "error")

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_id_lock = threading.Lock()
_last_id: tuple[int, int] = (0, 0)


def new_id() -> str:
    """A ULID: 48-bit millisecond time + 80 random bits, monotonic within a process, sortable."""
    global _last_id
    with _id_lock:
        ms = time.time_ns() // 1_000_000
        last_ms, last_rand = _last_id
        if ms <= last_ms:
            ms, rand = last_ms, last_rand + 1
        else:
            rand = int.from_bytes(os.urandom(10), "big") >> 1  # headroom for increments
        _last_id = (ms, rand)
    value = (ms << 80) | (rand & ((1 << 80) - 1))
    return "".join(_CROCKFORD[(value >> shift) & 31] for shift in range(125, -1, -5))


@dataclass(slots=True, frozen=True)
class Commit:
    """One stored message. Frozen and shared: the store hands the same object to every reader
    until the commit changes, so nothing may mutate it (its content included)."""

    id: str
    parent_id: str | None
    session_id: str
    kind: Kind
    content: Content
    usage: Usage | None = None
    provider: str | None = None
    model: str | None = None
    profile: str | None = None
    created_at: float = 0.0
    status: Status = "complete"
    metadata: dict[str, Any] = field(default_factory=dict)
    # what readers derived from this commit (a merged reply), dropped with the object when it changes
    memo: dict[Any, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "parent_id": self.parent_id,
            "session_id": self.session_id,
            "kind": self.kind,
            "content": self.content.model_dump(mode="json"),
            "usage": self.usage.model_dump(mode="json") if self.usage else None,
            "provider": self.provider,
            "model": self.model,
            "profile": self.profile,
            "created_at": self.created_at,
            "status": self.status,
            "metadata": self.metadata,
        }


@dataclass(slots=True)
class SessionInfo:
    id: str
    created_at: float
    updated_at: float
    head: str | None
    title: str
    message_count: int = 0
    model: str | None = None


_COMMIT_COLUMNS = (
    "id, parent_id, session_id, kind, content, usage, provider, model, profile, created_at, status, metadata"
)
_COLUMN_INDEX = {name: i for i, name in enumerate(_COMMIT_COLUMNS.split(", "))}
_QUALIFIED_COLUMNS = ", ".join(f"commits.{name}" for name in _COLUMN_INDEX)

# One validator per shape, built once: a long chain's JSON is validated in a
# single call (one JSON array) instead of one call per commit.
_CONTENTS = TypeAdapter(list[Content])
_USAGES = TypeAdapter(list[Usage | None])


def _rows_to_commits(rows: list[tuple[Any, ...]]) -> list[Commit]:
    """Commits from database rows; contents and usages are each validated as one JSON array."""
    if not rows:
        return []
    with gc_paused():
        contents = _CONTENTS.validate_json("[" + ",".join([r[4] for r in rows]) + "]")
        usages = _USAGES.validate_json("[" + ",".join([r[5] or "null" for r in rows]) + "]")
        return [
            Commit(
                id=r[0],
                parent_id=r[1],
                session_id=r[2],
                kind=r[3],
                content=content,
                usage=usage,
                provider=r[6],
                model=r[7],
                profile=r[8],
                created_at=r[9],
                status=r[10],
                metadata=json.loads(r[11]) if r[11] != "{}" else {},
            )
            for r, content, usage in zip(rows, contents, usages, strict=True)
        ]


SESSIONS_KEPT = 4  # sessions whose commits stay in memory: a window reads one or two
REPLY_LOOKBACK = 16  # commits read back from a head for its last reply before the whole branch


@dataclass(slots=True)
class _Known:
    """One session's commits as last read or written through this store's connection."""

    # every commit of the session: its row as stored, or only (id, parent) once read as a commit
    rows: dict[str, tuple[Any, ...]]
    commits: dict[str, Commit] = field(default_factory=dict)  # those read as commits so far
    walked: tuple[str, list[str]] | None = None  # the last chain walked: its head, its ids root first


def _fold(text: str | None) -> str:
    """SQLite's LIKE folds ASCII letters only: searches fold in Python, so "über" finds "Über"."""
    return (text or "").casefold()


def _like_pattern(text: str) -> str:
    """``text`` anywhere, its ``%``, ``_`` and ``\\`` taken as characters (``ESCAPE '\\'``)."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _title_of(content: Content) -> str:
    line = " ".join(content.text.split())
    return line[:80] + ("…" if len(line) > 80 else "")


class HistoryStore:
    """The history database; one connection, safe to share across processes (WAL + busy timeout)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._conn = connect(self.path)
        # each session's head as this store (this process) last saw it or left it: another tractui on the
        # same file may move the head, and a window must go on along its own branch, not the other's
        self._heads: dict[str, str] = {}
        self._known: dict[str, _Known] = {}  # the sessions read lately, most recent last
        self._version: int | None = None  # the file's data_version when they were read
        self._conn.create_function("casefold", 1, _fold, deterministic=True)
        self._locks = SessionLocks(self.path)

    def hold(self, session_id: str | None) -> None:
        """Mark ``session_id`` as open in this window (none: no session), so that no other
        window deletes it meanwhile."""
        self._locks.hold(session_id)

    def seen_head(self, session_id: str) -> str | None:
        """The head of ``session_id`` as this process last saw or left it (``None``: not yet)."""
        return self._heads.get(session_id)

    def seen_chain(self, session_id: str, last: int | None = None) -> list[Commit]:
        """The session's branch at ``seen_head`` (the file's head when not seen yet), root → head;
        only its ``last`` commits when given."""
        return self.chain(session_id, head=self.seen_head(session_id), last=last)

    def see_head(self, session_id: str) -> str | None:
        """Take the session's head as it is in the file now as this process's."""
        head = self.head(session_id)
        if head is None:
            self._heads.pop(session_id, None)
        else:
            self._heads[session_id] = head
        return head

    def last_reply(self, session_id: str) -> Commit | None:
        """The newest reply on the session's branch at ``seen_head``: where a resumed session
        goes on from. Its end is read alone; the whole branch only when that end holds none."""
        end = self.seen_chain(session_id, last=REPLY_LOOKBACK)
        if len(end) == REPLY_LOOKBACK and not any(c.kind == "assistant" for c in end):
            end = self.seen_chain(session_id)
        return next((c for c in reversed(end) if c.kind == "assistant"), None)

    def close(self) -> None:
        self._locks.release()
        self._conn.close()
        mark_clean(self.path)

    def __enter__(self) -> HistoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One immediate transaction: the write lock is taken up front, so reads inside it are current
        and two processes never deadlock upgrading a read lock."""
        conn = self._conn
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:  # SQLite has already rolled back after SQLITE_FULL and the like
                    conn.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            raise StoreError(f"cannot write history database {self.path}: {exc}") from None

    def _write(self, statements: Iterable[tuple[str, tuple[Any, ...]]]) -> None:
        with self._transaction() as conn:
            for sql, params in statements:
                conn.execute(sql, params)

    # -- sessions ----------------------------------------------------------
    def create_session(self, title: str = "", *, session_id: str | None = None) -> str:
        sid = session_id or new_id()
        now = time.time()
        self._write(
            [
                (
                    "INSERT INTO sessions (id, created_at, updated_at, head, title) VALUES (?, ?, ?, NULL, ?)",
                    (sid, now, now, title),
                )
            ]
        )
        return sid

    def session(self, session_id: str) -> SessionInfo | None:
        row = self._conn.execute(
            "SELECT id, created_at, updated_at, head, title FROM sessions WHERE id = ?", (session_id,)
        ).fetchone()
        return self._info(row) if row else None

    def _info(self, row: tuple[Any, ...]) -> SessionInfo:
        info = SessionInfo(*row)
        if info.head:
            counts = self._conn.execute(
                """
                WITH RECURSIVE chain(id, parent_id, kind, model) AS (
                    SELECT id, parent_id, kind, model FROM commits WHERE id = ?
                    UNION  -- not UNION ALL: a parent cycle ends when a commit comes round again
                    SELECT c.id, c.parent_id, c.kind, c.model FROM commits c JOIN chain ON c.id = chain.parent_id
                )
                SELECT SUM(kind IN ('user', 'assistant', 'tool')),
                       (SELECT model FROM chain WHERE model IS NOT NULL LIMIT 1)
                FROM chain
                """,
                (info.head,),
            ).fetchone()
            info.message_count = counts[0] or 0
            info.model = counts[1]
        return info

    def list_sessions(self, limit: int | None = None) -> list[SessionInfo]:
        """Newest activity first."""
        sql = "SELECT id, created_at, updated_at, head, title FROM sessions ORDER BY updated_at DESC, id DESC"
        rows = self._conn.execute(sql + (" LIMIT ?" if limit else ""), (limit,) if limit else ()).fetchall()
        return [self._info(r) for r in rows]

    def search_sessions(self, text: str, limit: int | None = None) -> list[SessionInfo]:
        """Sessions whose title holds ``text`` (any case) or whose id starts with it, newest activity
        first; blank ``text`` lists them all. Matched in SQL: no message is read."""
        words = " ".join(text.split())  # titles are stored on one line, single-spaced
        if not words:
            return self.list_sessions(limit)
        sql = (
            "SELECT id, created_at, updated_at, head, title FROM sessions"
            " WHERE casefold(title) LIKE ? ESCAPE '\\' OR substr(id, 1, ?) = ?"
            " ORDER BY updated_at DESC, id DESC"
        )
        params: tuple[Any, ...] = (_like_pattern(_fold(words)), len(words), words.upper())
        rows = self._conn.execute(sql + (" LIMIT ?" if limit else ""), params + ((limit,) if limit else ())).fetchall()
        return [self._info(r) for r in rows]

    def delete_session(self, session_id: str) -> None:
        """Remove the session and every commit of it (the schema cascades), in one transaction;
        refused while another window has it open. This window's own hold is let go of for it, and
        taken again when refused: the session is still open here."""
        own = self._locks.held == session_id
        if own:
            self._locks.release()
        try:
            with self._locks.alone(session_id) as alone:
                if not alone:
                    raise StoreError(
                        f"session '{session_id[:8]}' is open in another tractui window; close it or /new there "
                        "first (nothing was deleted)"
                    )
                with self._transaction() as conn:
                    if conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,)).rowcount == 0:
                        raise StoreError(f"no session '{session_id}' in {self.path}")
        except StoreError:
            if own:
                self._locks.hold(session_id)
            raise
        self._heads.pop(session_id, None)
        self._known.pop(session_id, None)

    def latest_session(self) -> str | None:
        row = self._conn.execute("SELECT id FROM sessions ORDER BY updated_at DESC, id DESC LIMIT 1").fetchone()
        return row[0] if row else None

    def resolve_session(self, ref: str | None) -> str:
        """A full id from ``ref`` (a unique prefix, case-insensitive) or the latest; ``StoreError`` if none.

        The prefix is compared as text: ``%`` and ``_`` are characters no id holds, not LIKE's wildcards."""
        typed = (ref or "").strip()  # what the user wrote, for the message
        ref = typed.upper()
        if not ref:
            latest = self.latest_session()
            if latest is None:
                raise StoreError(f"no sessions yet in {self.path}")
            return latest
        if self._conn.execute("SELECT 1 FROM sessions WHERE id = ?", (ref,)).fetchone():
            return ref
        rows = self._conn.execute(
            "SELECT id FROM sessions WHERE substr(id, 1, ?) = ? LIMIT 2", (len(ref), ref)
        ).fetchall()
        if not rows:
            raise StoreError(f"no session '{typed}' in {self.path}")
        if len(rows) > 1:
            raise StoreError(f"session prefix '{typed}' is ambiguous; give more characters")
        return str(rows[0][0])

    def head(self, session_id: str) -> str | None:
        row = self._conn.execute("SELECT head FROM sessions WHERE id = ?", (session_id,)).fetchone()
        if row is None:
            raise self._gone(session_id)
        head: str | None = row[0]
        return head

    def _gone(self, session_id: str) -> SessionGone:
        """A session this window had, no longer in the file."""
        return SessionGone(f"session '{session_id[:8]}' is no longer in {self.path} (deleted in another window)")

    # -- commits -----------------------------------------------------------
    def append(
        self,
        session_id: str,
        kind: Kind,
        content: Content,
        *,
        parent_id: str | Literal["head"] | None = "head",
        usage: Usage | None = None,
        provider: str | None = None,
        model: str | None = None,
        profile: str | None = None,
        status: Status = "complete",
        metadata: dict[str, Any] | None = None,
        move_head: bool = True,
    ) -> Commit:
        """Add a commit under ``parent_id`` (default: the session's head) and make it the head."""
        if kind not in KINDS:
            raise ValueError(f"unknown commit kind '{kind}'")
        if status not in STATUSES:
            raise ValueError(f"unknown commit status '{status}'")
        with self._transaction() as conn:
            parent = parent_id
            if parent == "head":  # read inside the write lock: another process may have just moved it
                row = conn.execute("SELECT head FROM sessions WHERE id = ?", (session_id,)).fetchone()
                if row is None:
                    raise self._gone(session_id)
                parent = row[0]
            commit = Commit(
                id=new_id(),
                parent_id=parent,
                session_id=session_id,
                kind=kind,
                content=content,
                usage=usage,
                provider=provider,
                model=model,
                profile=profile,
                created_at=time.time(),
                status=status,
                metadata=dict(metadata or {}),
            )
            sql, stored = self._insert(commit)
            conn.execute(sql, stored)
            if move_head:
                conn.execute(
                    "UPDATE sessions SET head = ?, updated_at = ? WHERE id = ?",
                    (commit.id, commit.created_at, session_id),
                )
            if kind == "user":
                conn.execute(
                    "UPDATE sessions SET title = ? WHERE id = ? AND title = ''", (_title_of(content), session_id)
                )
        if move_head:
            self._heads[session_id] = commit.id
        if (known := self._known.get(session_id)) is not None:
            known.rows[commit.id] = stored
        return commit

    @staticmethod
    def _insert(commit: Commit) -> tuple[str, tuple[Any, ...]]:
        return (
            f"INSERT INTO commits ({_COMMIT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                commit.id,
                commit.parent_id,
                commit.session_id,
                commit.kind,
                commit.content.model_dump_json(),
                commit.usage.model_dump_json() if commit.usage else None,
                commit.provider,
                commit.model,
                commit.profile,
                commit.created_at,
                commit.status,
                json.dumps(commit.metadata, ensure_ascii=False),
            ),
        )

    def update(
        self,
        commit_id: str,
        *,
        content: Content | None = None,
        status: Status | None = None,
        usage: Usage | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        """Rewrite a commit in place: the periodic flush of a streaming reply, and its final state."""
        if status is not None and status not in STATUSES:
            raise ValueError(f"unknown commit status '{status}'")
        changes: dict[str, Any] = {}  # column → the value stored
        if content is not None:
            changes["content"] = content.model_dump_json()
        if status is not None:
            changes["status"] = status
        if usage is not None:
            changes["usage"] = usage.model_dump_json()
        if metadata is not None:
            changes["metadata"] = json.dumps(metadata, ensure_ascii=False)
        if not changes:
            return
        assignments = ", ".join(f"{column} = ?" for column in changes)
        self._write([(f"UPDATE commits SET {assignments} WHERE id = ?", (*changes.values(), commit_id))])
        for known in self._known.values():  # what is kept follows the row as written
            if (row := known.rows.get(commit_id)) is not None:
                if commit_id in known.commits:  # its row is the commit's stored form
                    row = self._insert(known.commits[commit_id])[1]
                changed = list(row)
                for column, value in changes.items():
                    changed[_COLUMN_INDEX[column]] = value
                known.rows[commit_id] = tuple(changed)
                known.commits.pop(commit_id, None)

    def get(self, commit_id: str) -> Commit | None:
        row = self._conn.execute(f"SELECT {_COMMIT_COLUMNS} FROM commits WHERE id = ?", (commit_id,)).fetchone()
        return _rows_to_commits([row])[0] if row else None

    def commits(self, session_id: str) -> list[Commit]:
        """Every commit of the session, all branches, oldest first."""
        rows = self._conn.execute(
            f"SELECT {_COMMIT_COLUMNS} FROM commits WHERE session_id = ? ORDER BY id", (session_id,)
        ).fetchall()
        return _rows_to_commits(rows)

    def chain(self, session_id: str, head: str | None = None, *, last: int | None = None) -> list[Commit]:
        """The commits from the root to ``head`` (default: the session's head); only its
        ``last`` ones when given (the newest message of a long session is drawn before the
        rest is parsed).

        The session's rows are read once and kept (see ``_known_of``); the
        walk is in Python, and only commits not read before are parsed, so a
        long session costs its new messages, not its length. An end (``last``)
        of a session not kept yet is read alone, walked in SQL (``_chain_end``).
        """
        start = head if head is not None else self.head(session_id)
        if start is None:
            return []
        if last is not None and not self._kept(session_id):
            return self._chain_end(session_id, start, last)
        known = self._known_of(session_id)
        rows, commits = known.rows, known.commits
        walked = known.walked
        picked: list[str] = []
        seen: set[str] = set()
        current: str | None = start
        while current is not None and current not in seen and (row := rows.get(current)) is not None:
            if walked is not None and current == walked[0]:  # parents never change: the rest was walked
                break
            picked.append(current)
            seen.add(current)  # a parent cycle (left by another tool) ends the chain instead of looping
            current = row[1]
        picked.reverse()
        if walked is not None and current == walked[0]:
            picked = [*walked[1], *picked]
        if current is None or current not in seen:  # not a walk cut short by a cycle: its end is its own
            known.walked = (start, picked)
        if last is not None:
            picked = picked[-last:] if last > 0 else []
        for commit in _rows_to_commits([rows[i] for i in picked if i not in commits]):
            commits[commit.id] = commit
            rows[commit.id] = (commit.id, commit.parent_id)  # the text is kept once, in the commit
        return [commits[i] for i in picked]

    def _kept(self, session_id: str) -> bool:
        """Whether the session's rows are kept here and still the file's."""
        version = self._conn.execute("PRAGMA data_version").fetchone()[0]
        return version == self._version and session_id in self._known

    def _chain_end(self, session_id: str, head: str, last: int) -> list[Commit]:
        """The last ``last`` commits of the chain to ``head``, read from the file alone: a
        resumed session's newest message costs its own rows, not the session's."""
        if last <= 0:
            return []
        rows = self._conn.execute(
            f"""
            WITH RECURSIVE up(id, parent_id, depth) AS (
                SELECT id, parent_id, 1 FROM commits WHERE id = ? AND session_id = ?
                UNION ALL
                SELECT commits.id, commits.parent_id, up.depth + 1 FROM commits JOIN up ON commits.id = up.parent_id
                WHERE commits.session_id = ? AND up.depth < ?
            )
            SELECT {_QUALIFIED_COLUMNS} FROM up JOIN commits ON commits.id = up.id ORDER BY up.depth
            """,
            (head, session_id, session_id, last),
        ).fetchall()
        picked: list[tuple[Any, ...]] = []
        seen: set[str] = set()
        # a parent cycle (left by another tool) ends the chain, as in ``chain``; the query
        # itself goes round it until ``last``
        for row in rows:
            if row[0] in seen:
                break
            seen.add(row[0])
            picked.append(row)
        picked.reverse()
        return _rows_to_commits(picked)

    def _known_of(self, session_id: str) -> _Known:
        """The session's rows as kept here, read again only when another connection (another
        tractui, another tool) has written the file since: SQLite's ``data_version`` moves for
        their writes only, and this store's own writes update what it keeps as they go."""
        version = self._conn.execute("PRAGMA data_version").fetchone()[0]
        if version != self._version:
            self._known.clear()
            self._version = version
        known = self._known.pop(session_id, None)
        if known is None:
            rows = self._conn.execute(
                f"SELECT {_COMMIT_COLUMNS} FROM commits WHERE session_id = ?", (session_id,)
            ).fetchall()
            known = _Known({row[0]: row for row in rows})
        self._known[session_id] = known
        if len(self._known) > SESSIONS_KEPT:
            del self._known[next(iter(self._known))]
        return known

    def children(self, commit_id: str | None, session_id: str) -> list[Commit]:
        params: tuple[str, ...]
        if commit_id is None:
            sql, params = "parent_id IS NULL AND session_id = ?", (session_id,)
        else:
            sql, params = "parent_id = ? AND session_id = ?", (commit_id, session_id)
        rows = self._conn.execute(f"SELECT {_COMMIT_COLUMNS} FROM commits WHERE {sql} ORDER BY id", params).fetchall()
        return _rows_to_commits(rows)

    def siblings(self, commit_id: str) -> list[Commit]:
        """Commits sharing ``commit_id``'s parent (itself included), oldest first: the alternatives of a retry."""
        commit = self.get(commit_id)
        if commit is None:
            raise StoreError(f"no commit '{commit_id}' in {self.path}")
        return self.children(commit.parent_id, commit.session_id)

    # -- export / import ---------------------------------------------------
    def export_session(self, session_id: str) -> dict[str, Any]:
        """The whole session, every branch, as lossless JSON-ready data."""
        from tractui.store.imports import EXPORT_FORMAT, EXPORT_VERSION  # the format's checks: only here

        info = self.session(session_id)
        if info is None:
            raise StoreError(f"no session '{session_id}' in {self.path}")
        return {
            "format": EXPORT_FORMAT,
            "version": EXPORT_VERSION,
            "session": {
                "id": info.id,
                "created_at": info.created_at,
                "updated_at": info.updated_at,
                "head": info.head,
                "title": info.title,
            },
            "commits": [c.to_json() for c in self.commits(session_id)],
        }

    def import_session(self, data: Any) -> str:
        """Load an export back; refuses (changing nothing) a malformed file or a session already present."""
        from tractui.store.imports import check_export

        export = check_export(data)
        meta = export.session
        sid = meta.id
        commits = [
            Commit(
                id=c.id,
                parent_id=c.parent_id,
                session_id=sid,
                kind=c.kind,
                content=c.content,
                usage=c.usage,
                provider=c.provider,
                model=c.model,
                profile=c.profile,
                created_at=c.created_at,
                status=c.status,
                metadata=c.metadata,
            )
            for c in export.commits
        ]
        if self.session(sid) is not None:
            raise StoreError(f"session {sid} is already in {self.path}")
        statements: list[tuple[str, tuple[Any, ...]]] = [
            (
                "INSERT INTO sessions (id, created_at, updated_at, head, title) VALUES (?, ?, ?, ?, ?)",
                (sid, meta.created_at, meta.updated_at, meta.head, meta.title),
            )
        ]
        statements += [self._insert(c) for c in commits]
        try:
            self._write(statements)
        except StoreError as exc:
            raise StoreError(f"cannot import: {exc}") from None
        self._known.pop(sid, None)
        return sid

    def totals(self, session_id: str) -> Usage:
        """Usage summed over every commit of the session (all branches: what was spent)."""
        total = Usage()
        for (raw,) in self._conn.execute(
            "SELECT usage FROM commits WHERE session_id = ? AND usage IS NOT NULL", (session_id,)
        ):
            total = total + Usage.model_validate_json(raw)
        return total
