"""Startup resolution: config.toml, --profile, provider flags, --set, the demo fallback."""

from __future__ import annotations

import pytest

from tractui.cli.main import parse_options
from tractui.config.app_config import AppConfig, save_app_config
from tractui.config.profiles import ProfileStore
from tractui.config.startup import DEMO, DEMO_NOTICE, resolve_startup
from tractui.errors import ProfileError, SettingError, StartupError
from tractui.providers.transport import ProviderConfig


@pytest.fixture(autouse=True)
def config_dir(tmp_path, monkeypatch):
    folder = tmp_path / "config"
    monkeypatch.setenv("TRACTUI_CONFIG_DIR", str(folder))
    for var in ("MOONSHOT_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "DEEPSEEK_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    return folder


def resolve(*argv: str):
    return resolve_startup(parse_options(list(argv)))


def test_nothing_configured_runs_the_demo_profile_with_a_notice():
    """The shipped demo profile, as `/profile load demo` gives it: until 2026-11-28 the bare demo
    provider with the default 128k window, where the gauge hardly moved, and `/profile load demo`
    then showed another window."""
    start = resolve()
    assert start.config == DEMO and start.profile_name == "demo" and start.theme is None
    assert start.notices == [DEMO_NOTICE]
    assert "/profile load claude" in DEMO_NOTICE and "\n" not in DEMO_NOTICE
    loaded = ProfileStore().load("demo").make_settings()
    assert start.settings.changed() == loaded.changed() and start.settings.get("context-limit") == 32768


def test_a_demo_profile_that_does_not_load_leaves_the_bare_demo_with_a_warning(config_dir):
    (config_dir / "profiles").mkdir(parents=True)
    (config_dir / "profiles" / "demo.toml").write_text("provider = [", encoding="utf-8")
    start = resolve()
    assert start.config == DEMO and start.profile_name is None and start.settings.changed() == {}
    assert start.warnings[0].startswith("profile demo not loaded, using the bare demo:")
    assert DEMO_NOTICE in start.notices


def test_a_resumed_session_is_not_announced_as_demo_mode():
    """``-c`` goes on with the session's own profile or endpoint; saying "Demo mode: no profile
    configured" first was wrong for a session of a real model."""
    assert DEMO_NOTICE not in resolve("-c").notices
    assert DEMO_NOTICE not in resolve("--resume").notices


def reply(profile: str | None = None, **stamps: str):
    from tractui.core.content import Content, TextBlock
    from tractui.store.history import Commit

    content = Content(speaker="ai", blocks=[TextBlock(text="answer")], metadata=dict(stamps))
    return Commit("01", None, "S", "assistant", content, profile=profile)


def test_a_resumed_session_goes_on_with_its_last_replys_profile_over_the_default(monkeypatch):
    monkeypatch.setenv("MOONSHOT_API_KEY", "k")
    save_app_config(AppConfig(default_profile="kimi"))
    start = resolve_startup(parse_options(["-c"]), last_reply=reply("deepseek"))
    assert start.profile_name == "deepseek" and start.config.model.startswith("deepseek")
    assert "continuing with profile 'deepseek', where this session's last reply came from" in start.notices
    assert not any("MOONSHOT" in n for n in start.notices)  # the default's notices do not apply
    chosen = resolve_startup(parse_options(["-c", "--profile", "kimi"]), last_reply=reply("deepseek"))
    assert chosen.profile_name == "kimi" and not any("continuing" in n for n in chosen.notices)
    same = resolve_startup(parse_options(["-c"]), last_reply=reply("kimi"))
    assert same.profile_name == "kimi" and same.notices == []  # nothing to say: it is the default


def test_a_resumed_session_from_an_endpoint_keeps_the_default_profile_that_is_that_endpoint(monkeypatch):
    """Stamps of the default profile's own endpoint: the profile (its settings) goes on, quietly;
    another endpoint is taken with no profile, and said."""
    monkeypatch.setenv("MOONSHOT_API_KEY", "k")
    save_app_config(AppConfig(default_profile="kimi"))
    kimi = {"provider": "openai", "model": "kimi-k2.6", "base_url": "https://api.moonshot.ai/v1"}
    start = resolve_startup(parse_options(["-c"]), last_reply=reply(**kimi, api_key_env="MOONSHOT_API_KEY"))
    assert start.profile_name == "kimi" and start.notices == []
    other = {"provider": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1", "api_key_env": ""}
    start = resolve_startup(parse_options(["-c"]), last_reply=reply(**other))
    assert start.profile_name is None
    assert start.config == ProviderConfig("openai", "m", "http://127.0.0.1:9/v1", "")
    assert start.notices == [
        "continuing with openai · m at http://127.0.0.1:9/v1, where this session's last reply came from"
    ]
    bad = resolve_startup(parse_options(["-c"]), last_reply=reply(provider="nonsense", model="m"))
    assert bad.profile_name == "kimi"  # stamps that name no provider tractui has: the default


def test_default_profile_and_theme_come_from_config_toml(monkeypatch):
    monkeypatch.setenv("MOONSHOT_API_KEY", "k")
    save_app_config(AppConfig(default_profile="kimi", theme="nord"))
    start = resolve()
    assert start.profile_name == "kimi" and start.theme == "nord"
    assert start.config == ProviderConfig("openai", "kimi-k2.6", "https://api.moonshot.ai/v1", "MOONSHOT_API_KEY")
    assert start.settings.get("reasoning.includeInContext") is True
    assert start.notices == []


def test_profile_flag_wins_over_the_default_and_a_missing_key_is_noticed():
    save_app_config(AppConfig(default_profile="kimi"))
    start = resolve("--profile", "claude")
    assert start.profile_name == "claude" and start.config.provider == "anthropic"
    assert start.notices == [
        "ANTHROPIC_API_KEY is not set: requests to claude-sonnet-5-5 will fail until it is (export ANTHROPIC_API_KEY=…)"
    ]


def test_flags_override_the_profile():
    start = resolve("--profile", "kimi", "--model", "kimi-k2-turbo-preview", "--base-url", "http://127.0.0.1:9/v1")
    assert start.config == ProviderConfig(
        "openai", "kimi-k2-turbo-preview", "http://127.0.0.1:9/v1", "MOONSHOT_API_KEY"
    )
    assert start.settings.get("context-limit") == 262144


def test_another_provider_drops_the_profile_endpoint():
    start = resolve("--profile", "kimi", "--provider", "anthropic", "--model", "claude-opus-4-1")
    assert start.config == ProviderConfig("anthropic", "claude-opus-4-1")


def test_provider_flags_alone_skip_the_default_profile():
    save_app_config(AppConfig(default_profile="kimi"))
    start = resolve(
        "--provider", "openai", "--model", "qwen", "--base-url", "http://localhost:8000/v1", "--api-key-env", ""
    )
    assert start.config == ProviderConfig("openai", "qwen", "http://localhost:8000/v1", "")
    assert start.profile_name is None and start.settings.changed() == {} and start.notices == []
    assert resolve("--provider", "demo").config == DEMO


def test_set_flags_apply_last():
    start = resolve("--profile", "kimi", "--set", "reasoning.includeInContext=off", "--set", "reasoning.maxTokens = 2k")
    assert start.settings.get("reasoning.includeInContext") is False
    assert start.settings.get("reasoning.maxTokens") == 2048


@pytest.mark.parametrize(
    ("argv", "error", "fragment"),
    [
        (("--set", "reasoning.efort=high"), SettingError, "did you mean reasoning.effort?"),
        (("--set", "reasoning.effort"), SettingError, "--set needs KEY=VALUE"),
        (("--set", "temperature=hot"), SettingError, "bad value 'hot' for temperature"),
        (("--profile", "nope"), ProfileError, "no profile named 'nope'"),
        (("--provider", "openia", "--model", "x"), StartupError, "unknown provider 'openia'"),
        (("--provider", "openai"), StartupError, "--provider openai needs --model"),
        (("--model", "gpt-4o"), StartupError, "need --provider or --profile"),
        (
            ("--provider", "openai", "--model", "m", "--api-key-env", "sk-abc"),
            ProfileError,
            "api_key_env must be the name",
        ),
    ],
)
def test_bad_flags_are_one_line_errors(argv, error, fragment):
    with pytest.raises(error) as err:
        resolve(*argv)
    assert fragment in str(err.value) and "\n" not in str(err.value)


def test_broken_default_profile_falls_back_to_the_demo_with_the_reason(config_dir):
    (config_dir / "profiles").mkdir(parents=True)
    (config_dir / "profiles" / "mine.toml").write_text("provider = [\n")
    save_app_config(AppConfig(default_profile="mine"))
    start = resolve()
    assert start.config == DEMO
    assert (
        start.notices[0].startswith("default profile not loaded, using the demo: ") and "mine.toml" in start.notices[0]
    )


def test_profile_warnings_and_unknown_config_keys_become_notices(config_dir):
    config_dir.mkdir(parents=True)
    (config_dir / "config.toml").write_text('default_profile = "demo"\ncolour = "x"\n')
    start = resolve()
    assert start.profile_name == "demo"
    assert start.notices == ["config.toml: unknown key 'colour' ignored"]


def test_an_unknown_provider_is_named_before_a_missing_model(config_dir):
    with pytest.raises(StartupError, match="unknown provider 'nope'"):
        resolve("--provider", "nope")
