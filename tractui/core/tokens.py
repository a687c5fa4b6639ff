"""Token counting that works offline, with tiktoken and the BPE files we ship.

tiktoken downloads its encodings on first use; our users run local models
offline and CI has no internet. ``o200k_base`` and ``cl100k_base`` are shipped
in ``tractui/data/encodings/``, checked at load against the sha256 tiktoken
expects, and built into ``tiktoken.Encoding``s with tiktoken's own patterns
and special tokens, so counts equal tiktoken's.

Loading an encoding is slow next to a frame, so it is lazy: nothing is read
at import, and the app counts its first tokens off the event loop. Messages are counted once: a per-message cache keyed by the
message's text means a growing history is never re-tokenized.
"""

from __future__ import annotations

import binascii
import hashlib
import threading
import time
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path

import tiktoken
from tiktoken.model import encoding_name_for_model

from tractui.core.content import Content, TextBlock, ThinkingBlock, ToolCallBlock, ToolResultBlock

ENCODINGS_DIR = Path(__file__).resolve().parent.parent / "data" / "encodings"

MESSAGE_OVERHEAD = 4
"""Tokens each message costs beyond its text (role and separators), as in OpenAI's chat format."""

DEFAULT_ENCODING = "o200k_base"


@dataclass(frozen=True, slots=True)
class _Spec:
    sha256: str
    pat_str: str
    special_tokens: dict[str, int]


# pat_str and special tokens as defined in tiktoken_ext.openai_public (tests check they agree).
_SPECS: dict[str, _Spec] = {
    "cl100k_base": _Spec(
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",
        {
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    ),
    "o200k_base": _Spec(
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        "|".join(
            [
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""\p{N}{1,3}""",
                r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
                r"""\s*[\r\n]+""",
                r"""\s+(?!\S)""",
                r"""\s+""",
            ]
        ),
        {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
    ),
}

SHIPPED_ENCODINGS: tuple[str, ...] = tuple(_SPECS)

_cache: dict[str, tiktoken.Encoding] = {}
_lock = threading.Lock()


def encoding_path(name: str) -> Path:
    return ENCODINGS_DIR / f"{name}.tiktoken"


RANKS_PER_STEP = 20_000  # fields (two per token) parsed before other threads get a turn


def _load_ranks(name: str, sha256: str) -> dict[bytes, int]:
    """The shipped file's ranks: one ``base64-token rank`` pair a line, as tiktoken reads it.

    Parsed here rather than by ``tiktoken.load.load_tiktoken_bpe`` (tests
    check the result is the same dict): its line-by-line loop took half of
    the load, and it copies every file it reads into a cache folder (the
    system temp dir by default), failing outright when that folder cannot
    be created. Ours are already local; the hash check is done here.
    """
    data = encoding_path(name).read_bytes()
    if hashlib.sha256(data).hexdigest() != sha256:
        raise ValueError(
            f"Hash mismatch for the shipped encoding {name}.tiktoken (expected {sha256}): the package is damaged"
        )
    fields = data.split()
    ranks: dict[bytes, int] = {}
    for start in range(0, len(fields), RANKS_PER_STEP):
        step = fields[start : start + RANKS_PER_STEP]
        ranks.update(zip(map(binascii.a2b_base64, step[0::2]), map(int, step[1::2]), strict=True))
        time.sleep(0)  # the parse holds the interpreter: let the app's thread in between steps
    return ranks


def get_encoding(name: str) -> tiktoken.Encoding:
    """A shipped encoding, loaded once (thread-safe) with no network access."""
    enc = _cache.get(name)
    if enc is not None:
        return enc
    spec = _SPECS.get(name)
    if spec is None:
        raise ValueError(f"unknown encoding '{name}': shipped are {', '.join(SHIPPED_ENCODINGS)}")
    with _lock:
        enc = _cache.get(name)
        if enc is None:
            ranks = _load_ranks(name, spec.sha256)
            enc = tiktoken.Encoding(
                name, pat_str=spec.pat_str, mergeable_ranks=ranks, special_tokens=dict(spec.special_tokens)
            )
            _cache[name] = enc
    return enc


def clear_cache() -> None:
    """Forget loaded encodings (tests prove a cold load needs no network)."""
    with _lock:
        _cache.clear()


def encoding_for_model(model: str | None) -> str:
    """The shipped encoding for ``model``.

    OpenAI models map as tiktoken maps them (``gpt-4o``/``o*``/``gpt-5`` →
    o200k, ``gpt-4``/``gpt-3.5``/``text-embedding-*`` → cl100k); the few
    older encodings we do not ship fall back to cl100k. Other vendors'
    tokenizers are not public or not shipped: o200k is the approximation
    (the gauge corrects it with the provider's reported usage).
    """
    if not model:
        return DEFAULT_ENCODING
    name = model.strip().lower().rsplit("/", 1)[-1]  # "openai/gpt-4o" -> "gpt-4o"
    try:
        found = encoding_name_for_model(name)
    except KeyError:
        return DEFAULT_ENCODING
    if found in _SPECS:
        return found
    return DEFAULT_ENCODING if found.startswith("o200k") else "cl100k_base"


def count_tokens(text: str, model: str | None = None) -> int:
    """Tokens in ``text``; special-token text such as ``<|endoftext|>`` counts as plain text."""
    return len(get_encoding(encoding_for_model(model)).encode_ordinary(text))


def _message_key(content: Content) -> Hashable:
    """What the count depends on. Python caches each str's hash, so this is cheap."""
    parts: list[Hashable] = [content.speaker]
    for block in content.blocks:
        if isinstance(block, TextBlock):
            parts.append(block.text)
        elif isinstance(block, ThinkingBlock):
            parts.append(("t", block.thought, block.is_hidden))
        elif isinstance(block, ToolCallBlock):
            parts.append(("c", block.name, block.arguments))
        else:
            parts.append(("r", block.content))
    return tuple(parts)


GROWING_CHARS = 20_000  # a text this long is counted from the counted beginning it starts with
GROWING_TAIL = 2_000  # characters at the end left out of a remembered beginning: the stream still changes them
GROWING_HEADS = 4  # remembered beginnings: the growing thinking and answer of a reply, and spares


def _word_start(text: str, start: int, end: int) -> int:
    """The last place in ``text[start:end]`` where a word begins after a space that
    follows a non-space: no token spans it, so the counts of the two sides add up
    to the count of the whole; ``start`` if there is none."""
    at = text.rfind(" ", start + 1, end)
    while at > start:
        if not text[at - 1].isspace() and text[at + 1 : at + 2].isalnum():
            return at
        at = text.rfind(" ", start + 1, at)
    return start


class TokenCounter:
    """Counts text and messages for one model's encoding, caching per message.

    Hidden (redacted or encrypted) thinking counts 0: its opaque payload is
    not what the model reads, and its real size is only known from the
    provider's usage, which the context gauge uses.
    """

    MAX_CACHED_CHARS = 8_000_000
    """Cache budget: a streaming reply is re-counted at every update and each
    partial is a new key, so the cache is bounded by the text it holds; when
    full it starts over (the running totals in ``totals`` survive that)."""

    def __init__(self, model: str | None = None, *, encoding: str | None = None) -> None:
        self.encoding_name = encoding or encoding_for_model(model)
        if self.encoding_name not in _SPECS:
            raise ValueError(f"unknown encoding '{self.encoding_name}'")
        self._messages: dict[Hashable, tuple[int, int]] = {}
        self._cached_chars = 0
        # running totals over the last history seen: a gauge update then costs
        # only the messages added since (see ``totals``)
        self._seen: list[Content] = []
        self._cumulative: list[tuple[int, int]] = [(0, 0)]
        self._heads: list[tuple[str, int]] = []  # beginnings of long texts counted, with their tokens

    def count(self, text: str) -> int:
        """Tokens in ``text``. A long text that begins with one counted before (a reply
        growing as it streams, counted for the gauge several times a second) is counted
        from where that count left off: counting it whole each time grew with the reply."""
        if len(text) < GROWING_CHARS:
            return self._encode(text)
        found = max((h for h in self._heads if text.startswith(h[0])), key=lambda h: len(h[0]), default=None)
        start, tokens = (len(found[0]), found[1]) if found else (0, 0)
        if found:
            self._heads.remove(found)  # replaced by its longer self, or put back last: most recently used
        cut = _word_start(text, start, len(text) - GROWING_TAIL)
        if cut > start:
            tokens += self._encode(text[start:cut])
            found = (text[:cut], tokens)
        if found:
            self._heads = [*self._heads[-(GROWING_HEADS - 1) :], found]
        return tokens + self._encode(text[cut:])

    def _encode(self, text: str) -> int:
        return len(get_encoding(self.encoding_name).encode_ordinary(text)) if text else 0

    def split(self, content: Content) -> tuple[int, int]:
        """(tokens outside thinking incl. the message overhead, visible thinking tokens), cached."""
        key = _message_key(content)
        found = self._messages.get(key)
        if found is not None:
            return found
        body, thinking, chars = MESSAGE_OVERHEAD, 0, 0
        for block in content.blocks:
            if isinstance(block, TextBlock):
                body += self.count(block.text)
                chars += len(block.text)
            elif isinstance(block, ThinkingBlock):
                thinking += 0 if block.is_hidden else self.count(block.thought)
                chars += len(block.thought)
            elif isinstance(block, ToolCallBlock):
                body += self.count(block.name) + self.count(block.arguments)
                chars += len(block.name) + len(block.arguments)
            elif isinstance(block, ToolResultBlock):
                body += self.count(block.content)
                chars += len(block.content)
        found = (body, thinking)
        if chars > self.MAX_CACHED_CHARS:
            return found
        if self._cached_chars + chars > self.MAX_CACHED_CHARS:
            self._messages.clear()
            self._cached_chars = 0
        self._messages[key] = found
        self._cached_chars += chars
        return found

    def count_content(self, content: Content, *, include_thinking: bool = True) -> int:
        body, thinking = self.split(content)
        return body + thinking if include_thinking else body

    def count_thinking(self, content: Content) -> int:
        return self.split(content)[1]

    def count_messages(self, contents: Sequence[Content], *, include_thinking: bool = True) -> int:
        return sum(self.count_content(c, include_thinking=include_thinking) for c in contents)

    def totals(self, contents: Sequence[Content], end: int | None = None) -> tuple[int, int]:
        """(body tokens, thinking tokens) summed over ``contents[:end]``.

        Running totals are kept for the last history seen; the common prefix
        is found with one C-speed list comparison (identity first, then
        equality, which is all a count depends on), so a growing history
        costs only its new messages.
        """
        items = contents if isinstance(contents, list) else list(contents)
        stop = len(items) if end is None else end
        seen, cumulative = self._seen, self._cumulative
        common = min(len(seen), stop)
        if common and seen[:common] != items[:common]:
            common = next(i for i in range(common) if seen[i] is not items[i] and seen[i] != items[i])
        if common < stop:
            del seen[common:]
            del cumulative[common + 1 :]
            body, thinking = cumulative[-1]
            for content in items[common:stop]:
                b, t = self.split(content)
                body, thinking = body + b, thinking + t
                seen.append(content)
                cumulative.append((body, thinking))
        return cumulative[stop]
