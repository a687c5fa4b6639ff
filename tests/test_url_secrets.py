"""A credential in a base URL (``https://user:secret@host/v1``, ``?key=…``) never reaches history, exports or profiles."""

from __future__ import annotations

from pathlib import Path

import pytest
from loopback import LoopbackServer, openai_chat_reply

from tractui.cli.main import main
from tractui.config.profiles import ProfileStore
from tractui.conversation.conversation import Conversation
from tractui.core.content import Content, TextBlock
from tractui.core.settings import Settings
from tractui.core.urls import public_url, url_credentials
from tractui.errors import ProfileError
from tractui.providers.transport import ProviderConfig
from tractui.store.history import HistoryStore

PASSWORD = "hunter2-pass-QQ"
QUERY_SECRET = "querysecret-77"
TOKEN_SECRET = "tokensecret-88"


@pytest.mark.parametrize(
    ("url", "public", "found"),
    [
        ("https://api.example.com/v1", "https://api.example.com/v1", []),
        ("https://user:pw@api.example.com/v1", "https://api.example.com/v1", ["user:password"]),
        ("https://justuser@api.example.com:8443/v1", "https://api.example.com:8443/v1", ["user:password"]),
        ("https://h/v1?key=abc", "https://h/v1", ["key"]),
        ("https://h/v1?api_key=abc&api-version=2024-06-01", "https://h/v1?api-version=2024-06-01", ["api_key"]),
        ("https://h/v1?access_token=a&Token=b&x=1", "https://h/v1?x=1", ["access_token", "Token"]),
        ("https://h/v1?apiKey=a#frag", "https://h/v1#frag", ["apiKey"]),
        ("http://127.0.0.1:11434/v1", "http://127.0.0.1:11434/v1", []),
        ("https://generativelanguage.googleapis.com", "https://generativelanguage.googleapis.com", []),
        ("not a url at all", "not a url at all", []),
    ],
)
def test_public_url_removes_userinfo_and_secret_looking_query_parameters(
    url: str, public: str, found: list[str]
) -> None:
    assert public_url(url) == public
    assert url_credentials(url) == found


def secret_free(folder: Path, *secrets: str) -> None:
    """No file in ``folder`` (the database, its WAL) holds any of ``secrets``."""
    for path in folder.rglob("*"):
        if path.is_file():
            raw = path.read_bytes()
            for secret in secrets:
                assert secret.encode() not in raw, f"{secret} found in {path.name}"


async def test_history_and_json_export_hold_no_credential_from_the_base_url(
    loopback: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TRACTUI_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("TRACTUI_CONFIG_DIR", str(tmp_path / "config"))
    host = loopback.url.removeprefix("http://")
    base = f"http://ada:{PASSWORD}@{host}/v1?key={QUERY_SECRET}&token={TOKEN_SECRET}"
    loopback.add(openai_chat_reply("Hello", reasoning="Let me think."))
    db = tmp_path / "data" / "history.db"
    db.parent.mkdir(parents=True)
    with HistoryStore(db) as store:
        conv = Conversation(store, Settings(), ProviderConfig("openai", "m", base_url=base, api_key_env=""))
        [e async for e in conv.send("hi")]
        await conv.aclose()
        answer = conv.history()[-1]
        assert answer.content.text == "Hello"
        assert answer.metadata["base_url"] == answer.content.metadata["base_url"] == f"http://{host}/v1"
    secret_free(tmp_path / "data", PASSWORD, QUERY_SECRET, TOKEN_SECRET)
    assert main(["export", "--format", "json"]) == 0
    out = capsys.readouterr().out
    assert f"http://{host}/v1" in out
    for secret in (PASSWORD, QUERY_SECRET, TOKEN_SECRET):
        assert secret not in out


async def test_a_connection_error_names_the_url_without_its_credential(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = f"http://ada:{PASSWORD}@127.0.0.1:9/v1?key={QUERY_SECRET}"
    with HistoryStore(tmp_path / "history.db") as store:
        conv = Conversation(
            store, Settings({"retries": 0}), ProviderConfig("openai", "m", base_url=base, api_key_env="")
        )
        events = [e async for e in conv.send("hi")]
        await conv.aclose()
    message = str(events[-1])
    assert "could not connect to http://127.0.0.1:9/v1" in message
    assert PASSWORD not in message and QUERY_SECRET not in message
    secret_free(tmp_path, PASSWORD, QUERY_SECRET)


@pytest.fixture
def profiles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ProfileStore:
    monkeypatch.setenv("TRACTUI_CONFIG_DIR", str(tmp_path / "config"))
    return ProfileStore()


@pytest.mark.parametrize(
    ("url", "where"),
    [
        (f"https://ada:{PASSWORD}@api.example.com/v1", "user:password"),
        (f"https://api.example.com/v1?key={QUERY_SECRET}", "key"),
        (f"https://api.example.com/v1?api_key={QUERY_SECRET}", "api_key"),
        (f"https://api.example.com/v1?token={QUERY_SECRET}", "token"),
    ],
)
def test_a_profile_whose_url_carries_a_credential_is_refused(
    profiles: ProfileStore, tmp_path: Path, url: str, where: str
) -> None:
    with pytest.raises(ProfileError) as err:
        profiles.save("leaky", ProviderConfig("openai", "m", base_url=url), Settings())
    message = str(err.value)
    assert "\n" not in message and f"base_url carries a credential ({where})" in message
    assert "api_key_env" in message
    assert PASSWORD not in message and QUERY_SECRET not in message
    assert not (tmp_path / "config" / "profiles" / "leaky.toml").exists()


def test_a_profile_file_whose_url_carries_a_credential_is_warned_about(profiles: ProfileStore, tmp_path: Path) -> None:
    folder = tmp_path / "config" / "profiles"
    folder.mkdir(parents=True)
    url = f"https://ada:{PASSWORD}@api.example.com/v1"
    (folder / "leaky.toml").write_text(f'provider = "openai"\nmodel = "m"\nbase_url = "{url}"\n')
    profile = profiles.load("leaky")
    assert any("base_url carries a credential (user:password)" in w for w in profile.warnings)
    assert not any(PASSWORD in w for w in profile.warnings)


def test_a_plain_url_is_saved(profiles: ProfileStore) -> None:
    url = "https://example.openai.azure.com/openai/v1?api-version=2024-06-01"
    path = profiles.save("azure", ProviderConfig("openai", "m", base_url=url), Settings())
    assert url in path.read_text()


def test_json_export_strips_credentials_from_rows_written_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TRACTUI_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("TRACTUI_CONFIG_DIR", str(tmp_path / "config"))
    leaky = f"https://ada:{PASSWORD}@api.example.com/v1?key={QUERY_SECRET}"
    (tmp_path / "data").mkdir()
    with HistoryStore(tmp_path / "data" / "history.db") as store:  # as an older tractui wrote them
        sid = store.create_session()
        user = store.append(sid, "user", Content.human("hi"))
        reply = Content(speaker="ai", blocks=[TextBlock(text="Hello")], metadata={"base_url": leaky})
        store.append(sid, "assistant", reply, parent_id=user.id, metadata={"base_url": leaky})
    assert main(["export", "--format", "json"]) == 0
    out = capsys.readouterr().out
    assert out.count('"base_url": "https://api.example.com/v1"') == 2
    assert PASSWORD not in out and QUERY_SECRET not in out
