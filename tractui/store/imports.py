"""Reading a session export back: the whole file checked before anything is written.

An export is untrusted input (it may have been edited, or made by someone
else). It is refused, in one line naming the first problem, when it is too
large, nested deeper than any export is, not of the export's shape, holds an
id that is not a tractui id (ids end up in file names), a commit twice, a
parent that is missing or a parent cycle, a time no clock could have written,
a title that is not a short line of text, or a lone surrogate escape
(``"\\ud800"``: valid JSON, but not text the history can hold).
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError, field_validator

from tractui.core.content import Content, Usage
from tractui.core.nesting import nesting_depth
from tractui.core.surrogates import surrogate_path
from tractui.errors import StoreError

EXPORT_FORMAT = "tractui-session"
EXPORT_VERSION = 1
MAX_BYTES = 256 * 1024 * 1024  # far beyond the longest session; a larger file is refused before it is read
MAX_DEPTH = 64  # an export nests about ten levels; provider metadata a few more
MAX_TITLE = 1000
MAX_NAME = 1000  # provider, model and profile names
FUTURE_SLACK = 366 * 24 * 3600.0  # a clock ahead by up to a year is wrong but possible

TractuiId = Annotated[str, StringConstraints(pattern=r"^[0-9A-HJKMNP-TV-Z]{26}$")]
Name = Annotated[str, StringConstraints(max_length=MAX_NAME)]


def _sane_time(value: float) -> float:
    if not math.isfinite(value) or value < 0 or value > time.time() + FUTURE_SLACK:
        raise ValueError(f"time {value!r} is not a time tractui could have written")
    return value


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SessionIn(_Strict):
    id: TractuiId
    created_at: float
    updated_at: float
    head: TractuiId | None = None
    title: Annotated[str, StringConstraints(max_length=MAX_TITLE)] = ""

    _times = field_validator("created_at", "updated_at")(_sane_time)


class CommitIn(_Strict):
    id: TractuiId
    parent_id: TractuiId | None
    session_id: str | None = None  # the export's own copy of the session id; the session's id wins
    kind: Literal["user", "reasoning", "assistant", "tool", "summary", "system"]
    content: Content
    usage: Usage | None = None
    provider: Name | None = None
    model: Name | None = None
    profile: Name | None = None
    created_at: float
    status: Literal["complete", "interrupted", "error"] = "complete"
    metadata: dict[str, Any] = Field(default_factory=dict)

    _time = field_validator("created_at")(_sane_time)


class ExportIn(_Strict):
    format: Literal["tractui-session"]
    version: Literal[1]
    session: SessionIn
    commits: list[CommitIn]


def read_export(path: Path) -> Any:
    """The JSON in ``path``: refused when too large to be an export, not JSON, or nested too deeply."""
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise StoreError(f"cannot import {path}: larger than {MAX_BYTES // (1024 * 1024)} MiB")
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise StoreError(f"cannot import {path}: not UTF-8 text") from None
    try:
        return json.loads(text)
    except RecursionError:  # the C parser gives up before the interpreter's stack does
        raise StoreError(f"cannot import {path}: nested more than {MAX_DEPTH} levels deep") from None
    except ValueError as exc:
        raise StoreError(f"{path} is not JSON: {exc}") from None


def _first_problem(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"])
    message = str(error["msg"]).removeprefix("Value error, ")
    if error["type"] == "string_pattern_mismatch":
        message = "not a tractui id"
    return f"{where}: {message}" if where else message


def _check_chain(export: ExportIn) -> None:
    by_id: dict[str, CommitIn] = {}
    for commit in export.commits:
        if commit.id in by_id:
            raise ValueError(f"commit {commit.id} appears twice")
        by_id[commit.id] = commit
    for commit in export.commits:
        if commit.parent_id is not None and commit.parent_id not in by_id:
            raise ValueError(f"commit {commit.id} points to a missing parent")
    acyclic: set[str] = set()
    for commit in export.commits:
        path: list[str] = []
        on_path: set[str] = set()
        current: str | None = commit.id
        while current is not None and current not in acyclic:
            if current in on_path:
                raise ValueError(f"commit {current} is its own ancestor (a parent cycle)")
            on_path.add(current)
            path.append(current)
            current = by_id[current].parent_id
        acyclic.update(path)
    head = export.session.head
    if head is not None and head not in by_id:
        raise ValueError("the session head is not one of its commits")


def check_export(data: Any) -> ExportIn:
    """``data`` as a valid export, or a ``StoreError`` naming the first problem."""
    if not isinstance(data, dict) or data.get("format") != EXPORT_FORMAT:
        raise StoreError("cannot import: not a tractui session export")
    if data.get("version") != EXPORT_VERSION:
        raise StoreError(f"cannot import: unsupported export version {str(data.get('version'))[:40]}")
    if nesting_depth(data, MAX_DEPTH) > MAX_DEPTH:
        raise StoreError(f"cannot import: nested more than {MAX_DEPTH} levels deep")
    where = surrogate_path(data)
    if where is not None:
        raise StoreError(
            f"cannot import: {'.'.join(where)}: holds a lone surrogate escape (\\ud800–\\udfff), which is not text"
        )
    try:
        export = ExportIn.model_validate(data)
        _check_chain(export)
    except ValidationError as exc:
        raise StoreError(f"cannot import: {_first_problem(exc)}") from None
    except ValueError as exc:
        raise StoreError(f"cannot import: {exc}") from None
    return export
