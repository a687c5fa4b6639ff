"""``kill`` (SIGTERM) and a closed terminal (SIGHUP, or none at all) end the real app as quitting does.

By default either signal kills the process on the spot: the terminal is left
in the app's mode (alternate screen, mouse reporting), the last moment of
typing is lost; a terminal that vanished without a hangup left the app
running at full CPU. The app in a pseudo-terminal, on the offline demo provider.
"""

from __future__ import annotations

import fcntl
import os
import select
import signal
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

LEAVE_ALT_SCREEN = b"\x1b[?1049l"
ENTER_ALT_SCREEN = b"\x1b[?1049h"


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


def _controlling() -> None:
    """In the child, before the app starts: its terminal (standard input) becomes the controlling
    terminal of its new session, as a terminal emulator's shell gives it."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def _started(tmp_path: Path, *, controlled: bool = False) -> tuple[subprocess.Popen[bytes], int, bytearray]:
    """The app in a new session (the terminal is its controlling one only if ``controlled``),
    words typed and shown."""
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
        [sys.executable, "-m", "tractui"],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        start_new_session=True,
        preexec_fn=_controlling if controlled else None,
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


def _code(proc: subprocess.Popen[bytes]) -> int:
    """The app's exit code, waited for 30 s; an app still running then is killed (the wait's
    timeout fails the test)."""
    try:
        return proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("ending", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_ends_the_app_cleanly_and_keeps_the_draft(tmp_path: Path, ending: signal.Signals) -> None:
    proc, master, seen = _started(tmp_path)
    try:
        proc.send_signal(ending)  # at once: the draft's own timer (0.5 s) has not written it yet
        _read_until(master, LEAVE_ALT_SCREEN, seen, 30)
        code = _code(proc)
    finally:
        os.close(master)
    assert code == 0
    assert LEAVE_ALT_SCREEN in seen  # the terminal given back
    assert (tmp_path / "data" / "draft.txt").read_text() == "unsent words"
    assert b"Traceback" not in seen


def test_a_terminal_gone_without_a_hangup_ends_the_app(tmp_path: Path) -> None:
    """No controlling terminal, so no SIGHUP when it closes: the app notices it is gone."""
    proc, master, _ = _started(tmp_path)
    os.close(master)
    assert _code(proc) == 0
    assert (tmp_path / "data" / "draft.txt").read_text() == "unsent words"


def test_a_closed_terminal_ends_the_app_though_a_continue_follows_the_hangup(tmp_path: Path) -> None:
    """The terminal closing hangs up its session: the kernel sends SIGHUP and then SIGCONT. Textual
    takes any SIGCONT for the end of a suspension and starts its terminal mode again, on a terminal
    that is gone: its new output thread died at its first write, the app's writes filled its queue,
    and the app hung for good while ending (seen with tmux's server killed, mid-reply or not)."""
    proc, master, _ = _started(tmp_path, controlled=True)
    os.close(master)  # the hangup: SIGHUP, then SIGCONT, to the app's process group
    assert _code(proc) == 0
    assert (tmp_path / "data" / "draft.txt").read_text() == "unsent words"


def _stopped(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "T":
            return True
        time.sleep(0.05)
    return False


def _reading_keys(fd: int, timeout: float) -> bool:
    """The terminal is in the app's mode (no echo, no line editing): what is typed now reaches
    the app, and is not written back by the terminal's own echo as the app's mode starts."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not termios.tcgetattr(fd)[3] & (termios.ECHO | termios.ICANON):
            return True
        time.sleep(0.01)
    return False


def _taken_again(proc: subprocess.Popen[bytes], master: int, seen: bytearray, *, redrawn: bool) -> None:
    """After a continue: the app takes the terminal again (``redrawn``: draws the prompt's
    text again too) and shows what is typed then."""
    del seen[:]
    proc.send_signal(signal.SIGCONT)
    if redrawn:  # its terminal mode stopped, then started afresh: output from before the stop may come first
        assert _read_until(master, LEAVE_ALT_SCREEN, seen, 30), "the app did not stop its terminal mode"
        del seen[: seen.index(LEAVE_ALT_SCREEN) + len(LEAVE_ALT_SCREEN)]
    assert _read_until(master, ENTER_ALT_SCREEN, seen, 30), "the app did not take the terminal again"
    assert _reading_keys(master, 30), "the terminal was not put back in the app's mode"
    if redrawn:
        assert _read_until(master, b"unsent words", seen, 30), "the app did not draw itself again"
    os.write(master, b" zebra")
    assert _read_until(master, b"zebra", seen, 30), "typing after the continue never showed"


def _ended_keeping_the_draft(proc: subprocess.Popen[bytes], tmp_path: Path) -> None:
    """SIGTERM ends the app cleanly, the prompt's text (with what was typed after the continue) kept."""
    proc.send_signal(signal.SIGTERM)
    assert _code(proc) == 0
    assert (tmp_path / "data" / "draft.txt").read_text() == "unsent words zebra"


def test_a_suspension_still_gives_the_terminal_back_and_takes_it_again(tmp_path: Path) -> None:
    """SIGTSTP then SIGCONT (``kill -TSTP``, then ``fg``) suspend and resume the app as before."""
    proc, master, seen = _started(tmp_path, controlled=True)
    try:
        proc.send_signal(signal.SIGTSTP)
        assert _read_until(master, LEAVE_ALT_SCREEN, seen, 30), "the terminal was not given back"
        assert _stopped(proc.pid, 30), "the app did not stop"
        _taken_again(proc, master, seen, redrawn=False)
        _ended_keeping_the_draft(proc, tmp_path)  # the terminal still open: SIGTERM, not a hangup
    finally:
        os.close(master)


def test_a_stop_and_continue_with_the_terminal_there_draws_the_app_again(tmp_path: Path) -> None:
    """SIGSTOP (``kill -STOP``), which no handler sees, then SIGCONT (a shell's ``fg``): the
    terminal is still there, so the app starts its terminal mode afresh and draws itself again,
    over whatever a shell wrote meanwhile."""
    proc, master, seen = _started(tmp_path, controlled=True)
    try:
        proc.send_signal(signal.SIGSTOP)
        assert _stopped(proc.pid, 30), "the app did not stop"
        _taken_again(proc, master, seen, redrawn=True)
        _ended_keeping_the_draft(proc, tmp_path)  # the terminal still open: SIGTERM, not a hangup
    finally:
        os.close(master)


def test_a_closed_terminal_ends_a_suspended_app(tmp_path: Path) -> None:
    """Suspended (SIGTSTP), then the terminal closes: the hangup's SIGCONT must not start the
    terminal mode on the terminal that is gone."""
    proc, master, seen = _started(tmp_path, controlled=True)
    try:
        proc.send_signal(signal.SIGTSTP)
        assert _read_until(master, LEAVE_ALT_SCREEN, seen, 30), "the terminal was not given back"
        assert _stopped(proc.pid, 30), "the app did not stop"
    finally:
        os.close(master)  # the hangup: SIGHUP, then SIGCONT
        code = _code(proc)
    assert code == 0
    assert (tmp_path / "data" / "draft.txt").read_text() == "unsent words"


async def test_a_suspension_is_handled_by_the_event_loop_not_inside_whatever_line_it_interrupts():
    """A Python signal handler runs at any line of the main thread; the suspension's writes,
    made there while that line held the terminal writer's queue lock (a frame being written),
    waited for that lock for good: seen as an app that never gave the terminal back, spinning.
    The handlers now run from the event loop, between its callbacks."""
    import asyncio

    from textual.app import App
    from textual.drivers.linux_driver import LinuxDriver

    from tractui.ui.internals import resume_only_after_suspend

    before = {number: signal.getsignal(number) for number in (signal.SIGTSTP, signal.SIGCONT)}
    app: App[None] = App()
    driver = LinuxDriver(app, debug=False, mouse=False, size=(80, 24))
    handled: list[str] = []
    driver._sigtstp_application = lambda *_: handled.append("stop")  # type: ignore[method-assign]
    driver._sigcont_application = lambda *_: handled.append("continue")  # type: ignore[method-assign]
    app._driver = driver
    loop = asyncio.get_running_loop()
    try:
        resume_only_after_suspend(app, lambda: True)
        os.kill(os.getpid(), signal.SIGTSTP)
        os.kill(os.getpid(), signal.SIGCONT)
        assert handled == []  # not at the line the signals interrupted
        deadline = time.monotonic() + 10
        while len(handled) < 2 and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        assert handled == ["stop", "continue"]
    finally:
        for number, handler in before.items():
            loop.remove_signal_handler(number)
            signal.signal(number, handler)
