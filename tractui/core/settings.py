"""The typed settings registry behind ``/set``, ``--set`` and profiles.

Each key has a type, a default, allowed values and one line of help. Values
parse as a user types them (``on``, ``8k``, ``AllButLast``); a bad key or
value raises ``SettingError`` with a one-line message and changes nothing.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from tractui.core.settings_view import SettingsView, field_name
from tractui.errors import SettingError

KILO = 1024
EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh", "max")  # least to most


@dataclass(frozen=True, slots=True)
class SettingSpec:
    key: str
    kind: str  # bool | int (a token amount: 8k) | count (a whole number of things) | float | enum | str | tags
    default: Any
    help: str
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    optional: bool = False  # may be unset (None); "unset" restores default
    display: bool = False  # takes effect at once in the UI, not on the next request

    def allowed(self) -> str:
        """Human description of accepted values, for error messages and completion."""
        if self.kind == "bool":
            return "true, false, on or off"
        if self.kind == "enum":
            return ", ".join(self.choices)
        if self.kind == "int":
            if self.minimum is not None and self.maximum is not None:
                return f"an integer from {int(self.minimum)} to {int(self.maximum)}"
            floor = "" if self.minimum is None else f" ≥ {int(self.minimum)}"
            return f"an integer{floor} (8k, 1.5k and 0.5M accepted; K = 1024)"
        if self.kind == "count":  # k and M are for token amounts: 1.5k turns is no count
            if self.minimum is not None and self.maximum is not None:
                return f"a whole number from {int(self.minimum)} to {int(self.maximum)}"
            floor = "" if self.minimum is None else f" ≥ {int(self.minimum)}"
            return f"a whole number{floor} (no fractions, no k or M)"
        if self.kind == "float":
            lo, hi = self.minimum, self.maximum
            if lo is not None and hi is not None:
                return f"a number from {lo:g} to {hi:g}"
            return "a number"
        if self.kind == "tags":
            if self.choices:
                return f"comma-separated, from {', '.join(self.choices)}"
            return "comma-separated tag names, e.g. think,thinking"
        return "any text"


def _spec(*args: Any, **kwargs: Any) -> SettingSpec:
    return SettingSpec(*args, **kwargs)


SPECS: tuple[SettingSpec, ...] = (
    _spec("reasoning.enabled", "bool", True, "Ask the model to think (reasoning parameters are sent)."),
    _spec("reasoning.includeInContext", "bool", False, "Send earlier turns' thinking back to the model."),
    _spec(
        "reasoning.includeInResponse", "bool", True, "Show thinking in the conversation (display only).", display=True
    ),
    _spec(
        "reasoning.effort",
        "enum",
        None,
        "Reasoning effort for models that take one (OpenAI, DeepSeek, Gemini levels).",
        choices=EFFORTS,
        optional=True,
    ),
    _spec(
        "reasoning.maxTokens",
        "int",
        None,
        "Thinking budget in tokens (Anthropic, Gemini, some servers).",
        minimum=0,
        optional=True,
    ),
    _spec(
        "reasoning.format",
        "enum",
        "field",
        "How thinking is sent back: native blocks, a reasoning field, or <think> tags inside the text.",
        choices=("native", "field", "tags"),
    ),
    _spec(
        "reasoning.mode",
        "enum",
        "auto",
        "How thinking is asked for: the protocol's current way, adaptive, a budget, an on/off switch, "
        "a chat-template switch, or nothing at all.",
        choices=("auto", "adaptive", "budget", "switch", "template", "none"),
    ),
    _spec(
        "reasoning.efforts",
        "tags",
        None,
        "The effort values this server takes; a requested effort is sent as the nearest of them.",
        choices=EFFORTS,
        optional=True,
    ),
    _spec(
        "reasoning.display",
        "enum",
        "auto",
        "Anthropic thinking display: summarized, omitted (signature only), or the model's default.",
        choices=("auto", "summarized", "omitted"),
    ),
    _spec(
        "reasoning.off",
        "enum",
        "disabled",
        "How the model turns thinking off: disabled, between_tools (Claude Sonnet 5.5), or never (Claude Opus "
        "5.5, Fable 5.1 and later, GPT-6.2: sent at the lowest effort).",
        choices=("disabled", "between_tools", "never"),
    ),
    _spec(
        "reasoning.stripFromContext",
        "enum",
        "none",
        "Which earlier turns lose their thinking when it is sent back.",
        choices=("all", "allButLast", "none"),
    ),
    _spec(
        "reasoning.fieldName",
        "enum",
        "reasoning_content",
        "Field carrying thinking on OpenAI-compatible servers (reasoning for Ollama, OpenRouter, newer vLLM).",
        choices=("reasoning_content", "reasoning"),
    ),
    _spec(
        "reasoning.summary",
        "enum",
        "auto",
        "Reasoning summary detail (OpenAI Responses API).",
        choices=("auto", "concise", "detailed", "none"),
    ),
    _spec("reasoning.tags", "tags", ("think",), "Tag names that wrap thinking inside answer text."),
    _spec("reasoning.tagsAnywhere", "bool", False, "Accept think tags anywhere in the answer, not only at its start."),
    _spec(
        "reasoning.startsInThinking",
        "bool",
        False,
        "The stream starts inside a think block (template put <think> in the prompt).",
    ),
    _spec(
        "ui.markdown",
        "enum",
        "fast",
        "How answers are drawn: fast (finished parts drawn from captured lines) or public (Textual's "
        "Markdown widget alone, no private Textual API: for a Textual upgrade that moved what fast uses).",
        choices=("fast", "public"),
        display=True,
    ),
    _spec("context-limit", "int", 128000, "The model's context window in tokens.", minimum=256),
    _spec(
        "compression-threshold",
        "float",
        0.85,
        "Compact when the effective context passes this fraction of the usable window.",
        minimum=0.1,
        maximum=1.0,
    ),
    _spec("max-tokens", "int", None, "Maximum output tokens per reply (the output reserve).", minimum=1, optional=True),
    _spec(
        "max-output",
        "int",
        None,
        "The model's own default output limit (a model fact, used for the reserve).",
        minimum=1,
        optional=True,
    ),
    _spec("temperature", "float", None, "Sampling temperature.", minimum=0.0, maximum=2.0, optional=True),
    _spec("retries", "count", 3, "Retries on 429, 5xx and overloaded answers.", minimum=0, maximum=20),
    _spec(
        "timeout", "float", 60.0, "Seconds without data before a stream counts as stalled.", minimum=1.0, maximum=3600.0
    ),
    _spec("system-prompt", "str", "", "System prompt sent before the conversation."),
    _spec(
        "system-prompt-as",
        "enum",
        "instructions",
        "How the OpenAI Responses API gets the system prompt: top-level instructions, or a developer message "
        "first in the input (GPT-6.2 and later put instructions after the input, out of the prompt cache).",
        choices=("instructions", "developer"),
    ),
    _spec("tools.enabled", "bool", True, "Offer the MCP servers' tools to the model."),
    _spec(
        "tools.maxSteps",
        "count",
        25,
        "Tool calls rounds in one turn before tractui stops the loop.",
        minimum=1,
        maximum=500,
    ),
    _spec(
        "tools.maxResultTokens",
        "int",
        8192,
        "A tool result longer than this is cut (the cut is marked) before the model gets it.",
        minimum=64,
    ),
    _spec("compaction.auto", "bool", True, "Compact automatically when the gauge passes the threshold."),
    _spec("compaction.model", "str", None, "Model used to summarise (default: the active one).", optional=True),
    _spec("compaction.profile", "str", None, "Profile used to summarise (default: the active one).", optional=True),
    _spec("compaction.keepTurns", "count", 4, "Most recent turns kept verbatim when compacting.", minimum=0),
    _spec(
        "compaction.keepFraction",
        "float",
        None,
        "Keep recent turns up to this fraction of the limit instead of a turn count.",
        minimum=0.0,
        maximum=0.9,
        optional=True,
    ),
)

REGISTRY: dict[str, SettingSpec] = {s.key: s for s in SPECS}

_COUNT = re.compile(r"^\s*[0-9]+\s*$")
_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*([kKmM]?)\s*$")
_TRUE = {"true", "on", "yes", "1"}
_FALSE = {"false", "off", "no", "0"}


def spec_for(key: str) -> SettingSpec:
    """The spec of ``key``, or a ``SettingError`` suggesting the closest keys."""
    spec = REGISTRY.get(key)
    if spec is not None:
        return spec
    lowered = {k.lower(): k for k in REGISTRY}
    if key.lower() in lowered:
        return REGISTRY[lowered[key.lower()]]
    close = closest(key, list(REGISTRY))
    hint = f"; did you mean {' or '.join(close)}?" if close else "; /set lists every key"
    raise SettingError(f"unknown setting '{key}'{hint}")


def closest(word: str, candidates: list[str], cutoff: float = 0.5) -> list[str]:
    """The candidates nearest to ``word``: the best match and any near-tie, not a list of vague ones."""
    scored = sorted(
        ((difflib.SequenceMatcher(None, word.lower(), c.lower()).ratio(), c) for c in candidates),
        key=lambda pair: -pair[0],
    )
    if not scored or scored[0][0] < cutoff:
        return []
    best = scored[0][0]
    return [c for score, c in scored[:3] if score >= best - 0.03]


def parse_int(text: str) -> int:
    """Parse ``8k``, ``1.5k``, ``0.5M`` (K = 1024) or a plain integer."""
    match = _SIZE.match(text.replace("_", "").replace(",", ""))
    if not match:
        raise ValueError(text)
    number, unit = Fraction(match.group(1)), match.group(2).lower()  # exact: 10**23 stays 10**23
    value = number * (KILO if unit == "k" else KILO * KILO if unit == "m" else 1)
    if not unit and value.denominator != 1:
        raise ValueError(text)
    return round(value)


def parse_value(spec: SettingSpec, raw: Any) -> Any:
    """Turn what a user typed (or a TOML value) into the key's canonical value."""
    if raw is None:
        if spec.optional:
            return None
        raise SettingError(f"{spec.key} cannot be unset to nothing; use /set unset {spec.key} for the default")
    text = str(raw).strip() if not isinstance(raw, (bool, int, float, list, tuple)) else raw
    try:
        if spec.kind == "bool":
            if isinstance(text, bool):
                return text
            low = str(text).lower()
            if low in _TRUE:
                return True
            if low in _FALSE:
                return False
            raise ValueError
        if spec.kind == "int":
            value = text if isinstance(text, int) and not isinstance(text, bool) else parse_int(str(text))
            return _bounded(spec, value)
        if spec.kind == "count":
            if isinstance(text, bool) or (not isinstance(text, int) and not _COUNT.match(str(text))):
                raise ValueError
            return _bounded(spec, int(str(text)))
        if spec.kind == "float":
            if isinstance(text, (bool, list, tuple)):
                raise ValueError
            number = float(text)
            if not math.isfinite(number):
                raise ValueError
            return _bounded(spec, number)
        if spec.kind == "enum":
            low = str(text).lower()
            for choice in spec.choices:
                if choice.lower() == low:
                    return choice
            raise ValueError
        if spec.kind == "tags":
            items = text if isinstance(text, (list, tuple)) else str(text).split(",")
            names = tuple(n.strip().strip("<>/") for n in items if n.strip().strip("<>/"))
            if not names or not all(re.fullmatch(r"[A-Za-z_][\w.-]*", n) for n in names):
                raise ValueError
            if spec.choices:
                if not set(names) <= set(spec.choices):
                    raise ValueError
                return tuple(c for c in spec.choices if c in names)  # in the choices' order
            return names
        if isinstance(text, (bool, int, float, list, tuple)):
            raise ValueError
        return str(text)
    except (ValueError, TypeError):
        raise SettingError(f"bad value '{raw}' for {spec.key}: expected {spec.allowed()}") from None


def _bounded(spec: SettingSpec, value: float) -> Any:
    if spec.minimum is not None and value < spec.minimum:
        raise ValueError
    if spec.maximum is not None and value > spec.maximum:
        raise ValueError
    return value


def format_value(value: Any) -> str:
    """A value as a user would type it back."""
    if value is None:
        return "(unset)"
    if value == "":
        return "(empty)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return ",".join(value)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


class Settings:
    """Current values: defaults plus what the user or a profile changed.

    Listeners are called with the key after every successful change, so the
    UI can apply display settings at once.
    """

    def __init__(self, values: dict[str, Any] | None = None) -> None:
        self._values: dict[str, Any] = {}
        self._listeners: list[Callable[[str], None]] = []
        self._view: SettingsView | None = None
        for key, value in (values or {}).items():
            self.set_value(key, value)

    def get(self, key: str) -> Any:
        spec = spec_for(key)
        return self._values.get(spec.key, spec.default)

    def __getitem__(self, key: str) -> Any:
        return self.get(key)

    @property
    def view(self) -> SettingsView:
        """Every value with its type, for code; rebuilt after a change."""
        if self._view is None:
            self._view = SettingsView(**{field_name(s.key): self._values.get(s.key, s.default) for s in SPECS})
        return self._view

    def set(self, key: str, raw: Any) -> Any:
        """Validate and apply ``raw``; returns the canonical value."""
        return self.set_value(key, raw)

    def set_value(self, key: str, raw: Any) -> Any:
        spec = spec_for(key)
        value = parse_value(spec, raw)
        if value == spec.default:
            self._values.pop(spec.key, None)
        else:
            self._values[spec.key] = value
        self._notify(spec.key)
        return value

    def unset(self, key: str) -> None:
        spec = spec_for(key)
        self._values.pop(spec.key, None)
        self._notify(spec.key)

    def is_changed(self, key: str) -> bool:
        return spec_for(key).key in self._values

    def changed(self) -> dict[str, Any]:
        """Only the keys that differ from their defaults, in registry order."""
        return {s.key: self._values[s.key] for s in SPECS if s.key in self._values}

    def items(self) -> Iterator[tuple[SettingSpec, Any]]:
        for spec in SPECS:
            yield spec, self._values.get(spec.key, spec.default)

    def copy(self) -> Settings:
        clone = Settings()
        clone._values = dict(self._values)
        return clone

    def subscribe(self, listener: Callable[[str], None]) -> None:
        self._listeners.append(listener)

    def _notify(self, key: str) -> None:
        self._view = None
        for listener in list(self._listeners):
            listener(key)
