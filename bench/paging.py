"""Paging down a long session from its first message, in the real app in a pseudo-terminal:
how many lines were never on screen.

From Ctrl+Home the messages between the session's first ones and the newest are drawn a
batch at a time as the view comes near them. Page Down pressed while a batch was drawn could
go past lines the screen had not shown (the batch went in above the view, an answer was
painted blank until its text was placed, or a page went on before the last was painted).
The app's frames are read into a terminal emulator one by one (the terminal takes
synchronized output, so each frame ends in a mark); a line counts once a frame showed it.
Whether a key finds a batch under way depends on the machine's timing, so each interval is
run a few times and every run is printed.
Run: ``uv run python bench/paging.py [--runs 5] [--intervals 0.3 0.1 0.05]``.
"""

from __future__ import annotations

import argparse
import os
import re
import select
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyte

from tractui.core.content import Content, TextBlock
from tractui.store.history import HistoryStore

COLS, ROWS = 100, 30
EXCHANGES, PARAGRAPHS = 20, 30
LABEL = re.compile(r"\bA(\d+)\.(\d+) ")
CTRL_HOME, PAGE_DOWN = b"\x1b[1;5H", b"\x1b[6~"
SYNC_QUERY, SYNC_SUPPORTED, SYNC_END = b"\x1b[?2026$p", b"\x1b[?2026;2$y", b"\x1b[?2026l"


def _session(data: Path) -> str:
    """Answers many screens long, each paragraph labelled with where it belongs (``A3.7``)."""
    with HistoryStore(data / "history.db") as store:
        sid = store.create_session("long answers")
        for i in range(EXCHANGES):
            store.append(sid, "user", Content.human(f"question {i}"))
            text = "\n\n".join(
                f"A{i}.{j} the slice copies the list and leaves it as it was." for j in range(PARAGRAPHS)
            )
            store.append(sid, "assistant", Content(speaker="ai", blocks=[TextBlock(text=text)]))
    return sid


class Terminal:
    """The app in a pty, every piece of its output fed to an emulated screen as it is read."""

    def __init__(self, tmp_path: Path, *args: str) -> None:
        self.screen = pyte.Screen(COLS, ROWS)
        self.stream = pyte.ByteStream(self.screen)
        self.painted: set[tuple[int, int]] = set()
        self._unfinished = b""  # the output since the last frame's end
        master, slave = os.openpty()
        env = {
            **os.environ,
            "TRACTUI_CONFIG_DIR": str(tmp_path / "config"),
            "TRACTUI_DATA_DIR": str(tmp_path / "data"),
            "TERM": "xterm-256color",
            "COLUMNS": str(COLS),
            "LINES": str(ROWS),
        }
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tractui", *args],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            start_new_session=True,
        )
        os.close(slave)
        self.master = master

    def read(self, seconds: float) -> None:
        """Read what the app writes for ``seconds``, noting the labelled lines each frame shows.
        The terminal says it takes synchronized output, so each frame ends in a mark (two frames
        read at once are looked at one by one)."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            if select.select([self.master], [], [], left)[0]:
                try:
                    data = os.read(self.master, 1 << 20)
                except OSError:  # EIO: the app has closed the terminal
                    return
                if SYNC_QUERY in data:
                    os.write(self.master, SYNC_SUPPORTED)
                *frames, self._unfinished = (self._unfinished + data).split(SYNC_END)
                for frame in frames:  # a frame (or its end mark) may come in two reads: it waits whole
                    self.stream.feed(frame + SYNC_END)
                    self.note_shown()

    def note_shown(self) -> None:
        """Count the labelled lines on the emulated screen as seen."""
        for row in self.screen.display:
            self.painted |= {(int(i), int(j)) for i, j in LABEL.findall(row)}

    def shows(self, text: str, timeout: float = 60) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(text in row for row in self.screen.display):
                return True
            self.read(0.05)
        return False

    def close(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        os.close(self.master)


def unseen_lines(interval: float) -> int:
    """Page Down every ``interval`` seconds from the first message to the last: the labelled
    lines no frame showed."""
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        (home / "data").mkdir()
        sid = _session(home / "data")
        term = Terminal(home, "--resume", sid)
        try:
            last = f"A{EXCHANGES - 1}.{PARAGRAPHS - 1} "
            if not term.shows(last):  # the newest answer's end
                raise SystemExit("the session never showed:\n" + "\n".join(term.screen.display))
            os.write(term.master, CTRL_HOME)
            term.shows("question 0")
            term.painted.clear()
            term.note_shown()  # the screen as it stands was seen: no later frame need draw it again
            term.read(1.0)
            for _ in range(EXCHANGES * PARAGRAPHS):  # far more pages than the session holds
                os.write(term.master, PAGE_DOWN)
                term.read(interval)
                if (EXCHANGES - 1, PARAGRAPHS - 1) in term.painted:
                    break
            every = {(i, j) for i in range(EXCHANGES) for j in range(PARAGRAPHS)}
            return len(every - term.painted)
        finally:
            term.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--intervals", type=float, nargs="+", default=[0.3, 0.1, 0.05])
    args = parser.parse_args()
    print(f"{EXCHANGES} exchanges of {PARAGRAPHS} one-line paragraphs, {COLS}x{ROWS}, {args.runs} runs an interval")
    for interval in args.intervals:
        runs = [unseen_lines(interval) for _ in range(args.runs)]
        missed = sum(1 for n in runs if n)
        print(
            f"Page Down every {interval * 1000:.0f} ms: lines never on screen {runs}"
            f" (median {statistics.median(runs):g}; {missed} of {args.runs} runs missed some)"
        )


if __name__ == "__main__":
    main()
