"""The ``tractui`` entry point: one argparse parser for the app, print mode (``-p``)
and the history commands (``sessions``, ``log``, ``export``, ``import``, ``delete``).

Each mode is a module of its own, imported only when used, so ``tractui
--version`` stays instant and the app's first frame pays for nothing else.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import io
import os
import sys
from typing import NoReturn, TextIO

from tractui import __version__
from tractui.cli.terminal import Terminal
from tractui.config.options import CliOptions
from tractui.core.surrogates import has_surrogate
from tractui.errors import OutputError, UsageError

EXIT_USAGE = 2


class _OneLineParser(argparse.ArgumentParser):
    """A history command used wrongly is one line on stderr, like every other error of theirs."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog.removeprefix('tractui ')}: {message}")  # main says "tractui: " once


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tractui",
        description="A terminal chat client for reasoning models. Runs the app; -p prints one answer.",
        epilog="History: tractui sessions | log [SESSION] | export [SESSION] --format md|json | import FILE | delete SESSION. "
        "Tools: tractui mcp list | mcp import FILE",
    )
    parser.add_argument("--version", action="version", version=f"tractui {__version__}")
    parser.add_argument(
        "-p", "--print", dest="prompt", metavar="PROMPT", help="answer PROMPT on stdout and exit (thinking on stderr)"
    )
    parser.add_argument(
        "-c", "--continue", dest="continue_", action="store_true", help="continue the most recent session"
    )
    parser.add_argument("--resume", nargs="?", const="", metavar="SESSION", help="resume SESSION (latest when no id)")
    parser.add_argument("--profile", metavar="NAME", help="profile to load")
    parser.add_argument("--provider", help="openai | anthropic | gemini | openai-responses | demo")
    parser.add_argument("--model", help="model name")
    parser.add_argument("--base-url", help="provider base URL")
    parser.add_argument("--api-key-env", metavar="VAR", help="environment variable holding the API key")
    parser.add_argument(
        "--set", dest="sets", action="append", default=[], metavar="KEY=VALUE", help="a setting (repeatable)"
    )
    parser.add_argument("--json", action="store_true", help="print mode: one JSON object at the end")
    parser.add_argument(
        "--allow-tool",
        dest="allow_tools",
        action="append",
        default=[],
        metavar="NAME",
        help="print mode: let the tool SERVER.TOOL (or SERVER__TOOL, or the bare tool name; no patterns) run "
        "without asking (repeatable); others are denied",
    )
    parser.add_argument("--allow-all-tools", action="store_true", help="print mode: let every tool run without asking")

    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_OneLineParser)
    sub.add_parser("sessions", help="list sessions, newest first")
    log = sub.add_parser("log", help="the commit chain of a session, newest first")
    log.add_argument("session", nargs="?", help="session id or unique prefix (default: latest)")
    export = sub.add_parser("export", help="write a session as markdown or lossless JSON")
    export.add_argument("session", nargs="?", help="session id or unique prefix (default: latest)")
    export.add_argument("--format", choices=("md", "json"), default="md")
    export.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    export.add_argument(
        "--raw", action="store_true", help="markdown: keep control characters as they are (default: shown as codes)"
    )
    delete = sub.add_parser("delete", help="delete a session and all its messages (asks first)")
    delete.add_argument("session", help="session id or unique prefix")
    delete.add_argument("-y", "--yes", action="store_true", help="delete without asking")
    imp = sub.add_parser("import", help="load a session exported as JSON")
    imp.add_argument("file", metavar="FILE")
    mcp = sub.add_parser("mcp", help="MCP servers: list their state and tools, or import another client's config")
    actions = mcp.add_subparsers(dest="action", metavar="ACTION", required=True, parser_class=_OneLineParser)
    actions.add_parser("list", help="start each configured server and list its tools")
    mcp_import = actions.add_parser("import", help="add the servers of an mcpServers JSON file to config.toml")
    mcp_import.add_argument("file", metavar="FILE")
    mcp_import.add_argument("--replace", action="store_true", help="overwrite servers of the same name")
    return parser


def options_from(args: argparse.Namespace) -> CliOptions:
    """The typed record of what the command line chose; the one reader of the parser's names."""
    return CliOptions(
        prompt=args.prompt,
        continue_=args.continue_,
        resume=args.resume,
        profile=args.profile,
        provider=args.provider,
        model=args.model,
        base_url=args.base_url,
        api_key_env=args.api_key_env,
        sets=tuple(args.sets),
        json=args.json,
        allow_tools=tuple(args.allow_tools),
        allow_all_tools=args.allow_all_tools,
    )


def parse_options(argv: list[str]) -> CliOptions:
    """``argv`` (without the program name) as options for the app or print mode."""
    return options_from(build_parser().parse_args(argv))


def main(argv: list[str] | None = None, *, out: TextIO | None = None, err: TextIO | None = None) -> int:
    skip_pydantic_plugins()
    terminal_out = Terminal(out or sys.stdout or _Closed())
    terminal_err = Terminal(err or sys.stderr or _Closed())
    try:
        code = _run(argv, terminal_out, terminal_err)
        if not terminal_out.failed:  # a failure the command caught was told already
            terminal_out.flush()  # a full disk is told here, not by the interpreter at exit
    except BrokenPipeError:  # ``tractui log | head``: the reader has all it wanted
        code = PIPE_CLOSED
    except OutputError as exc:
        terminal_err.write(f"tractui: {exc}\n")
        code = EXIT_USAGE
    if terminal_out.failed and out is None and sys.stdout is not None:
        _drop_stdout()
    return code


PIPE_CLOSED = 141  # what a shell reports for a program stopped by SIGPIPE, as ``git log | head`` ends


class _Closed(io.StringIO):
    """A standard stream the shell closed (``tractui sessions >&-``): every write fails, as to a closed descriptor."""

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, os.strerror(errno.EBADF))


def _drop_stdout() -> None:
    """Send what is still buffered for the failed stdout nowhere: flushing it at exit would fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def skip_pydantic_plugins() -> None:
    """Tell pydantic (``PYDANTIC_DISABLE_PLUGINS``) to look for no validation plugins, unless
    the user set the variable: before its first model it reads the entry points of every
    installed distribution, a cost every start paid (figures: docs/ui.md, "Speed") for
    plugins tractui never uses. MCP servers do not inherit it: their environment is the
    SDK's short default list and what their config names."""
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")


class _Help(io.TextIOBase):
    """stdout while argparse runs: ``--help`` and ``--version`` go through the output policy, so a
    failed write is told as for every command (argparse itself drops it and exits 0)."""

    def __init__(self, out: Terminal) -> None:
        self._out = out

    def write(self, text: str) -> int:
        self._out.write(text)
        return len(text)

    def flush(self) -> None:
        """Nothing: ``main`` flushes the output once at the end (this object's own close would
        flush it unseen, when it is collected)."""


PATH_ARGUMENTS = {"file", "output"}  # handed to the OS as they are: a file name need not be UTF-8


def _check_text(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse an argument that is not UTF-8, naming it, before anything starts or is written.

    Python keeps the bytes of such an argument as lone surrogates (``surrogateescape``), which
    no history, request or terminal can take as text. File names are exempt: they only go to
    the OS, which reads them back as the same bytes.
    """
    for action in parser._actions:
        value = getattr(args, action.dest, None)
        if isinstance(action, argparse._SubParsersAction):
            sub = action.choices.get(value) if isinstance(value, str) else None
            if sub is not None:
                _check_text(sub, args)
            continue
        if action.dest in PATH_ARGUMENTS:
            continue
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str) and has_surrogate(item):
                metavar = action.metavar if isinstance(action.metavar, str) else action.dest
                name = "/".join(action.option_strings) or metavar.upper()
                raise UsageError(f"{name} is not UTF-8 text (the terminal or script sent other bytes); nothing was run")


def _run(argv: list[str] | None, out: Terminal, err: Terminal) -> int:
    parser = build_parser()
    try:
        with contextlib.redirect_stdout(_Help(out)):
            args, extra = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
        if extra and args.command is not None:
            raise UsageError(f"{args.command}: unrecognized arguments: {' '.join(extra)}")
        if extra:
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        _check_text(parser, args)
    except UsageError as exc:
        err.write(f"tractui: {exc}\n")
        return EXIT_USAGE
    except SystemExit as exc:  # help or the version written (main flushes it), or argparse's usage error
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    if args.command == "mcp":
        from tractui.cli.mcp import run_mcp_command

        return run_mcp_command(args, out=out, err=err)
    if args.command is not None:
        from tractui.cli.history import run_history_command

        return run_history_command(args, out=out, err=err)
    options = options_from(args)
    if options.prompt is not None:
        from tractui.cli.print_mode import run_print

        return run_print(options, out=out, err=err)
    from tractui.ui.launch import run_app

    return run_app(options)


if __name__ == "__main__":
    raise SystemExit(main())
