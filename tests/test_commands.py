"""Slash commands: parsing, completion, /set and /profile flows, switching mid-conversation."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from loopback import FIXTURES, LoopbackServer, openai_chat_reply, sse

from tractui.config.profiles import Profile, ProfileStore
from tractui.conversation.commands import (
    COMMANDS,
    Completion,
    complete,
    dispatch,
    help_text,
    is_command,
)
from tractui.conversation.conversation import Conversation
from tractui.core.settings import REGISTRY, SPECS, Settings
from tractui.errors import UnknownProvider
from tractui.providers.models import ModelInfo
from tractui.providers.transport import ProviderConfig
from tractui.store.history import HistoryStore

CLAUDE_STREAM = FIXTURES / "anthropic_thinking" / "claude_sonnet4_stream_thinking_signature.sse"
CLAUDE_THINKING = (
    "This is a straightforward question about pedestrian safety. I should provide clear, helpful advice about how "
    "to safely cross a street. This is basic safety information that could help prevent accidents."
)


@dataclass
class Host:
    """A minimal CommandContext: what the app does, minus the screen."""

    settings: Settings
    profiles: ProfileStore
    provider_config: ProviderConfig = field(default_factory=lambda: ProviderConfig("demo", "demo"))
    active_profile: str | None = None
    mcp_servers: tuple[str, ...] | None = None
    switched: list[Profile] = field(default_factory=list)
    refuse: bool = False
    known_models: list[ModelInfo] = field(default_factory=list)
    configured_servers: tuple[str, ...] = ("demo",)

    def switch_profile(self, profile: Profile, *, restart_failed: bool = False) -> None:
        if self.refuse:
            raise UnknownProvider("provider could not be started")
        self.switched.append(profile)
        self.provider_config = profile.provider_config()
        self.settings = Settings(profile.settings)
        self.active_profile = profile.name or None
        self.mcp_servers = profile.mcp_servers


@pytest.fixture
def host(tmp_path, monkeypatch) -> Host:
    monkeypatch.setenv("TRACTUI_CONFIG_DIR", str(tmp_path / "config"))
    return Host(Settings(), ProfileStore())


def run(host: Host, line: str):
    return dispatch(line, host)


# -- parsing and the simple actions -----------------------------------------


def test_help_lists_every_command_with_its_help(host):
    text = help_text()
    for spec in COMMANDS:
        assert f"/{spec.name}" in text and spec.help in text
    result = run(host, "/help")
    assert result.action == "help" and result.message == text


@pytest.mark.parametrize(
    ("line", "action", "args"),
    [
        ("/context", "context", ""),
        ("/compact", "compact", ""),
        ("/compact keep the API design", "compact", "keep the API design"),
        ("/new", "new", ""),
        ("/sessions", "sessions", ""),
        ("/retry", "retry", ""),
        ("/edit", "edit", ""),
        ("/copy", "copy", ""),
        ("/export md notes.md", "export", "md notes.md"),
        ("/theme", "theme", ""),
        ("/theme nord", "theme", "nord"),
        ("/clear", "clear", ""),
        ("/QUIT", "quit", ""),
    ],
)
def test_host_commands_return_their_action(host, line, action, args):
    result = run(host, line)
    assert (result.action, result.args, result.error) == (action, args, False)


def test_every_registered_command_dispatches(host):
    for spec in COMMANDS:
        result = run(host, f"/{spec.name}")
        assert not result.error or spec.name in ("model",), spec.name
        assert result.message or result.action, spec.name


def test_unknown_command_suggests_the_closest(host):
    result = run(host, "/sett reasoning.effort high")
    assert result.error and result.message == "unknown command /sett; did you mean /set?"
    assert run(host, "/zzzzzz").message == "unknown command /zzzzzz; /help lists the commands"
    assert host.settings.changed() == {}


def test_arguments_where_none_are_taken_are_refused(host):
    assert run(host, "/quit now").message == "/quit takes no arguments"


def test_what_counts_as_a_command():
    assert is_command("/set") and is_command("/x y")
    assert (
        not is_command("hello /set")
        and not is_command("/")
        and not is_command("// not a command")
        and not is_command("/ x")
    )


# -- /set -------------------------------------------------------------------


def test_set_alone_lists_every_key_and_marks_changed_ones(host):
    host.settings.set("reasoning.effort", "high")
    lines = run(host, "/set").message.splitlines()
    assert len(lines) == 1 + len(SPECS) + 1
    assert lines[-1] == "The next request sends: no parameters besides the conversation"  # the demo takes none
    marked = [line for line in lines[1:] if line.startswith("*")]
    assert len(marked) == 1 and "reasoning.effort" in marked[0] and marked[0].rstrip().endswith("high")
    assert any(line.split()[0] == "context-limit" and line.split()[1] == "128000" for line in lines[1:])
    assert any(line.split() == ["system-prompt", "(empty)"] for line in lines[1:])  # it was blank


def test_set_key_shows_value_help_allowed_and_timing(host):
    message = run(host, "/set reasoning.stripfromcontext").message
    assert message.splitlines() == [
        "reasoning.stripFromContext = none (default)",
        REGISTRY["reasoning.stripFromContext"].help,
        "allowed: all, allButLast, none",
        "takes effect on the next request",
    ]
    assert "takes effect at once" in run(host, "/set reasoning.includeInResponse").message


def test_set_key_value_applies_at_once_in_canonical_form(host):
    heard: list[str] = []
    host.settings.subscribe(heard.append)
    result = run(host, "/set reasoning.stripFromContext AllButLast")
    assert not result.error
    assert result.message == "reasoning.stripFromContext = allButLast (takes effect on the next request)"
    assert host.settings.get("reasoning.stripFromContext") == "allButLast"
    assert heard == ["reasoning.stripFromContext"]
    assert run(host, "/set reasoning.includeInResponse off").message.endswith("(applied now)")
    assert run(host, "/set context-limit=0.5M").message.startswith("context-limit = 524288")
    run(host, "/set system-prompt You are terse.  Answer briefly.")
    assert host.settings.get("system-prompt") == "You are terse.  Answer briefly."


def test_set_to_the_value_it_has_says_nothing_changed(host):
    """Not "not sent … as things are" beside a request that sends it: the value was already so."""
    first = run(host, "/set temperature 0.7")
    assert not first.error and "nothing changed" not in first.message
    assert run(host, "/set temperature 0.70").message == "temperature = 0.7 (already so: nothing changed)"


def test_set_errors_are_one_line_and_change_nothing(host):
    host.settings.set("reasoning.effort", "low")
    before = host.settings.changed()
    for line, fragment in [
        ("/set reasoning.includeInContxt on", "did you mean reasoning.includeInContext?"),
        ("/set reasoning.effort extreme", "expected none, minimal, low, medium, high, xhigh, max"),
        ("/set reasoning.maxTokens lots", "8k, 1.5k and 0.5M accepted"),
        ("/set compaction.keepTurns 1.5k", "expected a whole number ≥ 0 (no fractions, no k or M)"),
        ("/set compaction.keepTurns 2k", "expected a whole number ≥ 0"),
        ("/set retries 0.01k", "expected a whole number from 0 to 20"),
        ("/set unset", "usage: /set unset KEY"),
        ("/set unset nonsense.key", "unknown setting 'nonsense.key'"),
    ]:
        result = run(host, line)
        assert result.error and fragment in result.message and "\n" not in result.message, line
    assert host.settings.changed() == before


def test_set_unset_restores_the_default(host):
    run(host, "/set retries 7")
    assert run(host, "/set unset retries").message == "retries = 3 (default restored; takes effect on the next request)"
    assert host.settings.changed() == {}


# -- /profile ----------------------------------------------------------------


def test_profile_list_marks_the_active_one(host):
    host.active_profile = "kimi"
    lines = run(host, "/profile list").message.splitlines()
    active = [line for line in lines if line.startswith("*")]
    assert len(active) == 1 and active[0].split()[1] == "kimi" and "shipped" in active[0]
    assert any("claude" in line and "anthropic · claude-sonnet-5-5" in line for line in lines)
    assert run(host, "/profile").message == run(host, "/profile list").message


def test_profile_save_load_delete_flow(host):
    host.provider_config = ProviderConfig("openai", "my-model", "http://localhost:9/v1", "")
    run(host, "/set reasoning.effort high")
    saved = run(host, "/profile save work")
    assert not saved.error and "saved profile 'work'" in saved.message and "1 changed setting)" in saved.message
    run(host, "/set unset reasoning.effort")
    host.provider_config = ProviderConfig("demo", "demo")
    loaded = run(host, "/profile load work")
    assert not loaded.error and loaded.message.startswith("switched to profile 'work' (openai · my-model)")
    assert host.provider_config == ProviderConfig("openai", "my-model", "http://localhost:9/v1", "")
    assert host.settings.changed() == {"reasoning.effort": "high"}
    assert host.active_profile == "work"
    assert "user" in next(line for line in run(host, "/profile list").message.splitlines() if "work" in line)
    deleted = run(host, "/profile delete work").message
    assert deleted.startswith("deleted user profile 'work'")
    assert deleted.endswith("; its settings stay in use, and /profile save writes them back")  # it was the active one
    assert run(host, "/profile load work").error


def test_profile_save_without_name_overwrites_the_active_profile(host):
    assert run(host, "/profile save").message.startswith("give the profile a name: /profile save NAME")
    run(host, "/profile load claude")
    run(host, "/set reasoning.maxTokens 4k")
    result = run(host, "/profile save")
    assert "saved profile 'claude'" in result.message
    mine = host.profiles.load("claude")
    assert mine.settings["reasoning.maxTokens"] == 4096
    assert mine.description == "Claude Sonnet 5.5: adaptive thinking, summarized"


def test_saving_over_the_active_profile_broken_since_it_loaded_says_the_save_failed(host):
    """It said only "…/mine.toml: Illegal character …", not that nothing was saved (until 2026-11-28)."""
    run(host, "/profile save mine")
    run(host, "/profile load mine")
    path = host.profiles.path_for("mine")
    path.write_text("provider = [\n", encoding="utf-8")  # broken by hand since
    result = run(host, "/profile save")
    assert result.error and result.message.startswith(f"profile 'mine' not saved: {path}")
    assert result.message.endswith("; the file is left as it is") and "\n" not in result.message
    assert path.read_text(encoding="utf-8") == "provider = [\n"


@pytest.mark.parametrize("in_the_way", ["profiles folder is a file", "profile is a folder"])
def test_a_profile_that_cannot_be_written_is_one_line_and_nothing_changes(host, tmp_path, in_the_way):
    config = tmp_path / "config"
    config.mkdir()
    if in_the_way == "profiles folder is a file":
        (config / "profiles").write_text("x")
    else:
        (config / "profiles" / "mine.toml").mkdir(parents=True)
    result = run(host, "/profile save mine")
    assert result.error and result.message.startswith(f"cannot write {config / 'profiles'}")
    assert "\n" not in result.message
    leftovers = sorted(p.name for p in (config / "profiles").iterdir()) if (config / "profiles").is_dir() else []
    assert leftovers == (["mine.toml"] if in_the_way == "profile is a folder" else [])  # no temporary file left


def test_profile_save_keeps_the_profiles_mcp_servers_and_what_else_its_file_has(host):
    path = host.profiles.user_dir / "ldemoonly.toml"
    path.parent.mkdir(parents=True)
    original = (
        'provider = "demo"\nmodel = "demo"\ndescription = "demo tools only"\nmcp_servers = ["demo"]\n'
        'notes = "kept for me"\n\n[settings]\nretries = 3\n'
    )
    path.write_text(original)
    run(host, "/profile load ldemoonly")
    run(host, "/set retries 1")
    assert not run(host, "/profile save").error
    saved = host.profiles.load("ldemoonly")
    assert saved.settings["retries"] == 1 and saved.mcp_servers == ("demo",)
    assert saved.description == "demo tools only" and saved.other_keys == {"notes": "kept for me"}
    assert path.read_text() == original.replace("retries = 3", "retries = 1")  # the one value changed
    run(host, "/model demo-2")  # another model: the profile's servers stay
    assert host.mcp_servers == ("demo",)
    run(host, "/profile save copy")  # the session's servers go with it; the description is the file's own
    copy = host.profiles.load("copy")
    assert copy.mcp_servers == ("demo",) and copy.model == "demo-2" and copy.description is None
    run(host, "/profile load claude")
    run(host, "/profile save mine")
    assert host.profiles.load("mine").mcp_servers is None  # a profile without the key: every server


def test_delete_shipped_profile_is_refused(host):
    result = run(host, "/profile delete claude")
    assert result.error and result.message == "'claude' is a shipped profile; only user profiles can be deleted"


def test_loading_a_bad_profile_leaves_the_session_as_it_was(host, tmp_path):
    host.settings.set("temperature", "0.3")
    folder = tmp_path / "config" / "profiles"
    folder.mkdir(parents=True)
    (folder / "bad.toml").write_text('provider = "openai"\nmodel = "m"\n[settings]\ntemperature = 9\n')
    before = (host.provider_config, host.settings.changed(), host.active_profile)
    result = run(host, "/profile load bad")
    assert result.error and "bad.toml (line 4): bad value '9' for temperature" in result.message
    for line in ("/profile load missing", "/profile load", "/profile frobnicate x"):
        assert run(host, line).error
    host.refuse = True
    refused = run(host, "/profile load kimi")
    assert refused.error and refused.message == "could not switch: provider could not be started"
    assert (host.provider_config, host.settings.changed(), host.active_profile) == before
    assert host.switched == []


def test_profile_load_reports_warnings(host, tmp_path):
    folder = tmp_path / "config" / "profiles"
    folder.mkdir(parents=True)
    (folder / "odd.toml").write_text('provider = "demo"\nmodel = "demo"\nflavour = "x"\n')
    result = run(host, "/profile load odd")
    assert not result.error and "warning:" in result.message and "unknown key 'flavour'" in result.message


def test_profile_load_warns_of_a_server_config_toml_does_not_define(host, tmp_path):
    """As a start with that profile does: until 2026-11-28 only /tools told, when asked."""
    folder = tmp_path / "config" / "profiles"
    folder.mkdir(parents=True)
    (folder / "tooled.toml").write_text('provider = "demo"\nmodel = "demo"\nmcp_servers = ["demo", "nosuch"]\n')
    result = run(host, "/profile load tooled")
    assert not result.error and host.active_profile == "tooled"
    assert "warning: no MCP server 'nosuch' in config.toml (its tools are not offered)" in result.message
    assert "'demo'" not in result.message


def test_profile_load_says_at_once_when_the_key_is_not_set(host, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    result = run(host, "/profile load claude")
    assert not result.error and "warning: ANTHROPIC_API_KEY is not set" in result.message
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    assert "is not set" not in run(host, "/profile load claude").message


def test_model_switches_within_the_provider_and_keeps_settings(host):
    run(host, "/profile load kimi")
    run(host, "/set reasoning.effort low")
    assert run(host, "/model").action == "model"  # the app lists what the server offers
    result = run(host, "/model kimi-k2-turbo-preview")
    assert not result.error
    assert host.provider_config == ProviderConfig(
        "openai", "kimi-k2-turbo-preview", "https://api.moonshot.ai/v1", "MOONSHOT_API_KEY"
    )
    assert host.settings.get("reasoning.effort") == "low" and host.settings.get("context-limit") == 262144
    assert host.active_profile == "kimi"
    assert run(host, "/model two words").error


def test_model_checks_the_servers_list_and_takes_its_window(host):
    host.provider_config = ProviderConfig("openai", "kimi-k2.6", "https://api.moonshot.ai/v1", "")
    host.known_models = [ModelInfo("kimi-k3", context_limit=524288, name="Kimi K3"), ModelInfo("kimi-k2.6")]
    result = run(host, "/model kimi-k3")
    assert not result.error and host.settings.get("context-limit") == 524288
    assert "context-limit 524,288 (the server's figure for kimi-k3)" in result.message
    result = run(host, "/model kimi-typo")
    assert not result.error and host.provider_config.model == "kimi-typo"  # a typed id is still taken
    assert "warning: kimi-typo is not in the server's list of 2 models" in result.message
    run(host, "/set context-limit 100000")
    run(host, "/model kimi-k3")
    assert host.settings.get("context-limit") == 100000  # what the user set stands
    assert texts(complete("/model kimi-k", models=host.known_models)) == ["/model kimi-k3", "/model kimi-k2.6"]
    assert complete("/model kimi-k3", models=host.known_models)[0].help == "Kimi K3 · 524,288-token window"


# -- completion ---------------------------------------------------------------


def texts(items: list[Completion]) -> list[str]:
    return [c.text for c in items]


def test_completion_of_command_names_carries_help():
    found = complete("/se")
    assert texts(found) == ["/set ", "/sessions"]
    assert found[0].help == "show or change settings"
    assert len(complete("/")) == len(COMMANDS)
    assert complete("hello") == [] and complete("/nothing") == []


def test_completion_of_set_keys_then_values():
    keys = complete("/set reasoning.e")
    assert texts(keys) == ["/set reasoning.enabled ", "/set reasoning.effort ", "/set reasoning.efforts "]
    assert keys[1].help == REGISTRY["reasoning.effort"].help
    assert texts(complete("/set includeinc")) == ["/set reasoning.includeInContext "]
    assert [c.label for c in complete("/set reasoning.stripFromContext ")] == ["all", "allButLast", "none"]
    assert texts(complete("/set reasoning.stripfromcontext allb")) == ["/set reasoning.stripFromContext allButLast"]
    settings = Settings({"reasoning.enabled": False})
    bools = complete("/set reasoning.enabled ", settings=settings)
    assert [(c.label, c.help) for c in bools] == [("true", "default"), ("false", "current")]
    assert "now 128000" in complete("/set context-limit ")[0].help
    assert texts(complete("/set unset ", settings=settings)) == ["/set unset reasoning.enabled"]


def test_completion_of_profiles_and_themes(host):
    assert [c.label for c in complete("/profile ")] == ["list", "load", "save", "delete"]
    assert texts(complete("/profile load gem", profiles=host.profiles)) == [
        "/profile load gemini-flash",
        "/profile load gemini-pro",
    ]
    assert complete("/profile delete ", profiles=host.profiles) == []  # only user profiles can be deleted
    assert texts(complete("/theme n", themes=["nord", "monokai", "night"])) == ["/theme nord", "/theme night"]
    assert [c.label for c in complete("/export ")] == ["md", "json"]


# -- switching from Claude to Kimi mid-conversation, over loopback ------------


@dataclass
class ConversationHost:
    """The CommandContext the app builds around a real Conversation."""

    conversation: Conversation
    profiles: ProfileStore
    configured_servers: tuple[str, ...] = ()

    @property
    def settings(self) -> Settings:
        return self.conversation.settings

    @property
    def provider_config(self) -> ProviderConfig:
        return self.conversation.config

    @property
    def active_profile(self) -> str | None:
        return self.conversation.profile_name

    @property
    def mcp_servers(self) -> tuple[str, ...] | None:
        return self.conversation.mcp_servers

    def switch_profile(self, profile: Profile, *, restart_failed: bool = False) -> None:
        self.conversation.switch_profile(
            profile.provider_config(),
            profile.make_settings(),
            profile.name,
            profile.mcp_servers,
            restart_failed=restart_failed,
        )


def local_copy(store: ProfileStore, shipped: str, name: str, url: str) -> None:
    """A user profile that is the shipped one pointed at the loopback server."""
    store.write(store.load(shipped).model_copy(update={"name": name, "base_url": url}))


async def drain(stream) -> None:
    async for _ in stream:
        pass


async def claude_then(other: str, tmp_path, monkeypatch, loopback: LoopbackServer) -> dict:
    """One Claude turn (a recorded stream), ``/profile load`` of ``other`` pointed at loopback, one more turn.

    Returns the JSON body of the second request, the one the new provider received.
    """
    monkeypatch.setenv("TRACTUI_CONFIG_DIR", str(tmp_path / "config"))
    for var in ("ANTHROPIC_API_KEY", "MOONSHOT_API_KEY", "DEEPSEEK_API_KEY"):
        monkeypatch.setenv(var, "test-key")
    store = ProfileStore()
    local_copy(store, "claude", "claude-local", loopback.url)
    local_copy(store, other, f"{other}-local", f"{loopback.url}/v1")
    claude = store.load("claude-local")
    conversation = Conversation(
        HistoryStore(tmp_path / "history.db"),
        claude.make_settings(),
        claude.provider_config(),
        profile_name="claude-local",
    )
    host = ConversationHost(conversation, store)
    try:
        loopback.add(sse(CLAUDE_STREAM, seed=1))
        await drain(conversation.send("How do I cross the street?"))
        assert loopback.requests[0].path == "/v1/messages"
        result = dispatch(f"/profile load {other}-local", host)
        assert not result.error, result.message
        assert host.active_profile == f"{other}-local"
        assert len(conversation.history()) >= 2, "the history stays across the switch"
        loopback.add(openai_chat_reply("Use the crossing.", reasoning="Short answer."))
        await drain(conversation.send("And at night?"))
    finally:
        await conversation.aclose()
    request = loopback.requests[1]
    assert request.path == "/v1/chat/completions"
    assert request.json["messages"][-1] == {"role": "user", "content": "And at night?"}
    return request.json


async def test_claude_thinking_goes_to_kimi_as_reasoning_content(tmp_path, monkeypatch, loopback: LoopbackServer):
    body = await claude_then("kimi", tmp_path, monkeypatch, loopback)
    assert body["model"] == "kimi-k2.6"
    assistant = next(m for m in body["messages"] if m["role"] == "assistant")
    assert assistant["reasoning_content"] == CLAUDE_THINKING
    assert assistant["content"].startswith("Here are the basic steps for safely crossing the street")
    assert "signature" not in str(assistant), "Anthropic's signature never leaks to another provider"


async def test_switching_to_deepseek_sends_no_thinking(tmp_path, monkeypatch, loopback: LoopbackServer):
    body = await claude_then("deepseek", tmp_path, monkeypatch, loopback)
    assert body["model"] == "deepseek-v4-pro" and body["thinking"] == {"type": "enabled"}
    assistant = next(m for m in body["messages"] if m["role"] == "assistant")
    assert "reasoning_content" not in assistant, "earlier turns' thinking stays home (includeInContext off)"
    assert assistant["content"].startswith("Here are the basic steps")


def test_set_says_what_the_server_will_actually_get(host):
    host.provider_config = ProviderConfig("openai", "m", "http://127.0.0.1:9/v1", "")
    message = run(host, "/set reasoning.maxTokens 8k").message
    assert message.startswith("reasoning.maxTokens = 8192 (not sent to this openai server as things are")
    message = run(host, "/set reasoning.effort high").message
    assert message == 'reasoning.effort = high (the next request sends reasoning_effort="high")'
    message = run(host, "/set reasoning.mode switch").message
    assert message == 'reasoning.mode = switch (the next request sends thinking={"type":"enabled"})'
    assert run(host, "/set").message.splitlines()[-1] == (
        'The next request sends: thinking={"type":"enabled"}, reasoning_effort="high"'
    )
    host.provider_config = ProviderConfig("anthropic", "claude-opus-5-5", "http://127.0.0.1:9", "")
    message = run(host, "/set reasoning.mode budget").message
    assert "the next request sends" in message and '"type":"enabled"' in message and "budget_tokens" in message
