"""Asking before a tool runs: what the model wants to call, with what, and the user's choice.

The tool's name, description and the arguments come from a server and the
model: they are sanitised and drawn without markup, and nothing on this
screen runs anything. Esc stops the whole reply, as it does everywhere else.

The question can open while the user is typing in the prompt: keys of that
burst are not answers (an ``a`` in a word would always allow the tool, an
Enter would allow it once). They go on into the prompt until the user pauses.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static
from textual.widgets.button import ButtonVariant

from tractui.tools.consent import Choice, Decision, ToolRequest
from tractui.ui.sanitize import sanitize
from tractui.ui.widgets.in_order import TextField
from tractui.ui.widgets.tool_call import pretty_arguments

_BUTTONS: tuple[tuple[Choice, str, str, ButtonVariant], ...] = (  # choice, label, short label, colour
    ("once", "Allow once (y)", "Once (y)", "success"),
    ("session", "Allow this session (s)", "Session (s)", "primary"),
    ("always", "Always allow (a)", "Always (a)", "warning"),
    ("deny", "Deny (n)", "Deny (n)", "error"),
)


ROW_FITS = 85  # the terminal's width from which the four buttons fit side by side in the box
ROOM = 20  # the terminal's height from which the buttons keep their borders and the box its padding
TYPING_PAUSE = 0.5  # seconds between keys that end a typing burst
HELD = "keys typed as this opened went to the prompt: pause, then answer"


class _Body(VerticalScroll):
    """The box: what is asked scrolls under the answers when the terminal is too small for it all."""

    def allow_focus(self) -> bool:
        """A stop for Tab (and the arrow keys) only when there is something to scroll to."""
        return self.allow_vertical_scroll

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        """Textual's own scroll to what takes focus does not see the docked answers over the rest:
        the reason box or the arguments could stay under them."""
        if self.query_one("#consent-actions") not in event.widget.ancestors:
            self.scroll_to_widget(event.widget, animate=False)


class ConsentScreen(ModalScreen[Decision | None]):
    """Dismisses with the user's decision, or ``None`` when Esc stops the reply."""

    # too narrow for a row: two by two with short labels; too low: flat buttons (app.tcss). Textual
    # annotates these ``ClassVar[...] | None``, which mypy reads as instance variables.
    HORIZONTAL_BREAKPOINTS: ClassVar[list[tuple[int, str]]] = [(0, "-narrow"), (ROW_FITS, "-wide")]  # type: ignore[misc]
    VERTICAL_BREAKPOINTS: ClassVar[list[tuple[int, str]]] = [(0, "-short"), (ROOM, "-tall")]  # type: ignore[misc]
    AUTO_FOCUS = ""  # on_mount focuses the first answer: the first focusable, the arguments, scrolled the question away
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "choose('once')", "Allow once"),
        Binding("s", "choose('session')", "Allow this session"),
        Binding("a", "choose('always')", "Always allow"),
        Binding("n", "choose('deny')", "Deny"),
        Binding("escape", "stop", "Stop the reply"),
    ]

    def __init__(
        self,
        request: ToolRequest,
        *,
        clock: Callable[[], float],
        typed_at: float | None = None,
        keep: Callable[[events.Key], None] = lambda key: None,
    ) -> None:
        """``typed_at``: when the prompt last handled a key; ``keep`` gives the prompt a key back."""
        super().__init__(classes="overlay")
        self.request = request
        self._clock = clock
        self._typed_at = typed_at
        self._keep = keep

    def compose(self) -> ComposeResult:
        request = self.request
        where = f"{request.server}.{request.tool}"
        hint = " · the server says it only reads" if request.read_only else ""
        with _Body(id="consent-box", classes="overlay-box"):
            yield Static(f"Run the tool {sanitize(where)}?{hint}", markup=False, id="consent-title")
            if request.description:
                yield Static(sanitize(request.description), markup=False, id="consent-description")
            with VerticalScroll(id="consent-arguments"):
                yield Static(sanitize(pretty_arguments(request.arguments) or "{}"), markup=False)
            yield TextField(placeholder="reason for denying, sent to the model (optional)", id="consent-reason")
            with Vertical(id="consent-actions"):  # docked: the answers stay in view, the rest scrolls
                with Horizontal(id="consent-buttons"):
                    for choice, label, _, variant in _BUTTONS:
                        yield Button(label, id=f"consent-{choice}", variant=variant)
                yield Static(
                    "Esc stops the reply · always: saved in config.toml until the tool's definition changes",
                    classes="overlay-hint",
                    id="consent-hint",
                )

    def on_key(self, event: events.Key) -> None:
        """A key of the burst the user was typing when this opened goes on into the prompt;
        Esc still stops the reply."""
        now = self._clock()
        if self._typed_at is None or now - self._typed_at >= TYPING_PAUSE or event.key == "escape":
            self._typed_at = None
            return
        self._typed_at = now
        event.prevent_default()
        event.stop()
        self._keep(event)  # characters, Backspace, arrows, Enter: the prompt does with them what it would have
        self.query_one("#consent-hint", Static).update(HELD)

    def on_mount(self) -> None:
        self.query_one("#consent-once", Button).focus()

    def on_resize(self, event: events.Resize) -> None:
        """Two by two (``-narrow``), the long labels would be cut: the short ones say the same."""
        narrow = event.size.width < ROW_FITS
        for choice, label, short, _ in _BUTTONS:
            self.query_one(f"#consent-{choice}", Button).label = short if narrow else label

    def on_button_pressed(self, event: Button.Pressed) -> None:
        choice = (event.button.id or "").removeprefix("consent-")
        for known, _, _, _ in _BUTTONS:
            if known == choice:
                self.action_choose(known)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.action_choose("deny")

    def action_choose(self, choice: Choice) -> None:
        reason = self.query_one("#consent-reason", Input).value.strip() if choice == "deny" else ""
        self.dismiss(Decision(choice, reason))

    def action_stop(self) -> None:
        self.dismiss(None)
