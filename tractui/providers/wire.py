"""Each earlier message's wire form and its JSON, kept from one request to the next.

Every request carries the whole session, and all but its end is what the last
request carried: folding those messages into the protocol's turns and encoding
them again made Enter's cost grow with the session. Compiled messages are not
changed in place (the store and the compile step hand out the same objects
until one changes), so the last request's fold is taken up where the tool loop
in progress begins, a message's form is found again by its identity and the
settings it was made under, and the body's JSON reuses the last body's for the
items both begin with. The bytes are the ones httpx writes for the plain dict
(``tests/test_wire.py`` proves it for every provider).
"""

from __future__ import annotations

import json
import operator
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

T = TypeVar("T")
S = TypeVar("S", bound=tuple[Any, ...])  # a builder's fold: its turns so far, and what else it carries

_MARK = "\x00tractui:history\x00"
_MARK_JSON = json.dumps(_MARK)
_FEW = 32  # new items encoded as they come; beyond, the last body's JSON is looked for by identity


# what ``json.dumps`` makes for httpx's ``json=`` body (compact, UTF-8 kept, no NaN), made once
dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


@dataclass(slots=True)
class _Fold:
    messages: list[object]  # the messages folded, in order
    key: Hashable
    state: Any  # the builder's own (its turns so far, and what else it carries), not to be changed


class WireMemo:
    """Forms and their JSON found again by identity; the builder's fold taken up where the last
    request's stopped.

    A kept entry holds its source alive, so the ``id`` it is found by belongs to
    no other object while it is kept. Forms are shared between requests and
    must not be changed once made. A builder folds the messages into its turns
    one by one, and a message's form never depends on those after it, except
    through the tool loop in progress: the fold's state where that loop begins
    is taken up by the next request whose messages begin with the
    same objects, under the same key, with no loop begun earlier (``fold``).
    """

    def __init__(self) -> None:
        self._forms: dict[int, tuple[object, Hashable, Any]] = {}
        self._next_forms: dict[int, tuple[object, Hashable, Any]] = {}
        self._fold: _Fold | None = None
        self._sent: tuple[list[Any], list[bytes]] = ([], [])  # the last body's history and each item's JSON

    def fold(self, messages: Sequence[object], key: Hashable, loop: int, fresh: S) -> tuple[S, Iterator[int]]:
        """The state to fold ``messages`` into and the indices still to fold: the last fold's
        state, copied, where these messages allow taking it up (``resume``), else ``fresh``
        from the first. The builder changes the state's lists and dicts in place as it folds;
        a copy is saved where the tool loop in progress begins (``loop``) for the next request."""
        found = self.resume(messages, key, loop)
        start, state = (found[0], _copied(found[1])) if found is not None else (0, fresh)
        return state, self._steps(messages, key, loop, start, state)

    def _steps(self, messages: Sequence[object], key: Hashable, loop: int, start: int, state: S) -> Iterator[int]:
        for index in range(start, len(messages)):
            if index == loop:
                self._fold = _Fold(list(messages[:loop]), key, _copied(state))
            yield index
        if loop == len(messages) and loop > start:
            self._fold = _Fold(list(messages[:loop]), key, _copied(state))

    def resume(self, messages: Sequence[object], key: Hashable, loop: int) -> tuple[int, Any] | None:
        """Where to take up the last fold, and its state (shared: not to be changed), when these
        messages allow; else None, and a fold from the start begins: the forms the last one used
        stay findable, the others go, unless it used none (the parameter preview's one-line
        request)."""
        fold = self._fold
        end = len(fold.messages) if fold is not None else 0
        if (
            fold is not None
            and end <= loop
            and fold.key == key
            and len(messages) >= end
            and all(map(operator.is_, messages, fold.messages))
        ):
            return end, fold.state
        if self._next_forms:
            self._forms, self._next_forms = self._next_forms, {}
        return None

    def form(self, source: object, key: Hashable, make: Callable[[], T]) -> T:
        """``source``'s form under ``key``: the one made before, or ``make()``."""
        kept = self._next_forms.get(id(source)) or self._forms.get(id(source))
        if kept is None or kept[1] != key:
            kept = (source, key, make())
        self._next_forms[id(source)] = kept
        made: T = kept[2]
        return made

    def encode(self, body: dict[str, Any], history: str) -> bytes:
        """``body`` as JSON bytes, the list under ``history`` joined from each item's kept JSON."""
        items = body.get(history)
        if not isinstance(items, list):
            return dumps(body).encode()
        around = dumps({**body, history: _MARK}).split(_MARK_JSON)
        if len(around) != 2:  # the marker's text elsewhere in the body: no splice
            return dumps(body).encode()
        last_items, last_parts = self._sent
        common = _common(items, last_items)
        parts = last_parts[:common]
        if len(items) - common <= _FEW:  # the last body and a turn or a few: new, or changed
            parts.extend(dumps(item).encode() for item in items[common:])
        else:  # a start replaced (a summary): what follows may be the last body's, further on
            known = {id(item): part for item, part in zip(last_items, last_parts, strict=True)}
            parts.extend(known.get(id(item)) or dumps(item).encode() for item in items[common:])
        self._sent = (list(items), parts)
        return b"".join((around[0].encode(), b"[", b",".join(parts), b"]", around[1].encode()))


def _copied(state: S) -> S:
    """``state`` with each of its lists and dicts copied: one side may change its own."""
    return cast(S, tuple(part.copy() for part in state))


def _common(items: list[Any], last: list[Any]) -> int:
    """How many items both lists begin with, the same objects (a binary search of C-speed
    comparisons: a turn changed near the end costs no walk in Python)."""
    if len(items) >= len(last) and all(map(operator.is_, items, last)):
        return len(last)
    low, high = 0, min(len(items), len(last))  # items[:low] is last[:low]; items[:high + 1] is not
    while low < high:
        middle = (low + high + 1) // 2
        if all(map(operator.is_, items[:middle], last[:middle])):
            low = middle
        else:
            high = middle - 1
    return low
