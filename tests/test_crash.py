"""SIGKILL a real ``tractui -p`` mid-stream: what arrived more than half a second earlier is on disk."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time

from loopback import encode_sse, sse

from tractui.store.history import HistoryStore

THINKING = "First I consider the question. Then I weigh the options carefully."
TEXT = "The answer, written before the stall, " * 5


def chunk(delta: dict, finish: str | None = None) -> dict:
    return {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def stalling_stream() -> tuple[bytes, int]:
    """Thinking and part of the answer at once, then silence; the rest would come a minute later."""
    before = [chunk({"role": "assistant", "reasoning_content": w + " "}) for w in THINKING.split(" ")[:-1]]
    before.append(chunk({"reasoning_content": THINKING.split(" ")[-1]}))
    before += [chunk({"content": TEXT[i : i + 7]}) for i in range(0, len(TEXT), 7)]
    after = [chunk({"content": "never seen"}), chunk({}, "stop")]
    head = encode_sse(before, done=False)
    return head + encode_sse(after), len(head)


async def test_sigkill_mid_stream_leaves_an_interrupted_reply(tmp_path, loopback):
    body, stall_at = stalling_stream()
    loopback.add(sse(body, seed=4, max_chunk=64, stall_after=stall_at, stall=60))
    env = {
        **os.environ,
        "TRACTUI_CONFIG_DIR": str(tmp_path / "c"),
        "TRACTUI_DATA_DIR": str(tmp_path / "d"),
        "CRASH_KEY": "k",
    }
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tractui",
        "-p",
        "question",
        "--provider",
        "openai",
        "--model",
        "m",
        "--base-url",
        f"{loopback.url}/v1",
        "--api-key-env",
        "CRASH_KEY",
        "--set",
        "timeout=120",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    deadline = time.monotonic() + 30
    while not loopback.requests:
        assert time.monotonic() < deadline and proc.returncode is None, "the print-mode process never sent its request"
        await asyncio.sleep(0.02)
    # everything before the stall is sent at once; give the client the promised 0.5 s (+ slack) and kill it
    await asyncio.sleep(0.75)
    proc.send_signal(signal.SIGKILL)
    await proc.wait()
    assert proc.returncode == -signal.SIGKILL

    with HistoryStore(tmp_path / "d" / "history.db") as store:
        chain = store.chain(store.latest_session())
    assert [c.kind for c in chain] == ["user", "reasoning", "assistant"]
    reasoning, answer = chain[1], chain[2]
    assert reasoning.content.thinking[0].thought == THINKING
    assert answer.content.text == TEXT
    assert answer.status == "interrupted" and reasoning.status == "interrupted"

    # the next start shows it as interrupted
    log = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tractui", "log", stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env
    )
    out, err = await log.communicate()
    assert log.returncode == 0, err
    assert "[assistant] [interrupted]" in out.decode() and "[reasoning] [interrupted]" in out.decode()
