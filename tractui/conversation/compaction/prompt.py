"""What the summarising model is asked, and what its answer becomes in the history.

Kept apart from the compaction logic so the wording can be read (and tuned)
in one place. The prompt is structured because a free-form "summarise this"
loses exactly what a long working session needs: the goal, the decisions, the
names of files and functions, what was still open and how the user likes to
work.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tractui.core.content import Content, TextBlock, ThinkingBlock, ToolCallBlock, ToolResultBlock

SECTIONS: tuple[str, ...] = (
    "User's goal",
    "Decisions and facts established",
    "Code and file names mentioned",
    "Open questions",
    "User preferences",
    "Where the conversation stood",
)

SYSTEM_PROMPT = (
    "You compact a conversation between a user and an AI assistant so that it can continue "
    "with only your summary in place of the earlier turns. The assistant will not see the "
    "original turns again: whatever you leave out is lost.\n\n"
    "Write the summary in exactly these sections, as markdown headings, in this order:\n"
    + "\n".join(f"## {name}" for name in SECTIONS)
    + "\n\n"
    "Rules: keep every decision, fact, number, command, error message, and code, file, "
    "function and variable name that later turns may need, verbatim. Under 'Open questions' "
    "list what was asked or planned but not resolved. Under 'User preferences' note how the "
    "user wants answers (style, language, tools, constraints). Under 'Where the conversation "
    "stood' say what was happening in the last summarised turn and what comes next. Write "
    "'none' under a section with nothing to say. Be dense: no preamble, no closing remarks, "
    "no repetition. Do not answer or continue the conversation."
)

SUMMARY_HEADER = "[Summary of the earlier conversation — the original turns were compacted]"

_SPEAKERS = {"human": "User", "ai": "Assistant", "tool": "Tool", "system": "System"}


def render_message(content: Content, *, include_thinking: bool = True) -> str:
    """One message as plain text for the summariser; hidden (encrypted) thinking is skipped.

    Thinking the reasoning policy does not send is left out too: the model
    never saw it again, so the summary should not resurrect it.
    """
    who = _SPEAKERS[content.speaker]
    lines: list[str] = []
    for block in content.blocks:
        if isinstance(block, TextBlock) and block.text:
            lines.append(block.text)
        elif isinstance(block, ThinkingBlock) and include_thinking and block.thought and not block.is_hidden:
            lines.append(f"(thinking) {block.thought}")
        elif isinstance(block, ToolCallBlock):
            lines.append(f"(tool call {block.name}) {block.arguments}")
        elif isinstance(block, ToolResultBlock):
            lines.append(f"(tool result{' error' if block.is_error else ''}) {block.content}")
    if content.metadata.get("interrupted"):
        lines.append("(reply interrupted)")
    return f"### {who}\n" + "\n".join(lines)


def render_transcript(messages: Sequence[Content], *, include_thinking: bool = True) -> str:
    return "\n\n".join(render_message(m, include_thinking=include_thinking) for m in messages)


def request_text(
    transcript: str,
    *,
    previous: str | None = None,
    instructions: str | None = None,
    part: tuple[int, int] | None = None,
) -> str:
    """The user message of one summary call.

    ``previous`` is the running summary when a history too big for one call is
    summarised in parts: each part folds the next slice into it.
    """
    out: list[str] = []
    if part is not None and part[1] > 1:
        out.append(f"This is part {part[0]} of {part[1]} of a long conversation.")
    if previous:
        out.append(
            "Summary of the conversation before this part (fold it into your summary; drop nothing from it that still matters):\n\n"
            + previous
        )
    out.append("Conversation to summarise:\n\n<transcript>\n" + transcript + "\n</transcript>")
    if instructions:
        out.append("The user asked to focus on: " + instructions.strip())
    out.append("Write the summary now, in the sections given.")
    return "\n\n".join(out)


def summary_content(summary: str, metadata: dict[str, Any]) -> Content:
    """The message that stands in for the compacted range when the history is compiled.

    A human turn: every provider accepts it first in a conversation, and the
    model reads it as context given to it rather than something it said.
    """
    return Content(
        speaker="human",
        blocks=[TextBlock(text=f"{SUMMARY_HEADER}\n\n{summary.strip()}")],
        metadata={"compaction": metadata},
    )


LEFT_OUT = (
    "[{count} earlier turn{s} of this conversation were left out: no summary of them could be written. "
    "Ask the user if something from them is needed.]"
)


def left_out_content(count: int, metadata: dict[str, Any]) -> Content:
    """The note that stands in for turns left out unsummarised (compaction's last resort)."""
    text = LEFT_OUT.format(count=count, s="s" if count != 1 else "")
    return Content(speaker="human", blocks=[TextBlock(text=text)], metadata={"compaction": metadata})
