"""What the terminal sends reaches the prompt: bytes that are not UTF-8, and pastes with escape sequences in them.

Textual's Linux driver decoded its input as strict UTF-8: one byte that is not
(``send-keys -H e9``, a Latin-1 paste) raised in its input thread and the app
ended with a traceback. Its parser took an ESC inside a bracketed paste for an
escape sequence and gave it up as key presses: a pasted ``ERROR \\x1b[31mfailed``
was sent as ``^[31mfailed…ERROR ``. The real app in a pseudo-terminal, on the
offline demo provider, and the parser it reads the terminal with.
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
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from textual import events

from tractui.ui.internals import WholePastes, mend_terminal_input

START, END = "\x1b[200~", "\x1b[201~"
COLOURED = "ERROR \x1b[31mfailed\x1b[0m at line 3"
LONGER = "a\ttab, an override \u202e, a title \x1b]0;T\x07, a clear \x1b[2J and a last ESC \x1b"


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


def test_a_kitty_key_outside_unicode_is_ignored_and_keys_after_it_still_arrive(app: App) -> None:
    """``CSI 1114112 u`` (a code point past U+10FFFF) stopped Textual's parser for good: no key
    was read after it. It is ignored now, and what follows is typed."""
    app.write(b"\x1b[1114112u")
    app.write(b"and after")
    assert app.shows(b"and after", 15), "keys after the sequence never arrived"
    assert app.proc.poll() is None and b"Traceback" not in app.seen
    assert app.end() == "typed and after"


def test_a_pasted_text_with_escape_sequences_reaches_the_prompt_whole_and_in_order(app: App) -> None:
    app.write(f"{START}{COLOURED}{END}".encode())
    assert app.shows(b"at line 3", 15)
    assert b"[31mfailed" in app.seen  # shown, the ESC left out: written, it would have coloured the screen
    assert b"\x1b[31mfailed" not in app.seen
    app.write(f"{START}{LONGER}{END}".encode())
    assert app.shows(b"ESC", 15)
    assert b"\x1b[2J" not in app.seen and b"\x1b]0;T" not in app.seen
    assert app.end() == f"typed {COLOURED}{LONGER}"


def test_what_was_pasted_is_sent_and_stored_as_it_was(app: App) -> None:
    from tractui.store.history import HistoryStore

    app.write(f"{START}{COLOURED}{END}".encode())
    assert app.shows(b"at line 3", 15)
    app.write(b"\r")
    assert app.shows(b"is shown inline.", 60)  # the end of the demo's reply
    assert app.end() == ""
    with HistoryStore(app.data / "history.db") as store:
        session = store.latest_session()
        assert session is not None
        sent = [commit.content.text for commit in store.chain(session) if commit.kind == "user"]
    assert sent == [f"typed {COLOURED}"]


def _parsed(parser: WholePastes, data: str, size: int) -> list[events.Event]:
    out: list[events.Event] = []
    for at in range(0, len(data), size):
        out += parser.feed(data[at : at + size])
    return out


@pytest.mark.parametrize("size", [1, 2, 5, 4096])
def test_a_paste_is_one_paste_event_holding_the_text_exactly(size: int) -> None:
    """However the terminal's bytes are split between reads; keys before and after stay keys."""
    data = f"ab{START}{COLOURED}\t{LONGER}\r\n{END}c\x1b[A"
    found = [
        (type(event).__name__, event.text if isinstance(event, events.Paste) else event.key)  # type: ignore[attr-defined]
        for event in _parsed(WholePastes(), data, size)
    ]
    assert found == [
        ("Key", "a"),
        ("Key", "b"),
        ("Paste", f"{COLOURED}\t{LONGER}\r\n"),
        ("Key", "c"),
        ("Key", "up"),
    ]


@settings(max_examples=200, deadline=None)
@given(st.text(st.sampled_from(["\x1b", "[", "2", "0", "1", "~", "x", "\t", "\r", "\x00", "é"]), max_size=40))
def test_any_text_pasted_comes_out_as_it_went_in(text: str) -> None:
    """Anything but the end bracket itself, ESC and pieces of brackets included (NUL is dropped,
    as Textual drops it)."""
    assume(f"{text}{END}".find(END) == len(text))  # else the paste ends there: no terminal can paste its end bracket
    pastes = [event for event in _parsed(WholePastes(), f"{START}{text}{END}", 3) if isinstance(event, events.Paste)]
    assert [paste.text for paste in pastes] == [text.replace("\x00", "")]


def test_mend_terminal_input_is_installed_once() -> None:
    import textual.drivers.linux_driver as driver

    mend_terminal_input()
    decoder, parser = driver.getincrementaldecoder, driver.XTermParser
    mend_terminal_input()
    assert (driver.getincrementaldecoder, driver.XTermParser) == (decoder, parser)
    assert parser is WholePastes


def test_an_esc_on_its_own_is_still_the_escape_key_once_the_delay_has_passed() -> None:
    from textual import constants

    parser = WholePastes()
    assert list(parser.feed("\x1b")) == []
    time.sleep(constants.ESCAPE_DELAY + 0.05)
    assert [event.key for event in parser.tick() if isinstance(event, events.Key)] == ["escape"]


async def test_the_prompt_shows_a_pasted_escape_sequence_without_its_controls(tmp_path: Path, monkeypatch) -> None:
    """The text keeps them (it is sent as pasted); the lines drawn hold no control or BiDi
    override, which written to the terminal would act on it, and take the cells they took."""
    from ui_support import build_app, settle

    from tractui.ui.widgets.input_box import InputBox

    monkeypatch.setenv("TRACTUI_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("TRACTUI_CONFIG_DIR", str(tmp_path / "config"))
    app = build_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        box = app.query_one(InputBox)
        paste = events.Paste(f"{COLOURED}\u202e\x9b2J")
        paste.set_sender(app)  # as the driver sends it
        app.post_message(paste)
        await pilot.pause()
        assert box.text == f"{COLOURED}\u202e\x9b2J"
        lines = [box.render_line(y) for y in range(box.size.height)]
        shown = "".join(line.text for line in lines)
        assert "ERROR [31mfailed[0m at line 32J" in shown
        assert not [c for c in shown if not c.isprintable() and c != " "]
        assert {line.cell_length for line in lines} == {box.size.width}
        await settle(pilot)
