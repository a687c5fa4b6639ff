"""Writes a streaming reply to the store as it arrives, so a killed process leaves a readable partial reply.

A store that cannot be written (the disk is full) does not stop the reply:
the writer keeps it in memory, records why in ``unsaved``, and every later
flush (and ``write_unsaved``) tries again from the full reply.
"""

from __future__ import annotations

import time
from typing import Any

from tractui.core.assemble import MessageAssembler
from tractui.core.content import Content, ThinkingBlock, Usage
from tractui.errors import StoreError
from tractui.store.history import Commit, HistoryStore, Status


def _leading_thinking(blocks: list[Any]) -> int:
    count = 0
    for block in blocks:
        if not isinstance(block, ThinkingBlock):
            break
        count += 1
    return count


class ReplyWriter:
    """Writes one streaming reply as a reasoning commit (thinking before the first answer block) and an assistant commit.

    Each flush rewrites both from the assembler's full content, split at a
    fixed point once the answer has started, so their concatenation is always
    the reply in its exact order.
    """

    def __init__(
        self, store: HistoryStore, session_id: str, parent_id: str, stamps: dict[str, Any], profile: str | None
    ) -> None:
        self.store = store
        self.session_id = session_id
        self.parent_id = parent_id
        self.stamps = stamps
        self.profile = profile
        self.reasoning: Commit | None = None
        self.assistant: Commit | None = None
        self._split = 0
        self._version = -1
        self.last_flush = time.monotonic()
        self.unsaved: StoreError | None = None  # why the last flush could not write; None once written
        self._final: tuple[MessageAssembler, Status, Usage | None, dict[str, Any] | None] | None = None

    def _commit_kwargs(self) -> dict[str, Any]:
        return {"provider": self.stamps["provider"], "model": self.stamps["model"], "profile": self.profile}

    def flush(
        self,
        assembler: MessageAssembler,
        *,
        status: Status = "interrupted",
        final: bool = False,
        usage: Usage | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        self.last_flush = time.monotonic()
        if final:
            self._final = (assembler, status, usage, metadata)
        if assembler.version == self._version and not final and self.unsaved is None:
            return
        try:
            self._write(assembler, status, final=final, usage=usage, metadata=metadata)
        except StoreError as exc:
            self.unsaved = exc
            return
        self._version = assembler.version
        self.unsaved = None

    def write_unsaved(self) -> bool:
        """Try again to write a finished reply whose last write failed; whether it is written now."""
        if self.unsaved is not None and self._final is not None:
            assembler, status, usage, metadata = self._final
            self.flush(assembler, status=status, final=True, usage=usage, metadata=metadata)
        return self.unsaved is None

    def _write(
        self,
        assembler: MessageAssembler,
        status: Status,
        *,
        final: bool,
        usage: Usage | None,
        metadata: dict[str, Any] | None,
    ) -> None:
        content = assembler.content(metadata=self.stamps)  # the stamps and what the protocol keeps with the reply
        blocks = list(content.blocks)
        stamps = dict(content.metadata)
        if self.assistant is None:
            lead = _leading_thinking(blocks)
            if lead == len(blocks) and not final:
                if lead:
                    self._write_reasoning(blocks, status, stamps)
                return
            self._split = lead
            if lead:
                self._write_reasoning(blocks[:lead], status, stamps)
            parent = self.reasoning.id if self.reasoning else self.parent_id
            self.assistant = self.store.append(
                self.session_id,
                "assistant",
                Content(speaker="ai", blocks=blocks[lead:], metadata=stamps),
                parent_id=parent,
                status=status,
                usage=usage,
                metadata=metadata,
                **self._commit_kwargs(),
            )
            return
        if self.reasoning is not None:
            self._write_reasoning(blocks[: self._split], status, stamps)
        self.store.update(
            self.assistant.id,
            content=Content(speaker="ai", blocks=blocks[self._split :], metadata=stamps),
            status=status,
            usage=usage,
            metadata=metadata,
        )

    def _write_reasoning(self, blocks: list[Any], status: Status, stamps: dict[str, Any]) -> None:
        content = Content(speaker="ai", blocks=blocks, metadata=stamps)
        if self.reasoning is None:
            self.reasoning = self.store.append(
                self.session_id, "reasoning", content, parent_id=self.parent_id, status=status, **self._commit_kwargs()
            )
        else:
            self.store.update(self.reasoning.id, content=content, status=status)
