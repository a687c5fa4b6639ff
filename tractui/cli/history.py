"""``tractui sessions | log | export | import | delete``: the history from the shell.

Errors are one line on stderr and exit 2; nothing is written unless the
command succeeds.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from tractui.cli.terminal import Terminal, one_line
from tractui.config.paths import history_path
from tractui.core.content import Content, TextBlock, ThinkingBlock, ToolCallBlock, ToolResultBlock
from tractui.errors import StoreError, UsageError
from tractui.store.compile import compacted_ids
from tractui.store.export import ExportFormat, export_text, format_time, save_export, usage_text
from tractui.store.history import Commit, HistoryStore
from tractui.store.imports import read_export

DIM = "\x1b[2m"


def _preview(content: Content, width: int = 100) -> str:
    parts: list[str] = []
    for block in content.blocks:
        if isinstance(block, TextBlock):
            parts.append(block.text)
        elif isinstance(block, ThinkingBlock):
            parts.append("(redacted thinking)" if block.is_hidden else block.thought)
        elif isinstance(block, ToolCallBlock):
            parts.append(f"{block.name}({block.arguments})")
        elif isinstance(block, ToolResultBlock):
            parts.append(block.content)
    line = " ".join(" ".join(parts).split())
    return line if len(line) <= width else line[: width - 1] + "…"


def cmd_sessions(store: HistoryStore, out: Terminal) -> int:
    sessions = store.list_sessions()
    if not sessions:
        out.write(f"no sessions yet ({store.path})\n")
        return 0
    out.write(f"{'ID':<26}  {'UPDATED':<16}  {'MSGS':>4}  {'MODEL':<24}  TITLE\n")
    for s in sessions:
        out.write(
            f"{s.id:<26}  {format_time(s.updated_at):<16}  {s.message_count:>4}  {one_line(s.model or '-')[:24]:<24}  "
            f"{one_line(s.title) or '(untitled)'}\n"
        )
    return 0


def format_log_line(commit: Commit, *, compacted: bool) -> str:
    tags = [f"[{commit.kind}]"]
    if commit.status != "complete":
        tags.append(f"[{commit.status}]")
    if compacted:
        tags.append("[compacted]")
    head = f"{commit.id}  {format_time(commit.created_at)}  {' '.join(tags)}"
    if commit.model:
        head += f"  {commit.provider}/{commit.model}" if commit.provider else f"  {commit.model}"
    if commit.usage:
        head += f"  {usage_text(commit.usage)}"
    if isinstance(error := commit.metadata.get("error"), dict):
        head += f"  error: {one_line(str(error.get('message', '')))}"
    return f"{head}\n    {_preview(commit.content)}"


def cmd_log(store: HistoryStore, ref: str | None, out: Terminal) -> int:
    session_id = store.resolve_session(ref)
    chain = store.chain(session_id)
    compacted = compacted_ids(chain)
    info = store.session(session_id)
    out.write(f"session {session_id}  {one_line(info.title) if info else ''}\n\n")
    for commit in reversed(chain):
        line = format_log_line(commit, compacted=commit.id in compacted)
        if commit.kind == "reasoning" or commit.id in compacted:
            out.styled(DIM, line)
        else:
            out.write(line)
        out.write("\n")
    return 0


def cmd_export(
    store: HistoryStore, ref: str | None, fmt: ExportFormat, output: str | None, out: Terminal, *, raw: bool
) -> int:
    text = export_text(store, store.resolve_session(ref), fmt, raw=raw)
    if output is None:
        out.write(text)
        return 0
    try:
        save_export(Path(output), text)
    except OSError as exc:
        raise UsageError(f"cannot write {output}: {exc.strerror or exc}") from None
    return 0


def cmd_import(store: HistoryStore, file: str, out: Terminal) -> int:
    session_id = store.import_session(read_export(Path(file)))
    out.write(f"imported session {session_id}\n")
    return 0


def cmd_delete(store: HistoryStore, ref: str, out: Terminal, ask: Callable[[str], str] | None) -> int:
    """Delete session ``ref`` after a yes (``ask`` is ``None`` with ``--yes``, or with no terminal to
    ask on: then refused); refused while another window has it open."""
    if not ref.strip():  # not the latest by default, as the other commands take it
        raise UsageError("delete needs a session id or its first characters (tractui sessions lists them)")
    session_id = store.resolve_session(ref)
    info = store.session(session_id)
    if info is None:
        raise UsageError(f"no session '{one_line(ref)}' in {store.path}")
    named = f"session {info.id} '{one_line(info.title) or '(untitled)'}' ({info.message_count} messages)"
    if ask is not None and ask(f"delete {named}? [y/N] ").strip().lower() not in ("y", "yes"):
        out.write("not deleted\n")
        return 1
    store.delete_session(session_id)
    out.write(f"deleted {named}\n")
    return 0


def _asker(err: Terminal) -> Callable[[str], str]:
    """A question on stderr, its answer from the terminal; no terminal: refused (``--yes`` says it).
    Ctrl+C at the question is a no (it ended in a traceback)."""
    stdin = sys.stdin
    if stdin is None or not stdin.isatty():
        raise UsageError("delete asks first, and there is no terminal to ask on; add --yes to delete without asking")

    def ask(question: str) -> str:
        try:  # the question too: Ctrl+C may come the moment it is on screen, before the read
            err.write(question)
            return stdin.readline()
        except KeyboardInterrupt:
            err.write("\n")
            return ""

    return ask


def run_history_command(args: argparse.Namespace, *, out: Terminal, err: Terminal) -> int:
    """Run the history command ``args`` names (parsed by ``tractui.cli.main``)."""
    try:
        with HistoryStore(history_path()) as store:
            if args.command == "sessions":
                return cmd_sessions(store, out)
            if args.command == "log":
                return cmd_log(store, args.session, out)
            if args.command == "delete":
                return cmd_delete(store, args.session, out, None if args.yes else _asker(err))
            if args.command == "export":
                return cmd_export(store, args.session, args.format, args.output, out, raw=args.raw)
            return cmd_import(store, args.file, out)
    except (UsageError, StoreError) as exc:
        err.write(f"tractui: {exc}\n")
        return 2
