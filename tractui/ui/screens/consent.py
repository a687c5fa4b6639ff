"""Asking before a tool runs: what the model wants to call, with what, and the user's choice.

The tool's name, description and the arguments come from a server and the
model: they are sanitised and drawn without markup, and nothing on this
screen runs anything. Esc stops the whole reply, as it does everywhere else.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static
from textual.widgets.button import ButtonVariant

from tractui.tools.consent import Choice, Decision, ToolRequest
from tractui.ui.sanitize import sanitize
from tractui.ui.widgets.tool_call import pretty_arguments

_BUTTONS: tuple[tuple[Choice, str, ButtonVariant], ...] = (
    ("once", "Allow once (y)", "success"),
    ("session", "Allow this session (s)", "primary"),
    ("always", "Always allow (a)", "warning"),
    ("deny", "Deny (n)", "error"),
)


class ConsentScreen(ModalScreen[Decision | None]):
    """Dismisses with the user's decision, or ``None`` when Esc stops the reply."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "choose('once')", "Allow once"),
        Binding("s", "choose('session')", "Allow this session"),
        Binding("a", "choose('always')", "Always allow"),
        Binding("n", "choose('deny')", "Deny"),
        Binding("escape", "stop", "Stop the reply"),
    ]

    def __init__(self, request: ToolRequest) -> None:
        super().__init__(classes="overlay")
        self.request = request

    def compose(self) -> ComposeResult:
        request = self.request
        where = f"{request.server}.{request.tool}"
        hint = " · the server says it only reads" if request.read_only else ""
        with Vertical(id="consent-box", classes="overlay-box"):
            yield Static(f"Run the tool {sanitize(where)}?{hint}", markup=False, id="consent-title")
            if request.description:
                yield Static(sanitize(request.description), markup=False, id="consent-description")
            with VerticalScroll(id="consent-arguments"):
                yield Static(sanitize(pretty_arguments(request.arguments) or "{}"), markup=False)
            yield Input(placeholder="reason for denying, sent to the model (optional)", id="consent-reason")
            with Horizontal(id="consent-buttons"):
                for choice, label, variant in _BUTTONS:
                    yield Button(label, id=f"consent-{choice}", variant=variant)
            yield Static(
                "Esc stops the reply · always: saved in config.toml until the tool's definition changes",
                classes="overlay-hint",
            )

    def on_mount(self) -> None:
        self.query_one("#consent-once", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        choice = (event.button.id or "").removeprefix("consent-")
        for known, _, _ in _BUTTONS:
            if known == choice:
                self.action_choose(known)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.action_choose("deny")

    def action_choose(self, choice: Choice) -> None:
        reason = self.query_one("#consent-reason", Input).value.strip() if choice == "deny" else ""
        self.dismiss(Decision(choice, reason))

    def action_stop(self) -> None:
        self.dismiss(None)
