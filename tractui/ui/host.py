"""Slash commands in the app: ``tractui.conversation.commands`` parses and handles settings
and profiles; this module is the ``CommandContext`` it talks to and carries
out the actions that need the screen or the conversation.
"""

from __future__ import annotations

import contextlib
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, assert_never

from tractui.config.app_config import update_app_config
from tractui.config.paths import data_dir
from tractui.config.profiles import Profile, ProfileStore
from tractui.config.resumed import describe, follow
from tractui.conversation import commands
from tractui.core.settings import Settings, closest
from tractui.core.urls import public_url
from tractui.errors import UserError
from tractui.providers.config import ProviderConfig
from tractui.providers.models import ModelInfo, ModelListError
from tractui.ui.sanitize import sanitize
from tractui.ui.widgets.input_box import InputBox

if TYPE_CHECKING:
    from collections.abc import Collection

    from tractui.ui.screens.chat import ChatScreen

STILL_STREAMING = "a reply is still streaming — Esc cancels it"
COMPACTION_RUNNING = "a compaction is running — Esc cancels it"


class CommandHost:
    """The conversation's screen as seen by ``tractui.conversation.commands.dispatch``."""

    def __init__(self, chat: ChatScreen) -> None:
        self.chat = chat
        self._models: dict[tuple[str, str], list[ModelInfo]] = {}  # per endpoint, for the session
        self._line: str | None = None  # the command line being run, when typed

    # -- CommandContext ----------------------------------------------------
    @property
    def settings(self) -> Settings:
        return self.chat.settings  # the start-up's settings while the conversation is built: completion works at once

    @cached_property
    def profiles(self) -> ProfileStore:
        return ProfileStore()

    @property
    def active_profile(self) -> str | None:
        return self.chat.conversation.profile_name

    @property
    def provider_config(self) -> ProviderConfig:
        return self.chat.conversation.config

    @property
    def mcp_servers(self) -> tuple[str, ...] | None:
        return self.chat.conversation.mcp_servers

    @property
    def configured_servers(self) -> Collection[str]:
        box = self.chat.toolbox
        return box.config.servers.keys() if box is not None else ()

    @property
    def known_models(self) -> list[ModelInfo]:
        return self._models.get(self._endpoint(), [])

    def _endpoint(self) -> tuple[str, str]:
        conversation = self.chat.conversation
        return conversation.config.provider, conversation.provider.base_url

    async def fetch_models(self) -> list[ModelInfo]:
        """The server's list for the current endpoint, fetched once per session; ``ModelListError`` when
        it cannot be had (offline, no key, an error)."""
        endpoint = self._endpoint()
        if endpoint not in self._models:
            self._models[endpoint] = await self.chat.conversation.provider.list_models()
        return self._models[endpoint]

    def switch_profile(self, profile: Profile, *, restart_failed: bool = False) -> None:
        self.chat.conversation.switch_profile(
            profile.provider_config(),
            profile.make_settings(),
            profile.name or None,
            profile.mcp_servers,
            restart_failed=restart_failed,
        )
        self.chat.profile_switched()

    # -- running -----------------------------------------------------------
    def complete(self, line: str) -> list[commands.Completion]:
        fetching = any(w.group == "models" and not w.is_finished for w in self.chat.workers)
        if line.startswith("/model ") and self.chat.ready and self._endpoint() not in self._models and not fetching:
            self.chat.run_worker(self._fetch_quietly(), group="models")  # offered once it is here
        return commands.complete(
            line,
            profiles=self.profiles,
            themes=sorted(self.chat.app.available_themes),
            settings=self.settings,
            models=self.known_models if self.chat.ready else (),
        )

    async def _fetch_quietly(self) -> None:
        with contextlib.suppress(ModelListError):  # /model says why, when asked
            await self.fetch_models()
        if self.chat.is_attached:  # the list the prompt shows for "/model …" now holds them, with no key pressed
            self.chat.query_one(InputBox).post_message(InputBox.OfferChanged())

    async def run(self, line: str, *, typed: bool = True) -> None:
        """Run a slash command ``line``: one ``typed`` in the prompt goes back there when it
        cannot run while a reply streams (one from the palette was never there)."""
        self._line = line if typed else None
        result = commands.dispatch(line, self)
        self.chat.refresh_where()  # a profile deleted (or its file removed by hand) shows as such
        if result.action is None:
            if result.message:
                await self._note(result.message, error=result.error)
            return
        args = result.args
        match result.action:
            case "help":
                await self._do_help(args)
            case "context":
                await self._do_context(args)
            case "compact":
                await self._do_compact(args)
            case "new":
                await self._do_new(args)
            case "sessions":
                await self._do_sessions(args)
            case "retry":
                await self._do_retry(args)
            case "edit":
                await self._do_edit(args)
            case "copy":
                await self._do_copy(args)
            case "export":
                await self._do_export(args)
            case "theme":
                await self._do_theme(args)
            case "tools":
                await self._do_tools(args)
            case "model":
                await self._do_model(args)
            case "clear":
                await self._do_clear(args)
            case "quit":
                await self._do_quit(args)
            case unhandled:
                assert_never(unhandled)

    async def _do_help(self, _: str) -> None:
        from tractui.ui.screens.help import HelpScreen

        rows = [(f"/{c.name} {c.args_hint}".rstrip(), c.help) for c in commands.COMMANDS]
        await self.chat.app.push_screen(HelpScreen(rows, keep=self.chat.prompt_takes))

    async def _do_context(self, _: str) -> None:
        await self.chat.show_context()

    async def _do_compact(self, instructions: str) -> None:
        if await self._busy():
            return
        await self.chat.compact(instructions or None)

    async def _do_new(self, _: str) -> None:
        if await self._busy():
            return
        self.chat.conversation.new_session()
        await self.chat.show_history(fresh=True)
        await self._note("New session. The previous one is in /sessions.")

    async def _do_sessions(self, _: str) -> None:
        if await self._busy():
            return
        from tractui.ui.screens.sessions import SessionsScreen

        conversation = self.chat.conversation
        await self.chat.app.push_screen(SessionsScreen(conversation.store, conversation.session_id), self._open_session)

    async def _open_session(self, session_id: str | None) -> None:
        if session_id is None:
            return
        self.chat.conversation.open_session(session_id)
        await self.chat.show_history(fresh=True)
        await self.follow_session_profile()

    async def follow_session_profile(self) -> None:
        """An opened session goes on with the profile its last reply came from, or the endpoint
        stamped on it (``config.resumed``), when that is not the current one; if its profile no
        longer loads, one line says so."""
        conversation = self.chat.conversation
        last = next((c for c in reversed(conversation.history()) if c.kind == "assistant"), None)
        if last is None or (last.profile and last.profile == conversation.profile_name):
            return
        followed = follow(last, self.profiles)
        current = conversation.config
        if followed.failed is not None:
            await self._note(
                f"{followed.failed}; staying on {conversation.profile_name or current.provider}", error=True
            )
        elif followed.profile is not None:
            result = commands.switch(
                followed.profile,
                self,
                f"switched to profile '{followed.profile.name}', which this session's replies came from",
            )
            await self._note(result.message, error=result.error)
        elif (config := followed.endpoint) is not None and (config.provider, config.model, config.base_url) != (
            current.provider,
            current.model,
            public_url(conversation.provider.base_url),
        ):
            conversation.switch_profile(config, conversation.settings, None, conversation.mcp_servers)
            self.chat.profile_switched()
            await self._note(f"continuing with {describe(config)}, where this session's last reply came from")

    async def _do_retry(self, _: str) -> None:
        if await self._busy():
            return
        await self.chat.retry()

    async def _do_edit(self, _: str) -> None:
        if await self._busy():
            return
        await self.chat.begin_edit()

    async def _do_copy(self, _: str) -> None:
        text = self.chat.last_answer()
        if not text:
            await self._note("nothing to copy: no answer yet in this session", error=True)
            return
        self.chat.app.copy_to_clipboard(sanitize(text))
        await self._note(f"Copied the last answer ({len(text)} characters).")

    async def _do_export(self, args: str) -> None:
        from tractui.store.export import FORMATS, export_text, save_export

        conversation = self.chat.conversation
        if conversation.session_id is None:
            await self._note("nothing to export: the session is empty", error=True)
            return
        words = args.split(maxsplit=1)
        if words and words[0].lower() not in FORMATS and any(c in words[0] for c in "/.~"):
            words = ["json" if words[0].lower().endswith(".json") else "md", args.strip()]  # a PATH alone
        fmt = words[0].lower() if words else "md"
        if fmt not in FORMATS:
            await self._note(f"unknown export format '{fmt}': md or json", error=True)
            return
        folder: Path | None = None
        if len(words) > 1:
            path = Path(words[1]).expanduser()
        else:  # not the folder the app happens to run in: a known place, said in full below
            folder = data_dir() / "exports"
            path = folder / f"tractui-{conversation.session_id.lower()}.{fmt}"
        text = export_text(conversation.store, conversation.session_id, fmt)
        if fmt == "md":
            text = sanitize(text)
        try:
            if folder is not None:
                folder.mkdir(mode=0o700, parents=True, exist_ok=True)  # a file in its place: one line below
            save_export(path, text)
        except OSError as exc:
            await self._note(f"cannot write {path}: {exc.strerror or exc}", error=True)
            return
        await self._note(f"Exported this session to {path.resolve()}")

    async def _do_theme(self, name: str) -> None:
        app = self.chat.app
        themes = sorted(app.available_themes)
        if not name:
            await self._note(f"theme: {app.theme}; available: {', '.join(themes)}")
            return
        if name not in app.available_themes:
            near = closest(name, themes)
            hint = f"; did you mean {near[0]}?" if near else f"; available: {', '.join(themes)}"
            await self._note(f"unknown theme '{name}'{hint}", error=True)
            return
        app.theme = name
        try:
            update_app_config(theme=name)
        except (OSError, ValueError, UserError) as exc:
            await self._note(f"theme switched, but not remembered: {exc}", error=True)
            return
        await self._note(f"Theme: {name} (remembered)")

    async def _do_tools(self, _: str) -> None:
        await self.chat.show_tools()

    async def _do_model(self, _: str) -> None:
        config = self.chat.conversation.config
        here = f"model: {config.model} (provider {config.provider})"
        try:
            models = await self.fetch_models()
        except ModelListError as err:
            await self._note(f"{here}; the server's list cannot be had ({err}); /model NAME still switches")
            return
        if not models:
            await self._note(f"{here}; the server lists no models; /model NAME switches")
            return
        width = max(len(m.id) for m in models)
        lines = [f"{here}; the server lists {len(models)} (/model NAME switches):"]
        for model in models:
            mark = "*" if model.id == config.model else " "
            lines.append(sanitize(f"{mark} {model.id:<{width}}  {commands.model_line(model)}"))
        await self._note("\n".join(lines))

    async def _do_clear(self, _: str) -> None:
        if await self._busy():  # the streaming reply draws into a message the clear would remove
            return
        await self.chat.clear_view()

    async def _do_quit(self, _: str) -> None:
        self.chat.app.exit(0)

    async def _note(self, text: str, *, error: bool = False) -> None:
        """What a command says, where it took effect: while a reply streams (a tool loop), in
        that reply where it has got to, the replies after it below (``ChatScreen.note``)."""
        await self.chat.note(text, error=error, in_reply=True)

    async def _busy(self) -> bool:
        """A reply streams, or the messages queued meanwhile are still to go (into this session)."""
        if self.chat.busy:
            await self.chat.still_streaming(keep=self._line)
            return True
        return False
