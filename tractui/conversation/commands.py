"""Slash commands, UI-agnostic: parsing, completion as you type, and dispatch.

``/set``, ``/profile`` and ``/model`` are handled here in full against a
``CommandContext`` (the app or print mode implements it). The others need the
screen or the conversation, so ``dispatch`` returns a ``CommandResult`` whose
``action`` tells the host what to do. Every error is one line and changes
nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from tractui.config.profiles import Profile, ProfileStore, validated
from tractui.config.startup import missing_key_notice
from tractui.core.settings import REGISTRY, SPECS, Settings, closest, format_value, spec_for
from tractui.errors import ProfileError, SettingError, UserError
from tractui.providers.config import ProviderConfig
from tractui.providers.models import ModelInfo
from tractui.providers.preview import describe_parameters, sent_parameters, setting_effect

Action = Literal[
    "help",
    "context",
    "compact",
    "new",
    "sessions",
    "retry",
    "edit",
    "copy",
    "export",
    "theme",
    "tools",
    "model",
    "clear",
    "quit",
]
EXPORT_FORMATS = (("md", "Markdown transcript"), ("json", "JSON with every block and usage"))


@dataclass(frozen=True, slots=True)
class CommandSpec:
    name: str
    args_hint: str
    help: str
    subcommands: tuple[tuple[str, str], ...] = ()  # (word, help) offered after the name

    @property
    def needs_argument(self) -> bool:
        """A hint outside brackets names an argument the command cannot run without (``/profile load``)."""
        return bool(self.args_hint) and not self.args_hint.startswith("[")


@dataclass(frozen=True, slots=True)
class Completion:
    """One suggestion: ``text`` is the whole input line once accepted, ``label`` the word shown."""

    text: str
    help: str = ""
    label: str = ""


@dataclass(frozen=True, slots=True)
class CommandResult:
    """What a command did (``message``) or what the host must do (``action`` with ``args``)."""

    message: str = ""
    error: bool = False
    action: Action | None = None
    args: str = ""


class CommandContext(Protocol):
    """What commands need from their host; ``switch_profile`` calls ``Conversation.switch_profile``."""

    @property
    def settings(self) -> Settings: ...

    @property
    def profiles(self) -> ProfileStore: ...

    @property
    def active_profile(self) -> str | None: ...

    @property
    def provider_config(self) -> ProviderConfig: ...

    @property
    def mcp_servers(self) -> tuple[str, ...] | None:
        """The MCP servers the session uses (the active profile's ``mcp_servers``); all when ``None``."""
        ...

    @property
    def known_models(self) -> Sequence[ModelInfo]:
        """The models the server listed for the current endpoint, once fetched (else empty)."""
        ...

    @property
    def configured_servers(self) -> Collection[str]:
        """The MCP servers config.toml defines: a profile that names another is warned of."""
        ...

    def switch_profile(self, profile: Profile, *, restart_failed: bool = False) -> None:
        """Make ``profile`` the active one; ``restart_failed``: its MCP servers that failed start again."""
        ...


PROFILE_SUBCOMMANDS = (
    ("list", "user and shipped profiles, the active one marked"),
    ("load", "switch to a profile now; the history stays"),
    ("save", "save the current provider, model and changed settings"),
    ("delete", "delete a user profile"),
)

COMMANDS: tuple[CommandSpec, ...] = (
    CommandSpec("help", "", "list the commands"),
    CommandSpec("set", "[KEY [VALUE] | unset KEY]", "show or change settings", (("unset", "restore a key's default"),)),
    CommandSpec("profile", "save|load|list|delete [NAME]", "manage and switch profiles", PROFILE_SUBCOMMANDS),
    CommandSpec("model", "[NAME]", "list the server's models, or switch to one (the provider stays)"),
    CommandSpec("context", "", "how full the context window is, and why"),
    CommandSpec("compact", "[FOCUS]", "summarise older turns to free context"),
    CommandSpec("new", "", "start a new session"),
    CommandSpec("sessions", "", "browse and resume past sessions"),
    CommandSpec("retry", "", "ask for the last reply again"),
    CommandSpec("edit", "", "edit your last message and resend it"),
    CommandSpec("copy", "", "copy the last reply to the clipboard"),
    CommandSpec("export", "[md|json] [PATH]", "export this session", EXPORT_FORMATS),
    CommandSpec("theme", "[NAME]", "switch the colour theme"),
    CommandSpec("tools", "", "MCP servers and their tools; switch a tool off or on, restart a failed server"),
    CommandSpec("clear", "", "clear the screen (the history, and what the model is sent, stay)"),
    CommandSpec("quit", "", "leave tractui"),
)
BY_NAME: dict[str, CommandSpec] = {c.name: c for c in COMMANDS}


def help_text() -> str:
    """Every command with its arguments and help, one per line."""
    width = max(len(f"/{c.name} {c.args_hint}".rstrip()) for c in COMMANDS)
    return "\n".join(f"{f'/{c.name} {c.args_hint}'.rstrip():<{width}}  {c.help}" for c in COMMANDS)


def is_command(line: str) -> bool:
    """A line is a command when it starts with ``/`` followed by a word (``//`` sends a literal ``/``)."""
    return line.startswith("/") and len(line) > 1 and not line.startswith("//") and not line[1].isspace()


# -- dispatch --------------------------------------------------------------


def dispatch(line: str, ctx: CommandContext) -> CommandResult:
    """Run one slash command line against ``ctx``."""
    if not is_command(line):
        return _error("not a command: commands start with /; /help lists them")
    name, _, rest = line[1:].strip().partition(" ")
    name, rest = name.lower(), rest.strip()
    spec = BY_NAME.get(name)
    if spec is None:
        near = closest(name, list(BY_NAME))
        hint = f"; did you mean /{near[0]}?" if near else "; /help lists the commands"
        return _error(f"unknown command /{name}{hint}")
    handler = _HANDLERS.get(name)
    if handler is not None:
        return handler(rest, ctx)
    if name == "help":
        return CommandResult(message=help_text(), action="help")
    if rest and not spec.args_hint:
        return _error(f"/{name} takes no arguments")
    return CommandResult(action=name, args=rest)  # type: ignore[arg-type]


def _error(message: str) -> CommandResult:
    return CommandResult(message=message, error=True)


def _set(rest: str, ctx: CommandContext) -> CommandResult:
    settings = ctx.settings
    if not rest:
        sends = describe_parameters(sent_parameters(ctx.provider_config, settings))
        return CommandResult(message=f"{settings_table(settings)}\nThe next request sends: {sends}")
    first, _, value = rest.partition(" ")
    value = value.strip()
    try:
        if first.lower() == "unset":
            if not value:
                return _error("usage: /set unset KEY")
            spec = spec_for(value)
            before = settings.copy()
            settings.unset(spec.key)
            effect = _effect(ctx, spec.key, before, settings)
            return CommandResult(message=f"{spec.key} = {format_value(spec.default)} (default restored; {effect})")
        if "=" in first and not value:
            first, _, value = first.partition("=")
        spec = spec_for(first)
        if not value:
            return CommandResult(message=describe(settings, spec.key))
        before = settings.copy()
        applied = settings.set(spec.key, value)
    except SettingError as err:
        return _error(str(err))
    if before.get(spec.key) == applied and before.is_changed(spec.key) == settings.is_changed(spec.key):
        return CommandResult(message=f"{spec.key} = {format_value(applied)} (already so: nothing changed)")
    return CommandResult(message=f"{spec.key} = {format_value(applied)} ({_effect(ctx, spec.key, before, settings)})")


# the keys that become request parameters (the others shape the messages, or tractui itself)
PARAMETER_KEYS = frozenset(
    (
        "reasoning.enabled",
        "reasoning.effort",
        "reasoning.maxTokens",
        "reasoning.mode",
        "reasoning.efforts",
        "reasoning.display",
        "reasoning.off",
        "reasoning.summary",
        "temperature",
        "max-tokens",
        "max-output",
    )
)


def _effect(ctx: CommandContext, key: str, before: Settings, after: Settings) -> str:
    """When a change takes effect; for what goes to the server, what it actually sends (or that it is not sent)."""
    if REGISTRY[key].display:
        return "applied now"
    if key in PARAMETER_KEYS:
        return setting_effect(ctx.provider_config, before, after)
    return "takes effect on the next request"


def settings_table(settings: Settings) -> str:
    """``/set`` alone: every key and its value, ``*`` marking the ones changed from the default."""
    width = max(len(spec.key) for spec in SPECS)
    lines = ["Settings (* = changed from the default; /set KEY for help):"]
    for spec, value in settings.items():
        mark = "*" if settings.is_changed(spec.key) else " "
        lines.append(f"{mark} {spec.key:<{width}}  {format_value(value)}")
    return "\n".join(lines)


def describe(settings: Settings, key: str) -> str:
    """``/set KEY``: its value, whether changed, help, allowed values and when it takes effect."""
    spec = spec_for(key)
    value = settings.get(spec.key)
    state = f"changed; default {format_value(spec.default)}" if settings.is_changed(spec.key) else "default"
    when = "at once (display)" if spec.display else "on the next request"
    return "\n".join(
        [
            f"{spec.key} = {format_value(value)} ({state})",
            spec.help,
            f"allowed: {spec.allowed()}",
            f"takes effect {when}",
        ]
    )


def _profile(rest: str, ctx: CommandContext) -> CommandResult:
    sub, _, name = rest.partition(" ")
    sub, name = sub.lower(), name.strip()
    store = ctx.profiles
    try:
        if sub in ("", "list"):
            return CommandResult(message=profile_table(store, ctx.active_profile))
        if sub == "save":
            return _profile_save(name or ctx.active_profile, ctx)
        if sub == "load":
            if not name:
                return _error("usage: /profile load NAME (/profile list shows them)")
            return _profile_load(name, ctx)
        if sub == "delete":
            if not name:
                return _error("usage: /profile delete NAME")
            path = store.delete(name)
            back = " (the shipped profile of that name is visible again)" if store.path_for(name) else ""
            if name == ctx.active_profile:
                back += "; its settings stay in use, and /profile save writes them back"
            return CommandResult(message=f"deleted user profile '{name}' ({path}){back}")
    except ProfileError as err:
        return _error(str(err))
    near = closest(sub, [s for s, _ in PROFILE_SUBCOMMANDS])
    hint = f"; did you mean /profile {near[0]}?" if near else ""
    return _error(f"unknown /profile subcommand '{sub}'{hint} (save, load, list or delete)")


def _profile_save(name: str | None, ctx: CommandContext) -> CommandResult:
    if not name:
        return _error("give the profile a name: /profile save NAME (no profile is active to save over)")
    over = None  # saved over the active profile: what its file has besides the session's setup stays
    if name == ctx.active_profile and ctx.profiles.path_for(name):
        try:
            over = ctx.profiles.load(name)
        except ProfileError as err:  # broken since it was loaded: say the save is what failed
            return _error(f"profile '{name}' not saved: {err}; the file is left as it is")
    path = ctx.profiles.save(name, ctx.provider_config, ctx.settings, ctx.mcp_servers, over)
    changed = len(ctx.settings.changed())
    return CommandResult(
        message=f"saved profile '{name}' ({ctx.provider_config.provider} · {ctx.provider_config.model}, {changed} changed setting{'' if changed == 1 else 's'}) to {path}"
    )


def _profile_load(name: str, ctx: CommandContext) -> CommandResult:
    profile = ctx.profiles.load(name)  # validates everything before anything changes
    return switch(profile, ctx, f"switched to profile '{name}'", restart_failed=True)


def switch(profile: Profile, ctx: CommandContext, what: str, *, restart_failed: bool = False) -> CommandResult:
    """Make ``profile`` the active one; the note says ``what`` happened, with its warnings.
    ``restart_failed`` (``/profile load``): the MCP servers it uses that failed start again,
    as a fresh start with it would start them."""
    try:
        ctx.switch_profile(profile, restart_failed=restart_failed)
    except UserError as err:
        return _error(f"could not switch: {err}")
    lines = [f"{what} ({profile.provider} · {profile.model}); the history stays, the next request uses it"]
    lines.extend(f"warning: {w}" for w in profile.warnings)
    for server in profile.mcp_servers or ():
        if server not in ctx.configured_servers:
            lines.append(f"warning: no MCP server '{server}' in config.toml (its tools are not offered)")
    if (missing := missing_key_notice(profile.provider_config())) is not None:
        lines.append(f"warning: {missing}")
    return CommandResult(message="\n".join(lines))


def profile_table(store: ProfileStore, active: str | None) -> str:
    """``/profile list``: user and shipped profiles, ``*`` marking the active one."""
    entries = store.entries()
    if not entries:
        return "No profiles yet: /profile save NAME saves the current setup."
    width = max(len(e.name) for e in entries)
    lines = ["Profiles (* = active):"]
    for e in entries:
        mark = "*" if e.name == active and not e.shadowed else " "
        if e.problem:
            detail = f"cannot load: {e.problem}"
        else:
            detail = f"{e.provider} · {e.model}" + ("  (hidden by the user profile)" if e.shadowed else "")
        lines.append(f"{mark} {e.name:<{width}}  {e.source:<7}  {detail}")
    return "\n".join(lines)


def _model(rest: str, ctx: CommandContext) -> CommandResult:
    config = ctx.provider_config
    if not rest:
        return CommandResult(action="model")  # the list comes from the server: the host fetches it
    if " " in rest:
        return _error("usage: /model NAME (one model name, no spaces)")
    listed = {m.id: m for m in ctx.known_models}
    settings = ctx.settings.changed()
    info = listed.get(rest)
    window = info.context_limit if info is not None else None
    if "context-limit" in settings:  # the user's (or the profile's) figure stands
        window = None
    if window is not None:  # the server's figure for this model
        settings = {**settings, "context-limit": window}
    try:
        profile = validated(
            lambda: Profile(
                name=ctx.active_profile or "",  # no profile stays no profile: nothing to save over by accident
                provider=config.provider,
                model=rest,
                base_url=config.base_url,
                api_key_env=config.api_key_env,
                mcp_servers=ctx.mcp_servers,
                settings=settings,
            ),
            "/model",
        )
    except ProfileError as err:
        return _error(str(err))
    result = switch(profile, ctx, f"switched model to {rest}")
    lines = [result.message]
    if window is not None:
        lines.append(f"context-limit {window:,} (the server's figure for {rest})")
    if listed and info is None:
        lines.append(f"warning: {rest} is not in the server's list of {len(listed)} models (/model lists them)")
    return CommandResult(message="\n".join(lines), error=result.error)


_HANDLERS: dict[str, Callable[[str, CommandContext], CommandResult]] = {
    "set": _set,
    "profile": _profile,
    "model": _model,
}


# -- completion ------------------------------------------------------------


def complete(
    line: str,
    *,
    profiles: ProfileStore | None = None,
    themes: Sequence[str] = (),
    settings: Settings | None = None,
    models: Sequence[ModelInfo] = (),
) -> list[Completion]:
    """Suggestions for ``line`` as typed so far: command names, then each command's arguments."""
    if not line.startswith("/") or line.startswith("//"):
        return []
    if " " not in line:
        typed = line[1:].lower()
        return [
            Completion(f"/{c.name}" + (" " if c.args_hint else ""), c.help, f"/{c.name}")
            for c in COMMANDS
            if c.name.startswith(typed)
        ]
    name, _, rest = line[1:].partition(" ")
    name = name.lower()
    head = f"/{name} "
    if name == "set":
        return _complete_set(head, rest, settings)
    if name == "profile":
        sub, space, word = rest.partition(" ")
        if not space:
            return _words(head, sub, PROFILE_SUBCOMMANDS, trailing=" ")
        if sub.lower() in ("load", "save", "delete") and profiles is not None:
            entries = [e for e in profiles.entries() if sub.lower() != "delete" or e.source == "user"]
            choices: dict[str, str] = {}
            for e in entries:  # user first, so a user profile's row wins over the shipped one it hides
                choices.setdefault(e.name, f"{e.source}: {e.provider} · {e.model}" if e.provider else e.source)
            return _words(f"{head}{sub} ", word, tuple(choices.items()))
        return []
    if name == "theme":
        return _words(head, rest, tuple((t, "theme") for t in themes))
    if name == "model":
        return _words(head, rest, tuple((m.id, model_line(m)) for m in models))
    if name == "export" and " " not in rest:
        return _words(head, rest, EXPORT_FORMATS, trailing=" ")
    return []


def model_line(model: ModelInfo) -> str:
    """What a listed model is, in a few words: its name and its window when the server says."""
    parts = [model.name] if model.name and model.name != model.id else []
    if model.context_limit:
        parts.append(f"{model.context_limit:,}-token window")
    return " · ".join(parts) or "window not listed"


def _complete_set(head: str, rest: str, settings: Settings | None) -> list[Completion]:
    key, space, value = rest.partition(" ")
    if not space:
        keys = (*((s.key, s.help) for s in SPECS), ("unset", "restore a key's default"))
        found = _words(head, key, keys, trailing=" ")
        if not found and key:  # "includeIn" finds reasoning.includeInContext too
            found = [Completion(f"{head}{k} ", h, k) for k, h in keys if key.lower() in k.lower()]
        return found
    if key.lower() == "unset":
        changed = settings.changed() if settings is not None else {s.key: None for s in SPECS}
        return _words(f"{head}unset ", value, tuple((k, REGISTRY[k].help) for k in changed))
    spec = REGISTRY.get(key) or next((s for s in SPECS if s.key.lower() == key.lower()), None)
    if spec is None:
        return []
    current = settings.get(spec.key) if settings is not None else spec.default
    if spec.kind == "bool":
        options: Sequence[str] = ("true", "false")
    elif spec.kind == "enum":
        options = spec.choices
    else:
        return (
            [Completion(f"{head}{spec.key} ", f"{spec.allowed()}; now {format_value(current)}", spec.key)]
            if not value
            else []
        )

    def note(option: str) -> str:
        marks = [
            m
            for m, on in (
                ("current", format_value(current) == option),
                ("default", format_value(spec.default) == option),
            )
            if on
        ]
        return ", ".join(marks)

    return _words(f"{head}{spec.key} ", value, tuple((o, note(o)) for o in options))


def _words(prefix: str, typed: str, options: Sequence[tuple[str, str]], trailing: str = "") -> list[Completion]:
    """Options starting with ``typed`` (case-insensitive), as whole-line completions."""
    low = typed.lower()
    return [
        Completion(f"{prefix}{word}{trailing}", help, word) for word, help in options if word.lower().startswith(low)
    ]
