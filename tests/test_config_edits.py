"""Writing config.toml and profile files edits them: a hand-written file keeps its comments, blank
lines, key order and keys tractui does not read; only the values that change are rewritten."""

from __future__ import annotations

import stat
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hand_written import CONFIG, PROFILE
from hypothesis import given, settings
from hypothesis import strategies as st

from tractui.config import toml_edit
from tractui.config.app_config import load_app_config, save_app_config, update_app_config
from tractui.config.mcp import McpServer
from tractui.config.profiles import ProfileStore
from tractui.core.settings import Settings
from tractui.errors import ProfileError
from tractui.providers.config import ProviderConfig
from tractui.tools.setup import remember_always


@pytest.fixture
def config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "config"
    folder.mkdir()
    monkeypatch.setenv("TRACTUI_CONFIG_DIR", str(folder))
    return folder


def test_a_theme_saved_changes_its_value_and_nothing_else(config_dir):
    path = config_dir / "config.toml"
    path.write_text(CONFIG)
    update_app_config(theme="nord")
    assert path.read_text() == CONFIG.replace('theme = "tractui-dark"', 'theme = "nord"')
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # still written privately
    update_app_config(theme="tractui-dark")
    assert path.read_text() == CONFIG


def test_a_theme_saved_into_a_file_without_one_goes_with_the_top_level_keys(config_dir):
    """Right after the last one, not below the comment heading the tables (tomlkit's own place; the
    canary of ``toml_edit._after_last_key``, which places it with tomlkit's private ``_insert_at``)."""
    path = config_dir / "config.toml"
    path.write_text(CONFIG.replace('theme = "tractui-dark"   # easy on the eyes at night\n', ""))
    update_app_config(theme="nord")
    assert path.read_text() == CONFIG.replace('theme = "tractui-dark"   # easy on the eyes at night\n', "").replace(
        'default_profile = "demo"  # the offline one\n', 'default_profile = "demo"  # the offline one\ntheme = "nord"\n'
    )


def test_always_allow_adds_a_line_to_its_servers_table_and_nothing_else(config_dir):
    path = config_dir / "config.toml"
    path.write_text(CONFIG)
    remember_always("demo", "multiply", "f1")
    enabled = "enabled = true       # said, though it is the default\n"
    once = CONFIG.replace(enabled, enabled + 'allowed.multiply = "f1"\n')
    assert path.read_text() == once
    remember_always("demo", "add", "f2")
    remember_always("demo", "multiply", "f3")  # a changed definition approved again
    assert path.read_text() == once.replace('"f1"', '"f3"\nallowed.add = "f2"')
    assert load_app_config().mcp.servers["demo"].allowed == {"multiply": "f3", "add": "f2"}


def test_a_server_added_to_a_commented_file_is_a_table_of_its_own(config_dir):
    path = config_dir / "config.toml"
    path.write_text(CONFIG)
    app = load_app_config()
    app.mcp.servers["time"] = McpServer(command="uvx", args=["mcp-server-time"], env={"TZ": "UTC"})
    save_app_config(app)
    text = path.read_text()
    assert text.startswith(CONFIG.split("[future]")[0])  # everything before, as it was
    assert text.endswith("[future]   # a table a newer tractui reads\nflag = true\n")
    assert load_app_config() == app


def _saved_over(config_dir: Path, text: str, changes: dict[str, str | None] | None = None) -> str:
    """Load the profile in ``text``, change the session's settings (``None`` unsets), save it back."""
    path = config_dir / "profiles" / "work.toml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    store = ProfileStore()
    loaded = store.load("work")
    settings = loaded.make_settings()
    for key, value in (changes or {}).items():
        if value is None:
            settings.unset(key)
        else:
            settings.set(key, value)
    store.save("work", loaded.provider_config(), settings, loaded.mcp_servers, over=loaded)
    return path.read_text()


def test_a_profile_saved_over_changes_the_one_value_in_place(config_dir):
    assert _saved_over(config_dir, PROFILE, {"temperature": "0.3"}) == PROFILE.replace("0.7 ", "0.3 ")
    assert _saved_over(config_dir, PROFILE) == PROFILE  # nothing changed: not a byte
    assert (
        _saved_over(config_dir, PROFILE, {"max-tokens": "8k"})
        == PROFILE.replace("Max-Tokens = 4096", "Max-Tokens = 8192")  # where and as the file spells it
    )


def test_a_profile_saved_over_removes_an_unset_setting_and_adds_a_new_one_at_the_end_of_its_table(config_dir):
    text = _saved_over(config_dir, PROFILE, {"temperature": None, "retries": "5"})
    expected = PROFILE.replace("temperature = 0.7        # warm\n", "").replace(
        "Max-Tokens = 4096        # any case\n", "Max-Tokens = 4096        # any case\nretries = 5\n"
    )
    assert text == expected


def test_a_setting_goes_into_the_table_the_file_has_for_its_group(config_dir):
    grouped = PROFILE.replace('reasoning.effort = "high"   # thinks hard\n', "") + (
        '\n[settings.reasoning]   # how it thinks\neffort = "high"\n'
    )
    text = _saved_over(config_dir, grouped, {"reasoning.effort": "low", "reasoning.includeInContext": "on"})
    assert text == grouped.replace('effort = "high"\n', 'effort = "low"\nincludeInContext = true\n')


def test_a_setting_the_file_states_at_its_default_stays(config_dir):
    stated = PROFILE.replace("[settings]  # only what differs\n", "[settings]  # only what differs\nretries = 3\n")
    assert Settings().get("retries") == 3  # the default, said out loud
    assert _saved_over(config_dir, stated, {"temperature": "0.3"}) == stated.replace("0.7 ", "0.3 ")


def test_the_session_setup_replaces_the_files_and_what_only_the_file_knows_stays(config_dir):
    path = config_dir / "profiles" / "work.toml"
    path.parent.mkdir()
    path.write_text(
        PROFILE.replace(
            'model = "demo"  # the offline model\n', 'model = "demo"  # the offline model\nmcp_servers = ["demo"]\n'
        )
    )
    store = ProfileStore()
    store.save("work", ProviderConfig("openai", "m", "http://localhost:9/v1", ""), Settings())
    text = path.read_text()
    loaded = store.load("work")
    assert (loaded.provider, loaded.model, loaded.base_url, loaded.api_key_env) == (
        "openai",
        "m",
        "http://localhost:9/v1",
        "",
    )
    assert loaded.mcp_servers is None and loaded.settings == {} and loaded.description == "work"
    assert loaded.other_keys == {"owner": "me", "notes": {"why": "kept"}}
    assert 'model = "m"  # the offline model\n' in text and "# my work profile, written by hand\n" in text
    assert "[settings]  # only what differs\n" in text  # emptied, its comment kept


def test_a_profile_file_that_is_not_toml_is_refused_and_kept(config_dir):
    path = config_dir / "profiles" / "work.toml"
    path.parent.mkdir()
    path.write_text("provider = \n")
    with pytest.raises(ProfileError) as raised:
        ProfileStore().save("work", ProviderConfig("demo", "demo"), Settings())
    assert "\n" not in str(raised.value) and str(path) in str(raised.value)
    assert path.read_text() == "provider = \n"


TOML_KEYS = st.sampled_from(["a", "b", "c", "x-y", "Z"])
SCALARS = st.one_of(st.integers(-5, 5), st.booleans(), st.text(max_size=5), st.lists(st.integers(0, 3), max_size=3))
TABLES = st.recursive(
    st.dictionaries(TOML_KEYS, SCALARS, max_size=3),
    lambda inner: st.dictionaries(TOML_KEYS, st.one_of(SCALARS, inner), max_size=3),
    max_leaves=8,
)


@settings(max_examples=150, deadline=None)
@given(before=TABLES, middle=TABLES, after=TABLES, comment=st.booleans(), last_line_ended=st.booleans())
def test_merge_reads_back_as_the_data_asked_for(
    before: dict[str, Any], middle: dict[str, Any], after: dict[str, Any], comment: bool, last_line_ended: bool
) -> None:
    """Edits read back as asked, also edits of what earlier edits wrote (dotted keys, moved keys)."""
    text = ("# kept\n" if comment else "") + toml_edit.dumps(before)
    if not last_line_ended:
        text = text.rstrip("\n")
    for old, new in ((before, middle), (middle, after)):
        text = toml_edit.edited(text, Path("t.toml"), lambda doc, old=old, new=new: toml_edit.merge(doc, old, new))
        assert tomllib.loads(text) == new
        assert not comment or text.startswith("# kept\n")


def test_an_edit_that_would_not_read_back_as_asked_is_not_written(config_dir, monkeypatch):
    """A safety net under the edits: a file is written only when it reads back as what was asked."""
    from tractui.config import profile_file

    config = config_dir / "config.toml"
    config.write_text(CONFIG)
    monkeypatch.setattr(toml_edit, "merge", lambda *_: None)  # an edit that goes wrong
    with pytest.raises(ProfileError) as raised:
        update_app_config(theme="nord")
    assert (
        str(raised.value) == f"cannot write {config}: the edit would not read back as asked; the file is left as it is"
    )
    assert config.read_text() == CONFIG
    monkeypatch.setattr(profile_file, "_edit_settings", lambda *_: None)
    with pytest.raises(ProfileError) as raised:
        _saved_over(config_dir, PROFILE, {"temperature": "0.3"})
    assert str(raised.value).endswith("the edit would not read back as the profile; the file is left as it is")
    assert (config_dir / "profiles" / "work.toml").read_text() == PROFILE


def test_an_edit_tomlkit_refuses_is_one_line_and_not_written(config_dir, monkeypatch):
    from tomlkit.exceptions import KeyAlreadyPresent

    def refused(*_: object) -> None:
        raise KeyAlreadyPresent("theme")

    config = config_dir / "config.toml"
    config.write_text(CONFIG)
    monkeypatch.setattr(toml_edit, "merge", refused)
    with pytest.raises(ProfileError) as raised:
        update_app_config(theme="nord")
    assert str(raised.value) == f'cannot write {config}: Key "theme" already exists.; the file is left as it is'
    assert config.read_text() == CONFIG
