"""Minimal edits to a TOML file someone may have written by hand.

tractui rewrites ``config.toml`` and profile files (a theme chosen, a tool
always allowed, ``/profile save``). Each write changes the values that change
and nothing else: comments, blank lines, key order, the way a key is spelled
(a dotted key, a quoted one, an inline table) and keys tractui does not read
stay as the file had them. A changed value keeps the comment at the end of its
line; a removed key takes its own line with it; a new key goes at the end of
its table, written as the table's other keys are.

tomlkit, a parser that keeps a document's layout, is imported here only, when
a file is written: it costs some 40 ms, which start-up does not pay (files are
read with the standard library's ``tomllib``).
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Mapping, MutableMapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard

from tractui.errors import ProfileError

if TYPE_CHECKING:
    from tomlkit.container import Container
    from tomlkit.items import Key
    from tomlkit.items import Table as HeaderTable

Table = MutableMapping[str, Any]


def edited(text: str, path: Path, change: Callable[[Table], None]) -> str:
    """``text`` (the contents of ``path``) after ``change`` edited its document in place."""
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    if text and not text.endswith("\n"):  # a last line without its end: what is added goes on lines of its own
        text += "\n"
    try:
        document = tomlkit.parse(text)  # tomllib read it; the layout-keeping parser may still refuse an oddity
        change(document)
        out = document.as_string()
        tomllib.loads(out)  # never a file that does not read back
    except (TOMLKitError, tomllib.TOMLDecodeError) as err:
        raise ProfileError(f"cannot write {path}: {str(err).splitlines()[0]}; the file is left as it is") from None
    if out.endswith("\n\n") and not text.endswith("\n\n"):  # a table added last ends with a blank line
        out = out.rstrip("\n") + "\n"
    return out


def dumps(data: Mapping[str, Any]) -> str:
    """A new document for ``data``: nested tables under headers, as a person would write them."""
    import tomlkit

    return tomlkit.dumps(data)


def merge(table: Table, before: Mapping[str, Any], after: Mapping[str, Any]) -> None:
    """Edit ``table``, which reads as ``before``, to read as ``after``: keys ``after`` lacks are
    removed, values that differ set, tables that both hold edited the same way, the rest untouched."""
    for key in before:
        if key not in after:
            remove(table, key)
    for key, value in after.items():
        old = before.get(key, _ABSENT)
        if old == value and key in table:
            continue
        item = table.get(key)
        if isinstance(value, Mapping) and isinstance(old, Mapping) and isinstance(item, MutableMapping):
            merge(item, old, value)
            if not value and _header_less(item):  # an empty table needs a header to be there at all
                table[key] = {}
        else:
            put(table, key, value)


def put(table: Table, key: str, value: Any) -> None:
    """Set ``key`` to ``value``. A value already there is replaced in place, keeping the comment
    after it. A new key goes right after the table's last key (before the comments and blank lines
    that end the table or stand above the next one); a new table inside a table of keys is written
    as dotted keys (``allowed.x = …``), which stay inside it; a new table elsewhere gets a header of
    its own and ends with a blank line."""
    import tomlkit
    from tomlkit.items import AoT
    from tomlkit.items import Table as HeaderTable

    value = _plain(value)
    if key in table:
        table[key] = value
        return
    if isinstance(value, dict) and value and isinstance(table, HeaderTable) and not table.is_super_table():
        for path, leaf in _leaves(value, (key,)):  # one line each, as tomlkit parses ``key.x = …`` lines
            holder = tomlkit.table()
            holder.add(tomlkit.key(list(path)), tomlkit.inline_table() if isinstance(leaf, Mapping) else leaf)
            ((dotted_key, dotted),) = holder.value.body  # a key marked dotted and its table
            _after_last_key(table, key, dotted, dotted_key)
        return
    item = tomlkit.item(value)
    if isinstance(item, HeaderTable | AoT):  # tables come after the keys; one under a header may have more after it
        if isinstance(item, HeaderTable) and isinstance(table, HeaderTable):
            item.add(tomlkit.nl())
        table[key] = item
        return
    if _header_less(table):  # it gets a header now, and had a copy of its first table's comment to put there
        table.trivia.comment_ws = table.trivia.comment = ""
    _after_last_key(table, key, item)


def remove(table: Table, key: str) -> None:
    if key in table:
        del table[key]


def _after_last_key(table: Table, key: str, item: Any, as_key: Key | None = None) -> None:
    """Put ``item`` right after the last key of ``table``. tomlkit adds a key after whatever ends
    the table's keys, comments included, so a comment heading the next table would end up above
    the new key; its ``Container._insert_at`` (private: the one use, held by a canary test in
    tests/test_config_edits.py) places it exactly."""
    from tomlkit.container import Container
    from tomlkit.items import Table as HeaderTable

    owner = table if isinstance(table, HeaderTable) else None
    container = owner.value if owner is not None else table if isinstance(table, Container) else None
    last = None if container is None else _last_key_index(container)
    if container is None or last is None or last == len(container.body) - 1:
        if as_key is not None and owner is not None:  # an inline table, a table without keys, or keys last:
            owner.append(as_key, item)  # tomlkit's own place is the one
        else:
            table[key] = item
        return
    container._insert_at(last + 1, as_key or key, item)
    if owner is not None:  # a Table keeps a dict of its items besides its container
        dict.__setitem__(owner, key, item)


def _header_less(table: Table) -> TypeGuard[HeaderTable]:
    """A table written only as the prefix of others' headers (``mcp`` in ``[mcp.servers.x]``), or of dotted keys."""
    from tomlkit.items import Table as HeaderTable

    return isinstance(table, HeaderTable) and table.is_super_table()


def _last_key_index(container: Container) -> int | None:
    from tomlkit.items import AoT
    from tomlkit.items import Table as HeaderTable

    last = None
    for index, (key, item) in enumerate(container.body):
        if key is not None and not (isinstance(item, HeaderTable | AoT) and not key.is_dotted()):
            last = index
    return last


_ABSENT = object()


def _plain(value: Any) -> Any:
    """``value`` with tuples as lists (TOML arrays), all the way down."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _leaves(value: Mapping[str, Any], prefix: tuple[str, ...]) -> list[tuple[tuple[str, ...], Any]]:
    """The dotted paths to ``value``'s leaves (an empty table is a leaf: ``{}``)."""
    out: list[tuple[tuple[str, ...], Any]] = []
    for key, inner in value.items():
        if isinstance(inner, Mapping) and inner:
            out.extend(_leaves(inner, (*prefix, key)))
        else:
            out.append(((*prefix, key), inner))
    return out
