"""The ``tractui`` entry point: the app, print mode (``-p``) and history commands.

Argument parsing lives here; each mode is a module of its own, imported only
when used so ``tractui --version`` stays instant.
"""

from __future__ import annotations

import argparse
import sys

from tractui import __version__

HISTORY_COMMANDS = ("sessions", "log", "export", "import")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tractui",
        description="A terminal chat client for reasoning models. Runs the app; -p prints one answer.",
        epilog="History: tractui sessions | log [SESSION] | export [SESSION] --format md|json | import FILE",
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
    return parser


def main(argv: list[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list and args_list[0] in HISTORY_COMMANDS:
        from tractui.cli.history import run_history_command

        return run_history_command(args_list)
    parser = build_parser()
    args = parser.parse_args(args_list)
    if args.prompt is not None:
        from tractui.cli.print_mode import run_print

        return run_print(args)
    from tractui.ui.launch import run_app

    return run_app(args)


if __name__ == "__main__":
    raise SystemExit(main())
