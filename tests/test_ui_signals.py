"""``kill`` (SIGTERM) and a closed terminal (SIGHUP, or none at all) end the real app as quitting does.

By default either signal kills the process on the spot: the terminal is left
in the app's mode (alternate screen, mouse reporting), the last moment of
typing is lost; a terminal that vanished without a hangup left the app
running at full CPU. The app in a pseudo-terminal, on the offline demo provider.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

LEAVE_ALT_SCREEN = b"\x1b[?1049l"


def _read_until(fd: int, wanted: bytes, seen: bytearray, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while wanted not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                seen += os.read(fd, 65536)
            except OSError:  # EIO: the app has closed the terminal
                break
    return wanted in seen


def _started(tmp_path: Path) -> tuple[subprocess.Popen[bytes], int, bytearray]:
    """The app in a new session (the terminal is not its controlling one), words typed and shown."""
    master, slave = os.openpty()
    env = {
        **os.environ,
        "TRACTUI_CONFIG_DIR": str(tmp_path / "config"),
        "TRACTUI_DATA_DIR": str(tmp_path / "data"),
        "TERM": "xterm-256color",
        "COLUMNS": "100",
        "LINES": "30",
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "tractui"], stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True
    )
    os.close(slave)
    seen = bytearray()
    try:
        assert _read_until(master, b"demo", seen, 60), "no first frame"
        os.write(master, b"unsent words")
        assert _read_until(master, b"unsent words", seen, 30), "the typing never showed"
    except BaseException:
        proc.kill()
        proc.wait()
        os.close(master)
        raise
    return proc, master, seen


@pytest.mark.parametrize("ending", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_ends_the_app_cleanly_and_keeps_the_draft(tmp_path: Path, ending: signal.Signals) -> None:
    proc, master, seen = _started(tmp_path)
    try:
        proc.send_signal(ending)  # at once: the draft's own timer (0.5 s) has not written it yet
        _read_until(master, LEAVE_ALT_SCREEN, seen, 30)
        code = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    assert code == 0
    assert LEAVE_ALT_SCREEN in seen  # the terminal given back
    assert (tmp_path / "data" / "draft.txt").read_text() == "unsent words"
    assert b"Traceback" not in seen


def test_a_terminal_gone_without_a_hangup_ends_the_app(tmp_path: Path) -> None:
    """No controlling terminal, so no SIGHUP when it closes: the app notices it is gone."""
    proc, master, _ = _started(tmp_path)
    os.close(master)
    try:
        code = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 0
    assert (tmp_path / "data" / "draft.txt").read_text() == "unsent words"
