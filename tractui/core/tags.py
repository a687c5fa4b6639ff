"""Streaming extraction of ``<think>…</think>`` reasoning from answer text.

Some models (DeepSeek-R1 distills, Qwen3, MiniMax behind plain
OpenAI-compatible servers) write their reasoning into the answer inside think
tags. ``ThinkTagExtractor`` splits such a stream into thinking and text as it
arrives. The rules (see docs/reasoning.md):

* chunking never changes the result: tags split across chunks are recognised;
* text that cannot start a tag is emitted at once; at most one tag length
  minus one characters are held back (plus, before the answer starts, the
  whitespace that precedes it, which is invisible anyway);
* by default only blocks at the start of the message (after whitespace, or
  right after another block) are reasoning; ``anywhere=True`` accepts them
  everywhere for interleaving models;
* ``</think>`` with no opening tag means the chat template opened the block in
  the prompt: a ``ReclassifyAsThinking`` event turns the text so far into
  thinking (``starts_in_thinking=True`` assumes it from the first character);
* a block still open at the end is thinking, ``ThinkingEnd(unterminated=True)``;
* the answer does not begin with the blank lines that follow ``</think>``
  (between parts of an answer, in ``anywhere`` mode, they are kept).

This runs on every streamed chunk, so the common case (inside text or
thinking, no ``<`` in the chunk) is a single ``in`` test and one event.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from tractui.core.events import ExtractorEvent, ReclassifyAsThinking, TextDelta, ThinkingDelta, ThinkingEnd

_LEAD, _TEXT, _THINK = 0, 1, 2  # before the answer (blocks may open) / answer / inside a block
_NON_SPACE = re.compile(r"\S")


def tag_pairs(names: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """Turn the ``reasoning.tags`` setting (``("think", "thinking")``) into tag pairs."""
    pairs = tuple((f"<{n}>", f"</{n}>") for n in (name.strip().strip("<>/") for name in names) if n)
    if not pairs:
        raise ValueError("at least one think tag name is needed")
    return pairs


class ThinkTagExtractor:
    """A state machine fed one chunk at a time; single use (one message)."""

    __slots__ = (
        "_answered",
        "_anywhere",
        "_close_of",
        "_closes",
        "_fast",
        "_hold",
        "_kind",
        "_longest",
        "_may_reclassify",
        "_needles",
        "_opens",
        "_raw",
        "_state",
        "_strip",
    )

    def __init__(
        self,
        tags: Sequence[tuple[str, str]] = (("<think>", "</think>"),),
        *,
        anywhere: bool = False,
        starts_in_thinking: bool = False,
    ) -> None:
        pairs = tuple((str(o), str(c)) for o, c in tags)
        if not pairs or any(not o.startswith("<") or not c.startswith("<") for o, c in pairs):
            raise ValueError("think tags must be non-empty pairs starting with '<'")
        self._opens = tuple(o for o, _ in pairs)
        self._closes = tuple(dict.fromkeys(c for _, c in pairs))
        self._close_of = dict(pairs)
        self._anywhere = anywhere
        self._longest = max(len(t) for pair in pairs for t in pair)
        self._hold = ""  # undecided tail: a possible tag start, or leading whitespace
        self._strip = False  # drop the blank lines that open the coming answer
        self._answered = False  # visible answer text has started
        # a </think> may still re-classify: no block and no literal open tag seen yet
        self._may_reclassify = not starts_in_thinking
        if starts_in_thinking:
            self._enter(_THINK, self._closes)
        else:
            self._enter(_LEAD)

    # -- state ---------------------------------------------------------------
    def _enter(self, state: int, needles: tuple[str, ...] = ()) -> None:
        self._state = state
        if state == _TEXT:
            tags = self._opens + self._closes
            if self._anywhere:
                needles = tags if self._may_reclassify else self._opens
            else:
                needles = tags if self._may_reclassify else ()
        self._needles = needles
        self._kind = ThinkingDelta if state == _THINK else TextDelta
        self._raw = state == _TEXT and not needles  # nothing left to look for
        self._fast = state != _LEAD and not self._hold

    # -- feeding -------------------------------------------------------------
    def feed(self, chunk: str) -> list[ExtractorEvent]:
        """Classify one chunk; returns the events it completes (maybe none)."""
        if self._fast and (self._raw or "<" not in chunk):
            return [self._kind(chunk)] if chunk else []
        if not chunk:
            return []
        out: list[ExtractorEvent] = []
        buf = self._hold + chunk
        self._hold = ""
        pos, end = 0, len(buf)
        while pos < end:
            pos = self._lead(buf, pos, out) if self._state == _LEAD else self._body(buf, pos, out)
        self._fast = self._state != _LEAD and not self._hold
        return out

    def close(self) -> list[ExtractorEvent]:
        """End of stream: flush what was held; an open block ends unterminated."""
        out: list[ExtractorEvent] = []
        hold, self._hold = self._hold, ""
        if self._state == _THINK:
            if hold:
                out.append(ThinkingDelta(hold))
            out.append(ThinkingEnd(unterminated=True))
        elif self._state == _TEXT:
            if hold:
                out.append(TextDelta(hold))
        else:
            match = _NON_SPACE.search(hold)
            start = len(hold) if match is None else match.start()
            space, rest = hold[:start], hold[start:]
            if self._strip:
                space = space[space.rfind("\n") + 1 :] if rest else ""
            if space or rest:
                out.append(TextDelta(space + rest))
        self._enter(_TEXT)
        self._fast = True
        return out

    def _lead(self, buf: str, pos: int, out: list[ExtractorEvent]) -> int:
        """Before the answer: skip whitespace, open a block, or start the answer."""
        match = _NON_SPACE.search(buf, pos)
        if match is None:
            self._hold = buf[pos:]
            return len(buf)
        at = match.start()
        if buf[at] == "<":
            for tag in self._opens:
                if buf.startswith(tag, at):
                    self._may_reclassify = False
                    self._strip = False
                    self._enter(_THINK, (self._close_of[tag],))
                    return at + len(tag)
            tail = buf[at:]
            if any(len(tail) < len(tag) and tag.startswith(tail) for tag in self._opens):
                self._hold = buf[pos:]
                return len(buf)
        space = buf[pos:at]
        if self._strip:
            space = space[space.rfind("\n") + 1 :]
            self._strip = False
        if space:
            out.append(TextDelta(space))
        self._answered = True
        self._enter(_TEXT)
        return at

    def _body(self, buf: str, pos: int, out: list[ExtractorEvent]) -> int:
        """Inside the answer or a block: emit up to the next tag, hold a partial one."""
        end = len(buf)
        needles = self._needles
        if not needles:
            out.append(self._kind(buf[pos:]))
            return end
        at = pos
        while True:
            at = buf.find("<", at)
            if at < 0:
                out.append(self._kind(buf[pos:]))
                return end
            for tag in needles:
                if buf.startswith(tag, at):
                    if at > pos:
                        out.append(self._kind(buf[pos:at]))
                    return self._on_tag(tag, at + len(tag), out)
            if end - at < self._longest:
                tail = buf[at:]
                if any(len(tail) < len(tag) and tag.startswith(tail) for tag in needles):
                    if at > pos:
                        out.append(self._kind(buf[pos:at]))
                    self._hold = tail
                    return end
            at += 1

    def _on_tag(self, tag: str, after: int, out: list[ExtractorEvent]) -> int:
        if self._state == _THINK:  # the block closes
            out.append(ThinkingEnd())
            self._strip = not self._answered
            self._enter(_LEAD)
        elif tag in self._close_of:  # an open tag inside the answer
            self._may_reclassify = False
            if self._anywhere:
                self._enter(_THINK, (self._close_of[tag],))
            else:  # start-only mode: a literal tag, stays text
                out.append(TextDelta(tag))
                self._enter(_TEXT)
        else:  # </think> with no opening tag: the text so far was thinking
            out.append(ReclassifyAsThinking())
            out.append(ThinkingEnd())
            self._may_reclassify = False
            self._answered = False
            self._strip = True
            self._enter(_LEAD)
        return after
