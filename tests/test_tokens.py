"""Offline token counting: same counts as tiktoken, no network, per-message cache."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import threading
from pathlib import Path

import pytest
import tiktoken
import tiktoken_ext.openai_public as openai_public
from hypothesis import given, settings
from hypothesis import strategies as st
from tiktoken.load import load_tiktoken_bpe

from tractui.core import tokens
from tractui.core.content import Content, TextBlock, ThinkingBlock, ToolCallBlock, ToolResultBlock
from tractui.core.tokens import MESSAGE_OVERHEAD, TokenCounter, count_tokens, encoding_for_model, get_encoding

FIXTURES = Path(__file__).parent / "fixtures" / "providers"


@pytest.fixture(autouse=True)
def private_tiktoken_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tiktoken-cache"))


def reference_encoding(name: str) -> tiktoken.Encoding:
    """tiktoken's own definition of ``name`` (openai_public), fed our shipped file instead of the URL."""
    path = tokens.encoding_path(name)
    seen = {}

    def local(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        seen["url"], seen["hash"] = url, expected_hash
        return load_tiktoken_bpe(str(path), expected_hash=expected_hash)

    original = openai_public.load_tiktoken_bpe
    openai_public.load_tiktoken_bpe = local
    try:
        definition = getattr(openai_public, name)()
    finally:
        openai_public.load_tiktoken_bpe = original
    assert seen["url"].endswith(f"/{name}.tiktoken")
    assert hashlib.sha256(path.read_bytes()).hexdigest() == seen["hash"]
    return tiktoken.Encoding(**definition)


@pytest.fixture(scope="module")
def references():
    return {name: reference_encoding(name) for name in tokens.SHIPPED_ENCODINGS}


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_shipped_ranks_parse_to_tiktokens_own_reading(name):
    path = tokens.encoding_path(name)
    assert tokens._load_ranks(name, hashlib.sha256(path.read_bytes()).hexdigest()) == load_tiktoken_bpe(str(path))


def sample_texts() -> list[str]:
    texts = [
        "",
        "hello world",
        "  leading\n\n\ttabs",
        "日本語のテキスト",
        "emoji 😊👍🏽",
        "<|endoftext|> is plain text here",
        "x" * 5000,
    ]
    for meta in sorted(FIXTURES.glob("*/*.meta.json"))[:20]:
        data = json.loads(meta.read_text(encoding="utf-8"))
        texts += [data.get("expected_reasoning") or "", data.get("expected_text") or ""]
    return texts


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_counts_equal_tiktokens_own_definition(name, references):
    ours, ref = get_encoding(name), references[name]
    assert ours._pat_str == ref._pat_str and ours._special_tokens == ref._special_tokens
    assert ours.n_vocab == ref.n_vocab
    for text in sample_texts():
        assert ours.encode_ordinary(text) == ref.encode_ordinary(text)
        assert TokenCounter(encoding=name).count(text) == len(ref.encode_ordinary(text))


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_counts_equal_tiktoken_on_any_text(references, text):
    for name, ref in references.items():
        assert TokenCounter(encoding=name).count(text) == len(ref.encode_ordinary(text))


def test_known_values():
    assert get_encoding("cl100k_base").encode("hello world") == [15339, 1917]
    assert count_tokens("hello world", "gpt-4") == 2
    assert get_encoding("o200k_base").encode("hello world") == [24912, 2375]
    assert get_encoding("o200k_base").decode([24912, 2375]) == "hello world"


def test_counting_works_with_sockets_disabled(monkeypatch, tmp_path):
    def no_network(*args, **kwargs):
        raise OSError("network disabled in this test")

    monkeypatch.setattr(socket, "socket", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "empty-cache"))
    tokens.clear_cache()
    with pytest.raises(OSError):
        socket.socket()
    assert count_tokens("hello world", "gpt-4") == 2
    assert count_tokens("hello world", "gpt-4o") == 2
    assert TokenCounter("deepseek-reasoner").count("The answer is 42.") > 0


def test_a_tampered_encoding_file_is_refused(monkeypatch, tmp_path):
    bad = tmp_path / "encodings"
    bad.mkdir()
    shutil.copy(tokens.encoding_path("cl100k_base"), bad / "cl100k_base.tiktoken")
    with open(bad / "cl100k_base.tiktoken", "ab") as f:
        f.write(b"IQ== 999999\n")
    monkeypatch.setattr(tokens, "ENCODINGS_DIR", bad)
    tokens.clear_cache()
    with pytest.raises(ValueError, match=r"[Hh]ash"):
        get_encoding("cl100k_base")
    monkeypatch.undo()
    tokens.clear_cache()
    assert count_tokens("hello world", "gpt-4") == 2


def test_unknown_encoding_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown encoding 'p50k_base'"):
        get_encoding("p50k_base")


@pytest.mark.parametrize(
    ("model", "encoding"),
    [
        (None, "o200k_base"),
        ("gpt-4o", "o200k_base"),
        ("gpt-4o-mini-2024-07-18", "o200k_base"),
        ("o3-mini", "o200k_base"),
        ("gpt-5", "o200k_base"),
        ("openai/gpt-4.1", "o200k_base"),
        ("gpt-oss-120b", "o200k_base"),
        ("gpt-4", "cl100k_base"),
        ("gpt-4-turbo", "cl100k_base"),
        ("gpt-3.5-turbo", "cl100k_base"),
        ("text-embedding-ada-002", "cl100k_base"),
        ("text-davinci-003", "cl100k_base"),
        ("claude-sonnet-4-5", "o200k_base"),
        ("deepseek-reasoner", "o200k_base"),
        ("moonshotai/kimi-k2-thinking", "o200k_base"),
        ("gemini-2.5-flash", "o200k_base"),
    ],
)
def test_model_mapping(model, encoding):
    assert encoding_for_model(model) == encoding


def reply() -> Content:
    return Content(
        speaker="ai",
        blocks=[
            ThinkingBlock(thought="First I consider the question."),
            ThinkingBlock(
                thought="", is_hidden=True, source_field="thinking", provider_metadata={"data": "EuYBCkQYAiJA" * 50}
            ),
            TextBlock(text="The answer is 42."),
            ToolCallBlock(id="c1", name="lookup", arguments='{"q": "42"}'),
        ],
    )


def test_message_count_is_overhead_plus_blocks():
    counter = TokenCounter("gpt-4o")
    enc = get_encoding("o200k_base")
    n = lambda s: len(enc.encode_ordinary(s))  # noqa: E731
    message = reply()
    body = MESSAGE_OVERHEAD + n("The answer is 42.") + n("lookup") + n('{"q": "42"}')
    assert counter.count_content(message, include_thinking=False) == body
    # hidden thinking counts 0: its opaque payload is not what the model reads
    assert counter.count_content(message) == body + n("First I consider the question.")
    assert counter.count_thinking(message) == n("First I consider the question.")
    result = Content(speaker="tool", blocks=[ToolResultBlock(tool_call_id="c1", content="42 is the answer")])
    assert counter.count_content(result) == MESSAGE_OVERHEAD + n("42 is the answer")
    assert counter.count_messages([message, result], include_thinking=False) == body + counter.count_content(result)


def spy(counter: TokenCounter) -> list[str]:
    calls: list[str] = []
    original = counter.count

    def counting(text: str) -> int:
        calls.append(text)
        return original(text)

    counter.count = counting  # type: ignore[method-assign]
    return calls


def test_a_message_is_tokenized_once():
    counter = TokenCounter()
    calls = spy(counter)
    first = counter.count_content(reply())
    assert calls
    calls.clear()
    assert counter.count_content(reply()) == first  # an equal message, a new object
    assert counter.count_content(reply(), include_thinking=False) < first
    assert calls == []
    changed = reply()
    changed.blocks[2] = TextBlock(text="The answer is 43.")
    counter.count_content(changed)
    assert "The answer is 43." in calls


def test_growing_history_only_counts_new_messages():
    counter = TokenCounter()
    history = [Content.human(f"question {i}") for i in range(50)]
    expected = (sum(counter.count_content(c, include_thinking=False) for c in history), 0)
    calls = spy(counter)
    assert counter.totals(history) == expected
    calls.clear()
    history.append(Content.human("one more"))
    body, _ = counter.totals(history)
    assert body == expected[0] + counter.count_content(history[-1])
    assert calls == ["one more"]
    # a different history with the same prefix objects reuses the prefix
    other = [*history[:10], Content.human("branch")]
    assert counter.totals(other)[0] == sum(counter.count_content(c) for c in other)
    assert counter.totals(history, 5) == (sum(counter.count_content(c) for c in history[:5]), 0)


def test_an_encoding_loads_in_a_thread():
    tokens.clear_cache()
    counter = TokenCounter("gpt-4")
    worker = threading.Thread(target=tokens.get_encoding, args=(counter.encoding_name,))
    worker.start()
    worker.join()
    assert "cl100k_base" in tokens._cache
    assert counter.count("hello world") == 2


def test_cache_is_bounded_by_the_text_it_holds():
    counter = TokenCounter()
    counter.MAX_CACHED_CHARS = 100
    partial = ""
    for _ in range(50):  # a streaming reply: every update a longer partial
        partial += "word "
        assert counter.count_content(
            Content(speaker="ai", blocks=[TextBlock(text=partial)])
        ) == MESSAGE_OVERHEAD + counter.count(partial)
    assert counter._cached_chars <= 100
    assert len(counter._messages) < 50


def test_loading_writes_no_cache_and_survives_an_unusable_cache_folder(monkeypatch, tmp_path):
    """tiktoken would copy our shipped files into its cache folder (and fail when it cannot)."""
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(blocker / "cache"))  # cannot be created
    tokens.clear_cache()
    assert count_tokens("hello world", "gpt-4") == 2
    assert os.environ["TIKTOKEN_CACHE_DIR"] == str(blocker / "cache")  # left as it was: the loader never touches it
    writable = tmp_path / "cache"
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(writable))
    tokens.clear_cache()
    assert count_tokens("hello world", "gpt-4o") == 2
    assert not writable.exists()


GROWING_SOURCES = [
    (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8"),  # prose, code, tables
    "lorem ipsum dolor sit amet, consectetur. " * 600,  # one long line
    "```python\ndef f(x):\n    return x  # 1,234 tokens\n```\n\n" * 400,  # code, digits, indentation
    "日本語のテキストと English words 混在 123 ... 🙂 " * 500,  # no spaces between CJK words
]


@pytest.mark.parametrize("source", GROWING_SOURCES, ids=["readme", "one-line", "code", "mixed"])
@given(st.lists(st.integers(min_value=1, max_value=5_000), min_size=1, max_size=30))
@settings(max_examples=15, deadline=None)
def test_a_growing_text_counted_from_where_it_left_off_counts_as_the_whole(source, steps):
    text = source * (tokens.GROWING_CHARS // len(source) + 2)
    counter = TokenCounter(encoding="o200k_base")
    whole = get_encoding("o200k_base")
    end = tokens.GROWING_CHARS
    for step in steps:  # a reply growing by pieces of any size, counted after each
        end = min(len(text), end + step)
        assert counter.count(text[:end]) == len(whole.encode_ordinary(text[:end]))
    assert counter._heads  # the long text was counted from a remembered beginning, not only whole
