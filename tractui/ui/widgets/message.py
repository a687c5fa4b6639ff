"""Messages in the conversation: the user's turn and the assistant's reply.

An assistant reply is a column of parts in arrival order (thinking, answer,
redacted marker, tool call, more thinking...) and a status line underneath for
interruptions, errors, retry countdowns and notices.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal, NamedTuple

from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import Static

from tractui.ui.widgets.answer import AnswerView
from tractui.ui.widgets.column import Column
from tractui.ui.widgets.thinking import RedactedMarker, ThinkingView
from tractui.ui.widgets.tool_call import ToolCallView

StatusKind = Literal["interrupted", "error", "retry", "notice", "progress", "stall"]
TOLD: tuple[StatusKind, ...] = ("notice", "error", "interrupted")  # the lines a redraw of the view must not lose
INTERRUPTED = "⏹ interrupted — what arrived is kept"
INTERRUPTED_EARLY = "⏹ interrupted before anything arrived"  # Esc while waiting (a retry's countdown)


def interrupted_line(parts: Sequence[Widget]) -> str:
    """The "interrupted" line of a reply with ``parts``: none arrived, or what did is kept."""
    return INTERRUPTED if parts else INTERRUPTED_EARLY


FOLD_OVER = 40  # a message of more lines than this (a long paste) is shown folded
FOLDED_LINES = 12  # ... to its first lines


class UserMessage(Static):
    """What the user sent, kept verbatim (it is sanitised on the way in by the caller).

    A long paste is shown folded to its first lines, with how many more there are;
    a click shows it all (or folds it again). What is sent is always the whole text.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        # its lines: a line break at the end starts no line of its own (a paste usually ends in one)
        self._lines = text.removesuffix("\n").split("\n")
        self.folded = len(self._lines) > FOLD_OVER
        super().__init__(self._shown(), markup=False, classes="user-message")

    def _shown(self) -> str:
        if not self.folded:
            return self.text
        more = len(self._lines) - FOLDED_LINES
        return "\n".join(self._lines[:FOLDED_LINES]) + f"\n▸ … {more} more lines (click to show them)"

    def on_click(self) -> None:
        if len(self._lines) > FOLD_OVER and not self.screen.get_selected_text():
            self.folded = not self.folded
            self.update(self._shown())


class StatusLine(Static):
    """One line under a reply: "interrupted", an inline error, a retry countdown."""

    def __init__(self, text: str, kind: StatusKind) -> None:
        super().__init__(text, markup=False, classes=f"status -{kind}")
        self.kind = kind
        self.text = text


class Told(NamedTuple):
    """A status line as a reply showed it, to be shown again on its redrawn form."""

    text: str
    kind: StatusKind
    above: bool  # above the reply's parts: something done before the reply (a compaction)


class AssistantMessage(Column):
    """One reply. Parts are appended as the stream goes; nothing is re-created.

    A reply from the history comes with its ``parts`` and ``statuses`` built,
    so that it mounts in one go.
    """

    def __init__(
        self,
        count_tokens: Callable[[str], int],
        clock: Callable[[], float],
        *,
        parts: Sequence[Widget] = (),
        statuses: Sequence[StatusLine] = (),
        public_markdown: bool = False,
    ) -> None:
        super().__init__(classes="assistant-message")
        self.public_markdown = public_markdown  # answers drawn with public Textual only (ui.markdown)
        self._count = count_tokens
        self._clock = clock
        self.parts: list[Widget] = list(parts)
        self.statuses: list[StatusLine] = list(statuses)

    def compose(self) -> ComposeResult:
        yield Column(*self.parts, classes="parts")
        yield from self.statuses

    @property
    def _parts_box(self) -> Column:
        return self.query_one(".parts", Column)

    async def _add(self, widget: Widget) -> Widget:
        self.parts.append(widget)
        await self._parts_box.mount(widget)
        return widget

    def current_thinking(self) -> ThinkingView | None:
        last = self.parts[-1] if self.parts else None
        return last if isinstance(last, ThinkingView) and last.streaming else None

    async def thinking(self, *, text: str = "", elapsed: float | None = None) -> ThinkingView:
        """The thinking block being streamed, or a new one after other parts."""
        current = self.current_thinking()
        if current is not None and not text:
            return current
        view = ThinkingView(self._count, self._clock, text=text, elapsed=elapsed)
        await self._add(view)
        return view

    async def answer(self, text: str = "") -> AnswerView:
        last = self.parts[-1] if self.parts else None
        if isinstance(last, AnswerView) and not text:
            return last
        self.end_thinking()
        return await self._add(AnswerView(text, public=self.public_markdown))  # type: ignore[return-value]

    async def redacted(self, text: str = RedactedMarker.REDACTED) -> None:
        self.end_thinking()
        await self._add(RedactedMarker(text))

    async def tool_call(self, name: str) -> ToolCallView:
        self.end_thinking()
        view = ToolCallView(name, clock=self._clock)
        await self._add(view)
        return view

    async def note(self, line: Widget) -> None:
        """A line of tractui's own (a command's note) said while the reply streams, under what it
        has drawn so far. Not one of its parts: the thinking or answer being streamed goes on above
        it, and what the reply draws next (a call, the next request's reply) comes below."""
        await self._parts_box.mount(line)

    def end_thinking(self) -> None:
        current = self.current_thinking()
        if current is not None:
            current.finish()

    async def reclassify_as_thinking(self) -> None:
        """Everything shown as answer so far was thinking (a ``</think>`` with no opening tag)."""
        answers = [p for p in self.parts if isinstance(p, AnswerView)]
        if not answers:
            return
        text = "".join(a.text for a in answers)
        for answer in answers:
            self.parts.remove(answer)
            await answer.remove()
        view = ThinkingView(self._count, self._clock, text=text)
        self.parts.insert(0, view)
        await self._parts_box.mount(view, before=0)

    async def set_status(self, text: str, kind: StatusKind, *, above: bool = False) -> StatusLine:
        """Show a status line; a retry countdown or a progress line is replaced, not stacked.

        Before the reply has any part (or when ``above``), a notice or progress line goes
        above the parts: it tells of something done before the reply (a compaction).
        """
        if kind in ("retry", "progress", "stall"):
            for line in self.statuses:
                if line.kind == kind:
                    line.text = text
                    line.update(text)
                    return line
        line = StatusLine(text, kind)
        self.statuses.append(line)
        if (above or not self.parts) and kind in ("notice", "progress"):
            await self.mount(line, before=self._parts_box)
        else:
            await self.mount(line)
        return line

    def told(self) -> list[Told]:
        """Its notices, error and "interrupted" lines, in order and where each stands."""
        children = list(self.children)
        parts = children.index(self._parts_box)
        return [Told(s.text, s.kind, children.index(s) < parts) for s in self.statuses if s.kind in TOLD]

    async def tell(self, lines: list[Told]) -> None:
        """Show ``lines`` (another drawing's ``told``) here. An error or "interrupted" among them
        stands for the one drawn from the history, which lacks the live hint (``error_line``)."""
        if any(line.kind in ("error", "interrupted") for line in lines):
            await self.clear_statuses("error", "interrupted")
        for line in lines:
            await self.set_status(line.text, line.kind, above=line.above)

    async def clear_statuses(self, *kinds: StatusKind) -> None:
        for line in [s for s in self.statuses if s.kind in kinds]:
            self.statuses.remove(line)
            await line.remove()

    async def finish(self) -> None:
        self.end_thinking()
        for part in self.parts:
            if isinstance(part, AnswerView):
                await part.finish()

    @property
    def answer_text(self) -> str:
        return "".join(p.text for p in self.parts if isinstance(p, AnswerView))
