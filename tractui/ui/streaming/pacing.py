"""How much of a fast stream to show per frame.

Feeding events is cheap; showing them (Markdown blocks mounted, laid out,
painted) costs in proportion to the text. A frame that takes everything
queued can take seconds, and nothing else (keys, the last token) is shown
meanwhile. So a frame takes at most what the recent frames show the display
can draw within ``target`` seconds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass
class FrameBudget:
    """Characters per frame, steered so that a frame takes about ``target`` seconds.

    A frame costs a fixed part (layout, paint) plus a part that grows with
    the text; the budget is scaled by how far the last frame was from the
    target, so it settles where the growing part fills what the fixed part
    leaves. It never drops below ``floor``: when the fixed part alone is over
    the target, smaller frames would only show less per frame.
    """

    target: float = 0.14  # seconds a frame should take
    floor: int = 400  # about a hundred tokens
    ceiling: int = 50_000
    chars: int = 2000  # the budget until frames have been timed

    def frame_took(self, chars: int, seconds: float) -> None:
        """Learn from one frame that showed ``chars`` characters in ``seconds``."""
        if chars < self.chars // 2 or seconds <= 0:  # a frame the budget did not limit says little
            return
        scale = min(2.0, max(0.5, self.target / seconds)) ** 0.5  # damped: frames are noisy
        self.chars = int(min(self.ceiling, max(self.floor, self.chars * scale)))


@dataclass
class FrameBudgets:
    """A budget per kind of text (thinking, answer).

    Thinking is plain text; the answer is Markdown, several times dearer per
    character. One budget learnt on a long thought made the answer's first
    frames take ten times the target.
    """

    budgets: dict[str, FrameBudget] = field(default_factory=dict)

    def of(self, kind: str) -> FrameBudget:
        budget = self.budgets.get(kind)  # called for every event: no budget built to be thrown away
        if budget is None:
            budget = self.budgets[kind] = FrameBudget()
        return budget

    def full(self, backlog: Mapping[str, int], share: float = 1.0) -> bool:
        """Whether the queued text, of whatever kinds, is ``share`` of a frame's worth."""
        return sum(chars / self.of(kind).chars for kind, chars in backlog.items()) >= share

    def frame_took(self, backlog: Mapping[str, int], seconds: float) -> None:
        """Learn from one frame: it tells about the kind that filled most of its budget."""
        if backlog:
            kind = max(backlog, key=lambda k: backlog[k] / self.of(k).chars)
            self.of(kind).frame_took(backlog[kind], seconds)
