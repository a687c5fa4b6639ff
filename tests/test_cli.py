import os
import subprocess
import sys

import pytest

from tractui import __version__


def test_version_prints_the_package_version():
    out = subprocess.run([sys.executable, "-m", "tractui", "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"tractui {__version__}"


def test_help_lists_print_mode():
    out = subprocess.run([sys.executable, "-m", "tractui", "--help"], capture_output=True, text=True, check=True)
    assert "-p PROMPT" in out.stdout


def _update_period(env: dict[str, str]) -> float:
    code = (
        "from tractui.ui.launch import set_frame_rate; set_frame_rate(); "
        "import textual.screen as s; print(s.UPDATE_PERIOD)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return float(done.stdout)


def test_the_app_updates_the_screen_up_to_120_times_a_second_unless_told_otherwise():
    env = {k: v for k, v in os.environ.items() if k != "TEXTUAL_FPS"}
    assert _update_period(env) == 1 / 120  # Textual alone: 1/60
    assert _update_period({**env, "TEXTUAL_FPS": "30"}) == 1 / 30  # the user's own setting stands


def _pydantic_plugins_setting(env: dict[str, str]) -> tuple[str, bool]:
    """The variable after ``tractui sessions`` (which builds pydantic models), and whether
    pydantic looked for plugins (its loader's private cache, filled by the look)."""
    code = (
        "import os; from tractui.cli.main import main; main(['sessions']); "
        "from pydantic.plugin import _loader; "
        "print(os.environ['PYDANTIC_DISABLE_PLUGINS'], getattr(_loader, '_plugins', 'moved') is not None)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    setting, looked = done.stdout.split()[-2:]
    return setting, looked == "True"


def test_the_command_line_tells_pydantic_to_look_for_no_plugins_unless_told_otherwise(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    env |= {"TRACTUI_DATA_DIR": str(tmp_path), "TRACTUI_CONFIG_DIR": str(tmp_path / "config")}
    assert _pydantic_plugins_setting(env) == ("__all__", False)  # set before the first model
    assert _pydantic_plugins_setting({**env, "PYDANTIC_DISABLE_PLUGINS": "logfire"}) == ("logfire", True)


def test_the_command_line_imports_no_textual_before_the_frame_rate_is_set():
    code = "import sys, tractui.cli.main, tractui.ui.launch, tractui.config.startup; print(any(m.startswith('textual') for m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_start_up_and_the_resumed_conversation_load_no_http_client_until_a_provider_is_made(tmp_path):
    """The first frame and the newest message of a resumed session come before httpx's import;
    the first frame also before the tools', the tokenizer's, the session export's and the TOML
    editor's (tomlkit, loaded when a file is written)."""
    code = f"""
import sys
import tractui.cli.main, tractui.ui.launch, tractui.config.startup, tractui.ui.app, tractui.ui.pending
import tractui.store.history
later = ("httpx", "tiktoken", "tractui.tools.toolbox", "tractui.ui.screens.tools", "tractui.store.imports", "tomlkit")
print(",".join(name for name in later if name in sys.modules) or "-")
from tractui.config.mcp import McpConfig
from tractui.conversation.conversation import Conversation
from tractui.core.settings import Settings
from tractui.providers.config import ProviderConfig
from tractui.store.history import HistoryStore
from tractui.tools.setup import build_toolbox

config = ProviderConfig("openai", "some-model")
conversation = Conversation(HistoryStore({str(tmp_path / "history.db")!r}), Settings(), config)
conversation.tools = build_toolbox(McpConfig(), config)
conversation.history()
print("httpx" in sys.modules)
conversation.provider
print("httpx" in sys.modules)
"""
    env = {**os.environ, "TRACTUI_DATA_DIR": str(tmp_path), "TRACTUI_CONFIG_DIR": str(tmp_path / "config")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert done.stdout.split() == ["-", "False", "True"]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["log", "-h"]])
@pytest.mark.parametrize("buffered", [True, False])
def test_help_to_a_full_disk_is_one_line_exit_2(argv, buffered):
    """argparse drops a failed write and exits 0: the help the user asked for is told lost, as
    every command's output is, whether it fails as it is written or at the final flush."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if not buffered:
        env["PYTHONUNBUFFERED"] = "1"
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "tractui", *argv], stdout=full, stderr=subprocess.PIPE, env=env)
    assert done.returncode == 2
    assert done.stderr == b"tractui: cannot write the output: No space left on device\n"


def test_a_subcommands_help_and_a_wrong_option_keep_their_status():
    done = subprocess.run([sys.executable, "-m", "tractui", "log", "-h"], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.startswith("usage: tractui log")
    done = subprocess.run([sys.executable, "-m", "tractui", "--no-such-option"], capture_output=True, text=True)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines()[-1] == "tractui: error: unrecognized arguments: --no-such-option"
