"""``tractui sessions | log | export | import`` on a real history file."""

from __future__ import annotations

import contextlib
import errno
import io
import json
import os
import subprocess
import sys

import pytest

from tractui.cli.main import PIPE_CLOSED, main
from tractui.config.paths import history_path
from tractui.core.content import Content, TextBlock, ThinkingBlock, Usage
from tractui.store.compile import summary_metadata
from tractui.store.history import HistoryStore


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def data(tmp_path, monkeypatch):
    monkeypatch.setenv("TRACTUI_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("TRACTUI_CONFIG_DIR", str(tmp_path / "config"))
    return tmp_path / "data"


def run(*argv: str, out: io.StringIO | None = None) -> tuple[int, str, str]:
    out = out or io.StringIO()
    err = io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def populate() -> str:
    with HistoryStore(history_path()) as store:
        sid = store.create_session()
        store.append(sid, "user", Content.human("How do I cross the street?"))
        store.append(
            sid,
            "reasoning",
            Content(
                speaker="ai", blocks=[ThinkingBlock(thought="Safety first.\nLook both ways.", source_field="thinking")]
            ),
            model="claude",
        )
        store.append(
            sid,
            "assistant",
            Content(speaker="ai", blocks=[TextBlock(text="Look left, then right.")]),
            provider="anthropic",
            model="claude",
            usage=Usage(input_tokens=40, output_tokens=120, reasoning_tokens=80),
        )
        first, last = store.chain(sid)[0].id, store.chain(sid)[-1].id
        store.append(
            sid, "summary", Content.human("Summary: crossing advice given."), metadata=summary_metadata(first, last)
        )
        store.append(sid, "user", Content.human("And at night?"))
        store.append(
            sid,
            "assistant",
            Content(speaker="ai", blocks=[TextBlock(text="Wear something bright.")]),
            status="interrupted",
            model="claude",
        )
        return sid


def test_sessions_lists_id_time_title_count_model(data):
    code, out, _ = run("sessions")
    assert code == 0 and "no sessions yet" in out
    sid = populate()
    code, out, _ = run("sessions")
    assert code == 0
    line = out.splitlines()[1]
    assert line.startswith(sid) and "How do I cross the street?" in line and "claude" in line
    assert line.split()[3] == "4"  # user, answer, user, answer on the current branch


def test_log_is_newest_first_with_tags_and_usage(data):
    sid = populate()
    code, out, _ = run("log", sid[:22])
    assert code == 0
    lines = [
        line for line in out.splitlines() if line and not line.startswith("    ") and not line.startswith("session")
    ]
    kinds = [line.split()[3] for line in lines]
    assert kinds == ["[assistant]", "[user]", "[summary]", "[assistant]", "[reasoning]", "[user]"]
    assert "[interrupted]" in lines[0]
    assert "in 40 · out 120 (reasoning 80)" in lines[3]
    assert all("[compacted]" in line for line in lines[3:]) and "[compacted]" not in lines[2]
    assert "\x1b[" not in out


def test_log_dims_reasoning_on_a_terminal(data):
    populate()
    _code, out, _ = run("log", out=Tty())
    reasoning = next(line for line in out.splitlines() if "[reasoning]" in line)
    user = next(line for line in out.splitlines() if "[user]" in line and "[compacted]" not in line)
    assert reasoning.startswith("\x1b[2m") and not user.startswith("\x1b[")


def test_export_markdown_keeps_thinking_marked(data):
    populate()
    code, out, _ = run("export", "--format", "md")
    assert code == 0
    assert (
        "<details>\n<summary>Thinking (thinking)</summary>\n\n> Safety first.\n> Look both ways.\n\n</details>" in out
    )
    assert "Look left, then right." in out and "## You" in out and "## Assistant (claude)" in out
    assert "_(interrupted)_" in out and "compacted" in out


def test_export_markdown_keeps_a_replys_and_a_summarys_headings_below_their_message(data):
    """A summary's ``## Goal`` stood level with ``## You`` and ``## Assistant`` in the outline (until
    2026-11-28); a message's own headings now sit two levels down, code blocks untouched."""
    with HistoryStore(history_path()) as store:
        sid = store.create_session("headings")
        store.append(sid, "user", Content.human("Plan it"))
        answer = "# Plan\n\nFirst.\n\n```sh\n# a comment, not a heading\n```\n\nSteps\n-----\n\n###### deep"
        store.append(sid, "assistant", Content(speaker="ai", blocks=[TextBlock(text=answer)]))
        store.append(sid, "summary", Content(speaker="ai", blocks=[TextBlock(text="## Goal\n\nTo plan.")]))
    code, out, _ = run("export", sid, "--format", "md")
    assert code == 0
    outline = [line for line in out.splitlines() if line.startswith("#")]
    assert outline == [
        "# headings",
        "## You",
        "## Assistant",
        "### Plan",
        "# a comment, not a heading",
        "#### Steps",
        "###### deep",
        "## Summary",
        "#### Goal",
    ]
    assert "```sh\n# a comment, not a heading\n```" in out


def test_an_export_file_is_readable_by_its_owner_only_unless_it_existed(data, tmp_path):
    """An export holds the conversation, as the history (0600) does; it was written 0644 until 2026-11-28.
    A file the user already had keeps the mode they gave it."""
    populate()
    target = tmp_path / "out.md"
    assert run("export", "--format", "md", "-o", str(target)) == (0, "", "")
    assert target.stat().st_mode & 0o777 == 0o600 and "## You" in target.read_text()
    target.chmod(0o644)
    assert run("export", "--format", "md", "-o", str(target)) == (0, "", "")
    assert target.stat().st_mode & 0o777 == 0o644


def test_export_json_import_round_trip(data, tmp_path, monkeypatch):
    sid = populate()
    target = tmp_path / "session.json"
    assert run("export", sid, "--format", "json", "-o", str(target)) == (0, "", "")
    original = json.loads(target.read_text())
    monkeypatch.setenv("TRACTUI_DATA_DIR", str(tmp_path / "elsewhere"))
    code, out, _ = run("import", str(target))
    assert code == 0 and sid in out
    code, again, _ = run("export", sid, "--format", "json")
    assert json.loads(again) == original
    code, _, err = run("import", str(target))
    assert code == 2 and "already" in err and len(err.splitlines()) == 1


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (("log", "NOSUCH"), "no session"),
        (("export", "--format", "pdf"), "invalid choice"),
        (("import", "/nonexistent/file.json"), "cannot read"),
        (("sessions", "extra"), "unrecognized"),
    ],
)
def test_errors_are_one_line_exit_2(data, argv, needle):
    populate()
    code, _out, err = run(*argv)
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1
    assert err.startswith("tractui: ") and not err.startswith("tractui: tractui")  # said once (until 2026-11-28 twice)
    assert "nosuch" not in err.lower() or "'NOSUCH'" in err  # the id as typed


def test_import_of_garbage_changes_nothing(data, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "tractui-session", "version": 1, "session": {}, "commits": []}')
    code, _, err = run("import", str(bad))
    assert code == 2 and "cannot import" in err
    assert run("sessions")[1].startswith("no sessions yet")


def test_dispatch_through_the_entry_point(data, capsys):
    populate()
    assert main(["sessions"]) == 0
    assert "How do I cross the street?" in capsys.readouterr().out


def test_output_into_a_pipe_closed_early_ends_quietly(data):
    """``tractui log | head``: the reader stops reading; no traceback, the shell's SIGPIPE status."""
    with HistoryStore(history_path()) as store:
        sid = store.create_session()
        for i in range(4000):  # far more output than a pipe holds
            store.append(sid, "user", Content.human(f"question {i} " + "words " * 60))
    proc = subprocess.Popen(
        [sys.executable, "-m", "tractui", "log"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=os.environ.copy()
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline().startswith(b"session ")
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == PIPE_CLOSED
    assert err == b""


class Full(io.StringIO):
    """A stream on a full disk."""

    def write(self, text: str) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@pytest.mark.parametrize("argv", [["sessions"], ["log"], ["export", "--format", "md"], ["export", "--format", "json"]])
def test_output_that_cannot_be_written_is_one_line_exit_2(data, argv):
    populate()
    err = io.StringIO()
    assert main(argv, out=Full(), err=err) == 2
    assert err.getvalue() == "tractui: cannot write the output: No space left on device\n"


class Broken(Full):
    """A stream whose writes and flushes all fail (a device error)."""

    def flush(self) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))


def test_output_that_fails_where_the_command_catches_it_is_told_once(data):
    err = io.StringIO()
    assert main(["mcp", "list"], out=Broken(), err=err) == 2
    assert err.getvalue() == "tractui: cannot write the output: No space left on device\n"


@pytest.mark.parametrize("argv", [["sessions"], ["-p", "hi", "--json"]])
def test_a_closed_stdout_is_one_line_exit_2(data, argv):
    """``tractui sessions >&-``: there is no stdout at all."""
    populate()
    proc = subprocess.run(
        [sys.executable, "-m", "tractui", *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=os.environ.copy(),
        preexec_fn=lambda: os.close(1),
    )
    assert proc.returncode == 2
    assert proc.stderr.decode().splitlines()[-1].startswith("tractui: cannot write the output: Bad file descriptor")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("argv", [["sessions"], ["log"]])
def test_output_to_a_full_disk_is_one_line_exit_2(data, argv):
    """What is buffered fails only when flushed: told then, not by the interpreter at exit."""
    populate()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # stdout buffered, as usual
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "tractui", *argv], stdout=full, stderr=subprocess.PIPE, env=env)
    assert proc.returncode == 2
    assert proc.stderr == b"tractui: cannot write the output: No space left on device\n"


def test_an_interrupted_reply_is_marked_once_in_markdown(data):
    with HistoryStore(history_path()) as store:
        sid = store.create_session()
        store.append(sid, "user", Content.human("Explain it."))
        store.append(
            sid,
            "reasoning",
            Content(speaker="ai", blocks=[ThinkingBlock(thought="Half a thought")]),
            status="interrupted",
        )
        store.append(
            sid, "assistant", Content(speaker="ai", blocks=[TextBlock(text="Half an answer")]), status="interrupted"
        )
    code, out, _ = run("export", sid, "--format", "md")
    assert code == 0 and out.count("_(interrupted)_") == 1 and "Half an answer" in out
    assert out.index("Half an answer") < out.index("_(interrupted)_")  # under what arrived, where it ended


def test_a_failed_reply_says_what_went_wrong_in_markdown(data):
    """It said only ``_(error)_``, above the part that had arrived (until 2026-11-28)."""
    with HistoryStore(history_path()) as store:
        sid = store.create_session()
        store.append(sid, "user", Content.human("Explain it."))
        error = {"kind": "cut", "message": "the connection was cut mid-stream (ReadError); what arrived is kept"}
        content = Content(speaker="ai", blocks=[TextBlock(text="Half an answer")])
        store.append(sid, "assistant", content, status="error", metadata={"error": error, "status": None})
    code, out, _ = run("export", sid, "--format", "md")
    told = "_(error: cut: the connection was cut mid-stream (ReadError); what arrived is kept)_"
    assert code == 0 and out.count(told) == 1 and out.index("Half an answer") < out.index(told)


def test_delete_with_yes_removes_the_session_and_says_which(data):
    sid = populate()
    with HistoryStore(history_path()) as store:
        other = store.create_session()
        store.append(other, "user", Content.human("kept"))
    code, out, err = run("delete", sid[:24], "--yes")
    assert (code, err) == (0, "")
    assert out == f"deleted session {sid} 'How do I cross the street?' (4 messages)\n"
    sessions = run("sessions")[1]
    assert sid not in sessions and other in sessions


@pytest.mark.parametrize(("answer", "deleted"), [("y\n", True), ("yes\n", True), ("n\n", False), ("\n", False)])
def test_delete_asks_on_a_terminal(data, monkeypatch, answer, deleted):
    sid = populate()
    monkeypatch.setattr(sys, "stdin", Tty(answer))
    code, out, err = run("delete", sid)
    assert err == f"delete session {sid} 'How do I cross the street?' (4 messages)? [y/N] "
    assert (code, out.startswith("deleted"), out == "not deleted\n") == (
        (0, True, False) if deleted else (1, False, True)
    )
    assert (sid in run("sessions")[1]) is not deleted


def test_delete_without_a_terminal_to_ask_on_needs_yes(data, monkeypatch):
    sid = populate()
    monkeypatch.setattr(sys, "stdin", io.StringIO("y\n"))
    code, out, err = run("delete", sid)
    assert (code, out) == (2, "") and err == (
        "tractui: delete asks first, and there is no terminal to ask on; add --yes to delete without asking\n"
    )
    assert sid in run("sessions")[1]


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (("delete",), "the following arguments are required: session"),
        (("delete", " ", "--yes"), "delete needs a session id or its first characters"),
        (("delete", "NOSUCH", "--yes"), "no session 'NOSUCH'"),
    ],
)
def test_delete_of_no_session_is_one_line_and_deletes_nothing(data, argv, needle):
    sid = populate()
    code, out, err = run(*argv)
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1 and out == ""
    assert sid in run("sessions")[1]


def test_delete_of_a_session_open_in_a_window_is_refused(data):
    sid = populate()
    with HistoryStore(history_path()) as window:
        window.hold(sid)
        code, out, err = run("delete", sid, "--yes")
        assert code == 2 and out == ""
        assert err.startswith(f"tractui: session '{sid[:8]}' is open in another tractui window")
    assert run("delete", sid, "--yes")[0] == 0


def test_markdown_export_shows_html_in_thinking_and_answers_as_text_and_keeps_code(data):
    """A ``</details>`` in the model's thinking closed the Thinking block, and the forged headings
    after it read as the conversation (until 2026-11-28). Rendered by CommonMark, no raw HTML of
    the model's remains, the text reads the same, and code keeps its ``<`` as written."""
    from markdown_it import MarkdownIt

    with HistoryStore(history_path()) as store:
        sid = store.create_session()
        store.append(sid, "user", Content.human("if a < b, show <b>this</b>"))
        forged = "step one\n</details>\n\n## You\n\nFORGED USER LINE\n\n<details><summary>x</summary>"
        store.append(sid, "reasoning", Content(speaker="ai", blocks=[ThinkingBlock(thought=forged)]))
        answer = "Use `<div>` here.\n\n```html\n<div>kept</div>\n```\n\n<script>alert(1)</script>"
        store.append(sid, "assistant", Content(speaker="ai", blocks=[TextBlock(text=answer)]))
    code, out, _ = run("export", sid, "--format", "md")
    assert code == 0
    tokens = MarkdownIt("commonmark").parse(out)
    flat = [t for token in tokens for t in [token, *(token.children or [])]]
    html = [t.content for t in flat if t.type in ("html_block", "html_inline")]
    assert all(part.startswith(("<details>", "<summary>", "</summary>", "</details>")) for part in html)
    assert sum(part.strip() == "</details>" for part in html) == 1  # only the export's own
    shown = MarkdownIt("commonmark").render(out)
    assert "&lt;/details&gt;" in shown and "FORGED USER LINE" in shown.split("</details>")[0]
    assert "<div>kept</div>" in out and "`<div>`" in out and "if a < b" in out
    assert "<script>" not in shown


def test_markdown_export_names_a_call_as_the_app_does(data):
    """``server.tool``, as drawn, not the provider-safe ``server__tool`` the model called (until
    2026-11-28); a call no result names keeps the name the model used."""
    from tractui.core.content import ToolCallBlock, ToolResultBlock

    with HistoryStore(history_path()) as store:
        sid = store.create_session()
        store.append(sid, "user", Content.human("add them"))
        calls = [ToolCallBlock(id="c1", name="demo__add", arguments="{}"), ToolCallBlock(id="c2", name="x__y")]
        store.append(sid, "assistant", Content(speaker="ai", blocks=calls))
        result = Content(
            speaker="tool",
            blocks=[ToolResultBlock(tool_call_id="c1", content="3")],
            metadata={"server": "demo", "tool": "add", "status": "done"},
        )
        store.append(sid, "tool", result)
    code, out, _ = run("export", sid, "--format", "md")
    assert code == 0
    assert "**Tool call** `demo.add` (`c1`)" in out and "**Tool call** `x__y` (`c2`)" in out
    assert "demo__add" not in out


def test_markdown_export_keeps_autolinks_as_links(data):
    """``<https://…>`` and ``<me@example.com>`` are CommonMark links, not HTML: escaping them as tags
    turned them into plain text (2026-11-28); a tag beside them is still shown as text."""
    from markdown_it import MarkdownIt

    with HistoryStore(history_path()) as store:
        sid = store.create_session()
        store.append(sid, "user", Content.human("see <https://example.com/a?b=1> or <me@example.com>, not <b>bold</b>"))
    code, out, _ = run("export", sid, "--format", "md")
    shown = MarkdownIt("commonmark").render(out)
    assert code == 0 and '<a href="https://example.com/a?b=1">' in shown and '<a href="mailto:me@example.com">' in shown
    assert "&lt;b&gt;bold&lt;/b&gt;" in shown


@pytest.mark.skipif(sys.platform == "win32", reason="a pty")
def test_ctrl_c_at_the_delete_question_is_a_no_not_a_traceback(data):
    """Ctrl+C at ``delete …? [y/N]`` printed a Python traceback (2026-11-28)."""
    import pty
    import signal

    sid = populate()
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "tractui", "delete", sid], stdin=slave, stdout=slave, stderr=slave)
    os.close(slave)
    said = b""
    while b"[y/N]" not in said:
        said += os.read(master, 4096)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=60) == 1
    with contextlib.suppress(OSError):
        while chunk := os.read(master, 4096):
            said += chunk
    os.close(master)
    assert b"Traceback" not in said and b"not deleted" in said
    assert sid in run("sessions")[1]
