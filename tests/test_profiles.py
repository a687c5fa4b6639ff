"""Profiles: TOML round trips, user over shipped, refusals, permissions, atomic writes."""

from __future__ import annotations

import stat
import tomllib
from pathlib import Path

import pytest

from tractui.config.app_config import AppConfig, load_app_config, save_app_config, update_app_config
from tractui.config.files import write_private
from tractui.config.paths import shipped_dir
from tractui.config.profiles import Profile, ProfileStore, looks_like_key
from tractui.core.settings import Settings
from tractui.errors import ProfileError
from tractui.providers.transport import ProviderConfig

SHIPPED = sorted(p.stem for p in shipped_dir("profiles").glob("*.toml"))
REQUIRED_SHIPPED = {  # today's models (issue 19): Claude, DeepSeek V4, Kimi K2.6 and K3, Gemini 3, GPT-5.x and 6.2, MiniMax, locals
    "claude",
    "claude-opus",
    "deepseek",
    "deepseek-flash",
    "kimi",
    "kimi-k3",
    "gemini-pro",
    "gemini-flash",
    "gpt-5",
    "gpt-6",
    "gpt-6-sol",
    "minimax",
    "openrouter",
    "qwen3-vllm",
    "gpt-oss-ollama",
    "gpt-oss-llamacpp",
    "demo",
}
RETIRED = {  # retired, or legacy names the vendor now routes to another model
    "kimi-k2-thinking",
    "deepseek-reasoner",
    "deepseek-chat",
    "deepseek-v4-flash",
    "gemini-3.5-flash",
    "claude-sonnet-4-5",
    "gpt-4o",
    "o4-mini",
}


@pytest.fixture
def config_dir(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "config"
    monkeypatch.setenv("TRACTUI_CONFIG_DIR", str(folder))
    return folder


@pytest.fixture
def store(config_dir) -> ProfileStore:
    return ProfileStore()


def write_user(config_dir: Path, name: str, text: str) -> Path:
    path = config_dir / "profiles" / f"{name}.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_the_shipped_set_is_complete_and_names_no_retired_model(store):
    assert set(SHIPPED) >= REQUIRED_SHIPPED
    assert not {store.load(name).model for name in SHIPPED} & RETIRED


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_profile_loads_cleanly_and_explains_itself(store, name):
    profile = store.load(name)
    assert profile.warnings == ()
    assert profile.settings["context-limit"] >= 4096
    text = (shipped_dir("profiles") / f"{name}.toml").read_text()
    assert text.startswith("# ") and "Why:" in text and "Sources" in text, (
        "each shipped profile says why its reasoning choices are what they are, and where its figures come from"
    )
    if profile.provider not in ("demo",) and not (profile.base_url or "").startswith("http://localhost"):
        assert profile.api_key_env and profile.api_key_env.endswith("_API_KEY")
    Settings(profile.settings)  # every value is valid for the registry


def test_shipped_reasoning_choices_match_what_the_providers_document(store):
    kimi = store.load("kimi").make_settings()
    assert (kimi.get("reasoning.includeInContext"), kimi.get("reasoning.format"), kimi.get("reasoning.fieldName")) == (
        True,
        "field",
        "reasoning_content",
    )
    assert store.load("deepseek").make_settings().get("reasoning.includeInContext") is False
    claude = store.load("claude")
    assert claude.provider == "anthropic"
    cs = claude.make_settings()
    assert cs.get("reasoning.format") == "native" and cs.get("reasoning.includeInContext") is True
    assert cs.get("reasoning.mode") == "adaptive" and cs.get("reasoning.maxTokens") is None
    assert store.load("deepseek").make_settings().get("reasoning.mode") == "switch"
    assert store.load("minimax").make_settings().get("reasoning.format") == "tags"
    assert store.load("openrouter").make_settings().get("reasoning.fieldName") == "reasoning"
    assert "think" in store.load("gpt-oss-ollama").make_settings().get("reasoning.tags")
    assert store.load("demo").provider == "demo"


def test_save_then_load_round_trips_exactly(store, config_dir):
    config = ProviderConfig("openai", "kimi-k2-thinking", "https://api.moonshot.ai/v1", "MOONSHOT_API_KEY")
    settings = Settings()
    for key, raw in {
        "reasoning.includeInContext": "on",
        "reasoning.stripFromContext": "allbutlast",
        "reasoning.maxTokens": "1.5k",
        "reasoning.tags": "think,reasoning",
        "temperature": "0.7",
        "context-limit": "256k",
        "system-prompt": 'Say "hi".\nThen stop.',
    }.items():
        settings.set(key, raw)
    path = store.save("mine", config, settings)
    assert path == config_dir / "profiles" / "mine.toml"
    loaded = store.load("mine")
    assert loaded.provider_config() == config
    assert loaded.settings == settings.changed()
    assert loaded.make_settings().changed() == settings.changed()
    assert loaded.warnings == ()
    # And again: a second save of what was loaded writes the same bytes.
    first = path.read_bytes()
    store.save("mine", loaded.provider_config(), loaded.make_settings())
    assert path.read_bytes() == first


def test_no_key_server_round_trips_empty_api_key_env(store):
    config = ProviderConfig("openai", "qwen", "http://localhost:8000/v1", "")
    store.save("local", config, Settings())
    assert store.load("local").provider_config() == config


def test_shipped_profile_saved_as_user_profile_then_wins(store, config_dir):
    shipped = store.load("kimi")
    settings = shipped.make_settings()
    settings.set("reasoning.effort", "high")
    store.save("kimi", shipped.provider_config(), settings, over=shipped)
    mine = store.load("kimi")
    assert mine.settings["reasoning.effort"] == "high"
    assert mine.description == shipped.description
    entries = [e for e in store.entries() if e.name == "kimi"]
    assert [(e.source, e.shadowed) for e in entries] == [("user", False), ("shipped", True)]
    store.delete("kimi")  # the shipped one comes back
    assert store.load("kimi").settings.get("reasoning.effort") is None


def test_delete_refuses_shipped_and_missing_profiles(store):
    with pytest.raises(ProfileError, match="'claude' is a shipped profile; only user profiles can be deleted"):
        store.delete("claude")
    with pytest.raises(ProfileError, match="no user profile named 'nope'"):
        store.delete("nope")
    assert store.load("claude").provider == "anthropic"


def test_a_missing_profile_lists_only_the_profiles_that_load(store):
    """A broken file is not offered as available (``/profile list`` says it cannot load)."""
    store.user_dir.mkdir(parents=True, exist_ok=True)
    (store.user_dir / "broken.toml").write_text("provider = [", encoding="utf-8")
    (store.user_dir / "mine.toml").write_text('provider = "openai"\nmodel = "m"\n', encoding="utf-8")
    with pytest.raises(ProfileError, match="no profile named 'ghost'") as raised:
        store.load("ghost")
    available = str(raised.value).split("available: ")[1].rstrip(")").split(", ")
    assert "mine" in available and "claude" in available and "broken" not in available


def test_missing_profile_and_bad_names(store):
    with pytest.raises(ProfileError, match="no profile named 'ghost'"):
        store.load("ghost")
    for bad in ("../etc/passwd", "", "a b", ".hidden"):
        with pytest.raises(ProfileError, match="bad profile name"):
            store.load(bad)


def test_corrupt_toml_names_the_file_and_line(store, config_dir):
    path = write_user(config_dir, "broken", 'provider = "openai"\nmodel = "x"\n[settings]\ntemperature = = 1\n')
    with pytest.raises(ProfileError) as err:
        store.load("broken")
    message = str(err.value)
    assert str(path) in message and "line 4" in message
    assert "\n" not in message


def test_bad_value_names_the_key_and_line(store, config_dir):
    path = write_user(
        config_dir, "badval", 'provider = "openai"\nmodel = "x"\n\n[settings.reasoning]\nstripFromContext = "some"\n'
    )
    with pytest.raises(ProfileError) as err:
        store.load("badval")
    message = str(err.value)
    assert message.startswith(f"{path} (line 5): bad value 'some' for reasoning.stripFromContext")
    assert "all, allButLast, none" in message


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('model = "x"\n', "missing 'provider'"),
        ('provider = "openai"\n', "missing 'model'"),
        ('provider = "openia"\nmodel = "x"\n', "unknown provider 'openia'"),
        ('provider = "openai"\nmodel = 5\n', "'model' must be a string"),
        (
            'provider = "openai"\nmodel = "x"\napi_key_env = "my key"\n',
            "api_key_env must be the name of an environment variable",
        ),
        ('provider = "openai"\nmodel = "x"\nsettings = 3\n', "'settings' must be a table"),
    ],
)
def test_structural_errors_are_one_line_and_name_the_file(store, config_dir, text, fragment):
    path = write_user(config_dir, "p", text)
    with pytest.raises(ProfileError) as err:
        store.load("p")
    assert fragment in str(err.value) and str(path) in str(err.value)
    assert "\n" not in str(err.value)


def test_unknown_keys_are_warnings_not_errors(store, config_dir):
    write_user(
        config_dir,
        "extra",
        'provider = "openai"\nmodel = "x"\ncolour = "blue"\ncontext-limit = 9000\n[settings]\nreasoning.efort = "high"\nretries = 1\n',
    )
    profile = store.load("extra")
    assert profile.settings == {"retries": 1}
    text = " | ".join(profile.warnings)
    assert "unknown key 'colour' ignored" in text
    assert "settings go under [settings] (context-limit)" in text
    # read as a sentence: "…; did you mean reasoning.effort?; ignored" until 2026-11-28
    assert text.endswith("extra.toml: ignored: unknown setting 'reasoning.efort'; did you mean reasoning.effort?")


@pytest.mark.parametrize(
    "value",
    [
        "sk-proj-abcdefghijklmnopqrstuvwx",
        "sk-ant-api03-abcdefghijklmnop",
        "AIzaSyA-abcdefghijklmnopqrstuvwxyz012",
        "Bearer abc.def",
        "use sk-abcdefghijklmnopqrstuvwxyz1234 please",
    ],
)
def test_key_looking_values_are_recognised(value):
    assert looks_like_key(value)


@pytest.mark.parametrize(
    "value", ["kimi-k2-thinking", "skip-tags", "MOONSHOT_API_KEY", "Be a skeptic.", "https://api.deepseek.com/v1"]
)
def test_ordinary_values_are_not_keys(value):
    assert not looks_like_key(value)


def test_key_looking_values_are_refused_on_save(store, config_dir):
    settings = Settings({"system-prompt": "token sk-ant-api03-abcdefghijklmnopqrstuvwxyz"})
    with pytest.raises(ProfileError) as err:
        store.save("leaky", ProviderConfig("anthropic", "claude-sonnet-4-5"), settings)
    assert "settings.system-prompt looks like an API key" in str(err.value)
    assert "abcdefghijklmnop" not in str(err.value), "the key itself is never echoed"
    assert not (config_dir / "profiles" / "leaky.toml").exists()
    with pytest.raises(ProfileError, match="base_url looks like an API key"):
        store.save("leaky", ProviderConfig("openai", "m", base_url="sk-abcdefghijklmnopqrstuvwxyz"), Settings())
    with pytest.raises(ProfileError, match="api_key_env must be the name of an environment variable"):
        store.save("leaky", ProviderConfig("openai", "m", api_key_env="sk-abcdefghijklmnopqrstuvwxyz"), Settings())
    assert not (config_dir / "profiles" / "leaky.toml").exists()


def test_key_looking_values_are_warned_about_on_load(store, config_dir):
    write_user(config_dir, "leaky", 'provider = "openai"\nmodel = "x"\ndescription = "sk-abcdefghijklmnopqrstuvwxyz"\n')
    profile = store.load("leaky")
    assert any("description looks like an API key" in w for w in profile.warnings)
    assert not any("abcdefghijklmnop" in w for w in profile.warnings)


def test_files_and_folder_are_owner_only(store, config_dir):
    path = store.save("private", ProviderConfig("demo", "demo"), Settings())
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    cfg = save_app_config(AppConfig(default_profile="private", theme="nord"))
    assert stat.S_IMODE(cfg.stat().st_mode) == 0o600


def test_atomic_write_leaves_the_old_file_when_writing_fails(tmp_path):
    path = tmp_path / "p.toml"
    write_private(path, "old = 1\n")

    class Boom:
        def __str__(self) -> str:
            raise RuntimeError("disk full")

    with pytest.raises(TypeError):
        write_private(path, Boom())  # type: ignore[arg-type]
    assert path.read_text() == "old = 1\n"
    assert [p.name for p in tmp_path.iterdir()] == ["p.toml"], "no temp file left behind"


def test_list_reports_broken_files_instead_of_failing(store, config_dir):
    write_user(config_dir, "broken", "provider = \n")
    entries = {(e.name, e.source): e for e in store.entries()}
    broken = entries[("broken", "user")]
    assert broken.provider is None and "broken.toml" in broken.problem
    assert entries[("claude", "shipped")].model == "claude-sonnet-5-5"
    assert store.names()[0] <= store.names()[-1]


def test_written_file_is_plain_toml_with_nested_settings(store, config_dir):
    path = store.save("nested", ProviderConfig("openai", "m"), Settings({"reasoning.effort": "low", "retries": 1}))
    data = tomllib.loads(path.read_text())
    assert data == {"provider": "openai", "model": "m", "settings": {"retries": 1, "reasoning": {"effort": "low"}}}
    assert path.read_text().startswith("# tractui profile.")


def test_profile_model_refuses_bad_settings():
    with pytest.raises(ValueError):
        Profile(name="x", provider="openai", model="m", settings={"reasoning.effort": "huge"})


def test_app_config_round_trips_and_keeps_unknown_keys(config_dir):
    assert load_app_config() == AppConfig()
    save_app_config(AppConfig(default_profile="kimi"))
    (config_dir / "config.toml").write_text('default_profile = "kimi"\nfuture_option = 3\n')
    config = update_app_config(theme="nord")
    assert (config.default_profile, config.theme, config.unknown_keys) == ("kimi", "nord", ["future_option"])
    again = load_app_config()
    assert again.theme == "nord" and again.model_extra == {"future_option": 3}


def test_corrupt_app_config_names_file_and_line(config_dir):
    config_dir.mkdir(parents=True)
    (config_dir / "config.toml").write_text('theme = "nord"\ndefault_profile = [\n')
    with pytest.raises(ProfileError) as err:
        load_app_config()
    assert "config.toml" in str(err.value) and "line" in str(err.value)
