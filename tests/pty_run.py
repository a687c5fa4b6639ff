"""Run tractui in a subprocess whose stdout and stderr are real terminals (pseudo-terminals).

``isatty()`` is true in the child, as when a user runs it; output post-processing
(``OPOST``, which turns ``\\n`` into ``\\r\\n``) is switched off so the bytes read
back are exactly the bytes tractui wrote.
"""

from __future__ import annotations

import asyncio
import os
import sys
import termios
from collections.abc import Mapping
from dataclasses import dataclass

# The styling tractui itself writes to a terminal (dim, dim italic, reset); anything else is foreign.
OWN_STYLES = ("\x1b[2;3m", "\x1b[2m", "\x1b[0m")


@dataclass
class TtyRun:
    code: int
    out: str
    err: str


def foreign_controls(text: str) -> list[str]:
    """Control characters (C0 but newline and tab, DEL, C1) left once tractui's own styling is removed."""
    for style in OWN_STYLES:
        text = text.replace(style, "")
    return sorted({c for c in text if (ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F})


def _pty() -> tuple[int, int]:
    master, slave = os.openpty()
    attrs = termios.tcgetattr(slave)
    attrs[1] &= ~termios.OPOST
    termios.tcsetattr(slave, termios.TCSANOW, attrs)
    return master, slave


def _drain(fd: int) -> bytes:
    chunks: list[bytes] = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: every writer of the terminal has gone
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks)


async def run_in_tty(args: list[str], env: Mapping[str, str], *, timeout: float = 120) -> TtyRun:
    """``python args...`` with stdout and stderr on two terminals; stdin is empty."""
    out_master, out_slave = _pty()
    err_master, err_slave = _pty()
    try:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            *args,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=out_slave,
            stderr=err_slave,
            env={**env, "PYTHONIOENCODING": "utf-8"},
        )
    finally:
        os.close(out_slave)
        os.close(err_slave)
    out, err = await asyncio.wait_for(
        asyncio.gather(asyncio.to_thread(_drain, out_master), asyncio.to_thread(_drain, err_master)), timeout
    )
    code = await asyncio.wait_for(proc.wait(), timeout)
    return TtyRun(code, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"))
