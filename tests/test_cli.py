import subprocess
import sys

from tractui import __version__


def test_version_prints_the_package_version():
    out = subprocess.run([sys.executable, "-m", "tractui.cli", "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"tractui {__version__}"


def test_help_lists_print_mode():
    out = subprocess.run([sys.executable, "-m", "tractui.cli", "--help"], capture_output=True, text=True, check=True)
    assert "-p PROMPT" in out.stdout
