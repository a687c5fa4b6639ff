"""Each earlier message's wire form and its JSON, kept from one request to the next.

Every request carries the whole session, and all but its end is what the last
request carried: building those messages' dicts and encoding them again made
Enter's cost grow with the session. Compiled messages are not changed in place
(the store and the compile step hand out the same objects until one changes),
so a message's form is found again by its identity and the settings it was
made under, and a form's JSON by the form's identity. The body's bytes are the
ones httpx writes for the plain dict (``tests/test_wire.py`` proves it).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

T = TypeVar("T")

_MARK = "\x00tractui:history\x00"
_MARK_JSON = json.dumps(_MARK)


# what ``json.dumps`` makes for httpx's ``json=`` body (compact, UTF-8 kept, no NaN), made once
dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


class WireMemo:
    """Forms and their JSON found again by identity; what the last request did not use is let go.

    A kept entry holds its source alive, so the ``id`` it is found by belongs to
    no other object while it is kept. Forms are shared between requests and
    must not be changed once made.
    """

    def __init__(self) -> None:
        self._forms: dict[int, tuple[object, Hashable, Any]] = {}
        self._next_forms: dict[int, tuple[object, Hashable, Any]] = {}
        self._json: dict[int, tuple[object, bytes]] = {}

    def begin(self) -> None:
        """A new request is built: the forms the last one used stay findable, the others go.

        A build that used none (the parameter preview's one-line request) keeps them all.
        """
        if self._next_forms:
            self._forms, self._next_forms = self._next_forms, {}

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
        kept: dict[int, tuple[object, bytes]] = {}
        parts: list[bytes] = []
        for item in items:
            found = self._json.get(id(item))
            if found is None:
                found = (item, dumps(item).encode())
            kept[id(item)] = found
            parts.append(found[1])
        self._json = kept
        return b"".join((around[0].encode(), b"[", b",".join(parts), b"]", around[1].encode()))
