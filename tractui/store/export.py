"""A session as text: Markdown to read, or lossless JSON to import again.

The one place both the ``tractui export`` command and the app's ``/export``
turn a session into a file.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Any, Literal

from markdown_it import MarkdownIt

from tractui.core.content import Content, TextBlock, ThinkingBlock, ToolCallBlock, ToolResultBlock, Usage
from tractui.core.inert import inert, json_text
from tractui.core.urls import public_url
from tractui.store.compile import compacted_ids
from tractui.store.history import Commit, HistoryStore

ExportFormat = Literal["md", "json"]
FORMATS: tuple[ExportFormat, ...] = ("md", "json")
_PARSER = MarkdownIt("commonmark")


def save_export(path: Path, text: str) -> None:
    """Write an export: a new file readable by its owner only (0600, as the history it comes from);
    an existing one keeps the mode its owner gave it. ``OSError`` when it cannot be written."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)


def export_text(store: HistoryStore, session_id: str, fmt: ExportFormat, *, raw: bool = False) -> str:
    """The session in ``fmt``: JSON keeps every branch (losslessly, with no raw control characters),
    Markdown the current one, its control characters shown as codes unless ``raw``."""
    if fmt == "json":
        return json_text(_public(store.export_session(session_id)), indent=1) + "\n"
    text = export_markdown(store, session_id)
    return text if raw else inert(text)


def _public(data: Any) -> Any:
    """``data`` with every ``base_url`` stripped of credentials (rows written before they were stripped on write)."""
    if isinstance(data, dict):
        return {k: public_url(v) if k == "base_url" and isinstance(v, str) else _public(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_public(v) for v in data]
    return data


def format_time(ts: float) -> str:
    """``ts`` as local time; a time no clock could hold (left by another tool) as ``?``."""
    try:
        return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts))
    except (OverflowError, OSError, ValueError):
        return "?"


def usage_text(usage: Usage | None) -> str:
    if usage is None:
        return ""
    text = f"in {usage.input_tokens:,} · out {usage.output_tokens:,}"
    if usage.reasoning_tokens:
        text += f" (reasoning {usage.reasoning_tokens:,})"
    if usage.cached_input_tokens:
        text += f" · cached {usage.cached_input_tokens:,}"
    return text


def _quote(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.split("\n"))


_CODE_SPAN = re.compile(r"(`+).+?(?<!`)\1(?!`)")
# where raw HTML can begin (``a < b`` stays as it is), or a CommonMark autolink, kept: it is a link, not HTML
_TAG_START = re.compile(
    r"<[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*>|<[\w.!#$%&'*+/=?^`{|}~-]+@[\w-]+(?:\.[\w-]+)*>|<(?=[A-Za-z/!?])"
)


def _tag_start(match: re.Match[str]) -> str:
    return "&lt;" if match.group() == "<" else match.group()


def _inert_html(text: str) -> str:
    """``text`` with its raw HTML shown as text (a tag's ``<`` as ``&lt;``, which reads as ``<``), code left
    as it is: a model's ``</details>`` in its thinking closed the block the export puts it in, and
    what followed read as the conversation."""
    lines = text.split("\n")
    code: set[int] = set()
    for token in _PARSER.parse(text):
        if token.type in ("fence", "code_block") and token.map is not None:
            code.update(range(*token.map))
    for i, line in enumerate(lines):
        if i not in code and "<" in line:
            kept = [(m.start(), m.end()) for m in _CODE_SPAN.finditer(line)]
            out, at = [], 0
            for start, end in kept:
                out += [_TAG_START.sub(_tag_start, line[at:start]), line[start:end]]
                at = end
            out.append(_TAG_START.sub(_tag_start, line[at:]))
            lines[i] = "".join(out)
    return "\n".join(lines)


def _under_headings(text: str) -> str:
    """``text`` with its own headings two levels down (at most ``######``): a reply's ``# Plan``
    or a summary's ``## Goal`` stays below the ``## You`` / ``## Assistant`` it belongs to, in the
    export's outline. Top-level headings only; setext ones (``Plan`` over ``===``) become ATX."""
    lines = text.split("\n")
    tokens = _PARSER.parse(text)
    for token in reversed(tokens):  # from the end: a setext heading's two lines become one
        if token.type != "heading_open" or token.level != 0 or token.map is None:
            continue
        start, end = token.map
        level = min(6, int(token.tag[1]) + 2)
        if token.markup.startswith("#"):
            lines[start] = "#" * level + " " + lines[start].lstrip(" ").lstrip("#").lstrip(" \t")
        else:
            title = " ".join(line.strip() for line in lines[start : end - 1])
            lines[start:end] = ["#" * level + " " + title]
    return "\n".join(lines)


def _call_names(chain: list[Commit]) -> dict[str, str]:
    """Each answered call's name as the app shows it, ``server.tool`` (its result's record), not
    the provider-safe name the model called (``server__tool``, sometimes cut and hashed)."""
    names: dict[str, str] = {}
    for commit in chain:
        meta = commit.content.metadata
        server, tool = meta.get("server"), meta.get("tool")
        if commit.kind != "tool" or not (isinstance(server, str) and isinstance(tool, str) and server and tool):
            continue
        for block in commit.content.blocks:
            if isinstance(block, ToolResultBlock):
                names[block.tool_call_id] = f"{server}.{tool}"
    return names


def _md_blocks(content: Content, names: dict[str, str]) -> list[str]:
    parts: list[str] = []
    for block in content.blocks:
        if isinstance(block, TextBlock):
            parts.append(_under_headings(_inert_html(block.text)))
        elif isinstance(block, ThinkingBlock):
            body = (
                "_(redacted thinking, kept opaque)_"
                if block.is_hidden
                else _quote(_under_headings(_inert_html(block.thought)))
            )
            parts.append(f"<details>\n<summary>Thinking ({block.source_field})</summary>\n\n{body}\n\n</details>")
        elif isinstance(block, ToolCallBlock):
            name = names.get(block.id, block.name)
            parts.append(f"**Tool call** `{name}` (`{block.id}`)\n\n```json\n{block.arguments}\n```")
        elif isinstance(block, ToolResultBlock):
            parts.append(
                f"**Tool result** (`{block.tool_call_id}`{', error' if block.is_error else ''})\n\n```\n{block.content}\n```"
            )
    return parts


_HEADINGS = {
    "user": "You",
    "assistant": "Assistant",
    "reasoning": "Assistant",
    "tool": "Tool",
    "system": "System",
    "summary": "Summary",
}


def _status_text(commit: Commit) -> str:
    """``interrupted``, or ``error`` with what went wrong as it was told."""
    error = commit.metadata.get("error")
    if commit.status == "error" and isinstance(error, dict) and error.get("message"):
        kind = str(error.get("kind") or "error").replace("_", " ")
        return f"error: {kind}: {' '.join(str(error['message']).split())}"
    return commit.status


def export_markdown(store: HistoryStore, session_id: str) -> str:
    """The current branch as readable markdown; thinking in a marked <details> block."""
    info = store.session(session_id)
    chain = store.chain(session_id)
    compacted = compacted_ids(chain)
    names = _call_names(chain)
    lines = [
        f"# {_inert_html(info.title) if info and info.title else 'Untitled session'}",
        "",
        f"Session `{session_id}` · {format_time(info.created_at) if info else ''}",
        "",
    ]
    previous_kind: str | None = None
    for commit in chain:
        heading: str | None = _HEADINGS[commit.kind]
        if commit.kind == "assistant" and previous_kind == "reasoning":
            heading = None  # the reasoning commit already opened this reply
        if heading:
            label = heading
            if commit.kind in ("assistant", "reasoning") and commit.model:
                label += f" ({commit.model})"
            if commit.id in compacted:
                label += " — compacted"
            lines += [f"## {label}", ""]
        for part in _md_blocks(commit.content, names):
            lines += [part, ""]
        if commit.status != "complete" and commit.kind != "reasoning":  # once, under the reply it ended
            lines += [f"_({_status_text(commit)})_", ""]
        if commit.kind == "assistant" and commit.usage:
            lines += [f"<sub>{usage_text(commit.usage)}</sub>", ""]
        previous_kind = commit.kind
    return "\n".join(lines).rstrip() + "\n"
