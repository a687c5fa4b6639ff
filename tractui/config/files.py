"""Writing and reading tractui's own files: atomically, privately, with one-line errors."""

from __future__ import annotations

import os
import tempfile
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from tractui.core.nesting import nesting_depth
from tractui.errors import ProfileError, SettingError

T = TypeVar("T")
MAX_DEPTH = 32  # settings nest four levels; a deeper file is not a tractui file


def write_private(path: Path, text: str) -> None:
    """Write ``text`` atomically with mode 0600 in a 0700 folder: a reader sees the old file or the
    new one. A folder or file in the way, no permission or no space is one line (``ProfileError``)."""
    try:
        _write_private(path, text)
    except OSError as err:
        raise ProfileError(f"cannot write {path}: {err.strerror or err}") from None


def _write_private(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(path.parent, 0o700)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, 0o600)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def validated(build: Callable[[], T], where: str) -> T:
    """Run a pydantic constructor, turning its errors into one ``ProfileError`` line."""
    try:
        return build()
    except ValidationError as err:
        first = err.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        message = str(first["msg"]).removeprefix("Value error, ")
        raise ProfileError(f"{where}: {loc}: {message}" if loc else f"{where}: {message}") from None
    except SettingError as err:
        raise ProfileError(f"{where}: {err}") from None


def toml_message(err: tomllib.TOMLDecodeError, text: str) -> str:
    """tomllib's message, with the last line named when it only says "end of document"."""
    message = str(err)
    if "(at end of document)" in message:
        message = message.replace("(at end of document)", f"(at end of document, line {len(text.splitlines())})")
    return message


def parse_toml(text: str, path: Path) -> dict[str, Any]:
    """``text`` (the contents of ``path``) as TOML; broken or absurdly nested input is one ``ProfileError`` line."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ProfileError(f"{path}: {toml_message(err, text)}") from None
    except RecursionError:  # tomllib parses inline tables and arrays recursively
        raise ProfileError(f"{path}: nested more than {MAX_DEPTH} levels deep") from None
    if nesting_depth(data, MAX_DEPTH) > MAX_DEPTH:
        raise ProfileError(f"{path}: nested more than {MAX_DEPTH} levels deep")
    return data
