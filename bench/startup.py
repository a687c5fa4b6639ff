"""Process start to first frame, beside a bare ``import textual.app`` in the same run.

The app runs in a pseudo-terminal (as a user would see it) with empty config
and data folders; the first frame is the moment the footer's provider label
reaches the terminal. Goal: first frame within 0.3 s of the bare import.
Run: uv run python bench/startup.py
"""

from __future__ import annotations

import os
import pty
import select
import signal
import statistics
import subprocess
import sys
import tempfile
import time

RUNS = 5


def as_installed(python: str, folder: str) -> None:
    """Write the bytecode an install has (pip and uv compile it, a first start writes the rest):
    where PYTHONDONTWRITEBYTECODE is set, as on this project's machines, every start would
    otherwise compile every module of ``folder`` again."""
    subprocess.run([python, "-m", "compileall", "-q", folder], check=True, capture_output=True)


def bare_import() -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import textual.app"], check=True)
    return time.perf_counter() - start


def first_frame(env: dict[str, str]) -> float:
    master, slave = pty.openpty()
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "tractui"], stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True
    )
    os.close(slave)
    seen = b""
    try:
        while b"demo" not in seen:
            ready, _, _ = select.select([master], [], [], 10)
            if not ready:
                raise RuntimeError("no frame within 10 s")
            seen += os.read(master, 65536)
        return time.perf_counter() - start
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        os.close(master)


def with_servers(config_dir: str, count: int) -> None:
    """A config.toml naming ``count`` MCP servers (the shipped demo server)."""
    os.makedirs(config_dir, exist_ok=True)
    lines = []
    for i in range(count):
        lines += [
            f"[mcp.servers.demo{i}]",
            f"command = {sys.executable!r}",
            'args = ["-m", "tractui.tools.demo_server"]',
        ]
    with open(f"{config_dir}/config.toml", "w") as f:
        f.write("\n".join(lines) + "\n")


def main() -> None:
    as_installed(sys.executable, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tractui"))
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            **os.environ,
            "TRACTUI_DATA_DIR": f"{tmp}/data",
            "TERM": "xterm-256color",
            "COLUMNS": "100",
            "LINES": "30",
        }
        plain = {**env, "TRACTUI_CONFIG_DIR": f"{tmp}/config"}
        served = {**env, "TRACTUI_CONFIG_DIR": f"{tmp}/config-mcp"}
        with_servers(served["TRACTUI_CONFIG_DIR"], 3)
        imports, frames, frames_mcp = [], [], []
        for _ in range(RUNS):  # interleaved, so a machine that slows down slows all three alike
            imports.append(bare_import())
            frames.append(first_frame(plain))
            frames_mcp.append(first_frame(served))
    imp, frame, frame_mcp = (statistics.median(x) for x in (imports, frames, frames_mcp))
    print(f"python -c 'import textual.app': median {imp * 1000:.0f} ms over {RUNS} runs")
    print(f"tractui start to first frame:  median {frame * 1000:.0f} ms over {RUNS} runs")
    print(f"difference: {(frame - imp) * 1000:.0f} ms (goal <= 300 ms)")
    print(
        f"with three MCP servers configured: median {frame_mcp * 1000:.0f} ms "
        f"({(frame_mcp - frame) * 1000:+.0f} ms; goal: equal within noise)"
    )


if __name__ == "__main__":
    main()
