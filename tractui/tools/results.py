"""A tool's result as the text the model receives: every part accounted for, capped, the cut marked.

Results are untrusted: they are sent as tool results (never as system text) and
shown inertly by the UI. Binary parts are described, not sent.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from tractui.core.tokens import TokenCounter

if TYPE_CHECKING:
    from mcp.types import CallToolResult

CUT = "\n[… cut by tractui: {shown:,} of {total:,} tokens shown (tools.maxResultTokens)]"


def result_text(result: CallToolResult) -> str:
    """The parts of ``result`` as one text, in order."""
    from mcp.types import AudioContent, EmbeddedResource, ImageContent, ResourceLink, TextContent

    parts: list[str] = []
    for block in result.content:
        match block:
            case TextContent():
                parts.append(block.text)
            case ImageContent() | AudioContent():
                kind = "image" if isinstance(block, ImageContent) else "audio"
                parts.append(f"[{kind} {block.mime_type}, {len(block.data) * 3 // 4:,} bytes, not shown]")
            case ResourceLink():
                parts.append(f"[resource {block.name}: {block.uri}]")
            case EmbeddedResource():
                resource: Any = block.resource
                text = getattr(resource, "text", None)
                parts.append(text if isinstance(text, str) else f"[binary resource {resource.uri}, not shown]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    return "\n".join(parts)


def capped(text: str, max_tokens: int, counter: TokenCounter) -> tuple[str, bool]:
    """``text`` cut to ``max_tokens`` (by the real tokenizer) with the cut marked; whether it was cut."""
    total = counter.count(text)
    if total <= max_tokens:
        return text, False
    low, high = 0, len(text)
    while low < high:  # the longest prefix within the budget
        mid = (low + high + 1) // 2
        if counter.count(text[:mid]) <= max_tokens:
            low = mid
        else:
            high = mid - 1
    return text[:low] + CUT.format(shown=counter.count(text[:low]), total=total), True
