"""What the terminal sends reaches the prompt: bytes that are not UTF-8.

Textual's Linux driver decoded its input as strict UTF-8: one byte that is not
(``send-keys -H e9``, a Latin-1 paste) raised in its input thread and the app
ended with a traceback. The real app in a pseudo-terminal, on the offline demo
provider.
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

from tractui.ui.internals import mend_terminal_input


class App:
    """tractui in a pseudo-terminal, on its own data folders."""

    def __init__(self, tmp_path: Path) -> None:
        self.data = tmp_path / "data"
        master, slave = os.openpty()
        env = {
            **os.environ,
            "TRACTUI_CONFIG_DIR": str(tmp_path / "config"),
            "TRACTUI_DATA_DIR": str(self.data),
            "TERM": "xterm-256color",
            "COLUMNS": "100",
            "LINES": "30",
        }
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tractui"], stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True
        )
        os.close(slave)
        self.master = master
        self.seen = bytearray()

    def shows(self, wanted: bytes, timeout: float = 30) -> bool:
        """Read the screen's output until ``wanted`` is in it (since the last ``write``)."""
        deadline = time.monotonic() + timeout
        while wanted not in self.seen and time.monotonic() < deadline:
            if select.select([self.master], [], [], 0.1)[0]:
                try:
                    self.seen += os.read(self.master, 65536)
                except OSError:  # EIO: the app has closed the terminal
                    break
        return wanted in self.seen

    def write(self, data: bytes) -> None:
        self.seen.clear()
        os.write(self.master, data)

    def end(self) -> str:
        """SIGTERM (the app ends cleanly, keeping the prompt's text as the draft): the draft ("" for none)."""
        self.proc.send_signal(signal.SIGTERM)
        self.shows(b"\x1b[?1049l", 30)
        assert self.proc.wait(timeout=30) == 0
        draft = self.data / "draft.txt"
        return draft.read_text(encoding="utf-8") if draft.exists() else ""

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        os.close(self.master)


@pytest.fixture
def app(tmp_path: Path):
    running = App(tmp_path)
    try:
        assert running.shows(b"demo", 60), "no first frame"
        running.write(b"typed ")
        assert running.shows(b"typed", 30), "the typing never showed"
        yield running
    finally:
        running.close()


def test_a_byte_that_is_not_utf8_stays_in_the_prompt_as_a_replacement_character(app: App) -> None:
    """The tester's ``send-keys -H e9 20``, a lone continuation byte and an invalid one: the app
    stays up and each is U+FFFD where it came; the text around them is kept, in order."""
    app.write(b"caf\xe9 \x80\xff and after")
    assert app.shows(b"and after", 15), "the app did not show what followed the bytes"
    time.sleep(0.3)
    assert app.proc.poll() is None, "the app ended"
    assert b"Traceback" not in app.seen and b"UnicodeDecodeError" not in app.seen
    app.write("é, split".encode()[:1])  # a character split between two reads is still one
    time.sleep(0.2)
    app.write("é, split".encode()[1:])
    assert app.shows(b"split", 15)
    assert app.end() == "typed caf\ufffd \ufffd\ufffd and afteré, split"


def test_mend_terminal_input_is_installed_once() -> None:
    import textual.drivers.linux_driver as driver

    mend_terminal_input()
    decoder = driver.getincrementaldecoder
    mend_terminal_input()
    assert driver.getincrementaldecoder is decoder
