"""``tractui`` with timestamps where a key passes, for ``bench/key_path.py``.

Wraps, in this process only, the points a typed key goes through (Textual's
input thread, the screen's updates, the output thread) and the event loop's
callbacks; SIGUSR1 starts recording, SIGUSR2 writes what was recorded as JSON
to ``KEY_PATH_OUT``. The app itself is unchanged.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import runpy
import signal
import sys
import time
from typing import Any

from textual import events
from textual.app import App
from textual.driver import Driver
from textual.drivers._writer_thread import WriterThread
from textual.screen import Screen
from textual.widgets import TextArea

KEY = "§"
clock = time.perf_counter
on = False
keys: list[float] = []  # a KEY reaching the input thread
received: list[float] = []  # ... the app's message queue handing it to the app
handled: list[float] = []  # ... and the prompt done with it
writes: list[float] = []  # output handed to the writer thread
updates: list[tuple[float, float]] = []  # screen layouts: start, seconds
collections: list[tuple[int, float]] = []  # garbage collections: generation, seconds
busy = 0.0  # seconds spent in event-loop callbacks

_process = Driver.process_message


def process_message(self: Driver, message: Any) -> None:
    if on and isinstance(message, events.Key) and message.character == KEY:
        keys.append(clock())
    _process(self, message)


_on_event = App.on_event


async def on_event(self: App[object], event: events.Event) -> None:
    if on and isinstance(event, events.Key) and event.character == KEY and not event.is_forwarded:
        received.append(clock())
    await _on_event(self, event)


_on_key = TextArea._on_key


async def on_key(self: TextArea, event: events.Key) -> None:
    await _on_key(self, event)
    if on and event.character == KEY:
        handled.append(clock())


_write = WriterThread.write


def write(self: WriterThread, text: str) -> None:
    writes.append(clock())
    _write(self, text)


_layout = Screen._refresh_layout


def refresh_layout(self: Screen[object], *args: Any, **kwargs: Any) -> None:
    started = clock()
    _layout(self, *args, **kwargs)
    if on:
        updates.append((started, clock() - started))


_handle = asyncio.events.Handle._run


def handle(self: asyncio.events.Handle) -> None:
    global busy
    started = clock()
    _handle(self)
    if on:
        busy += clock() - started


_collecting: list[float] = []


def collecting(phase: str, info: dict[str, int]) -> None:
    if phase == "start":
        _collecting[:] = [clock()]
    elif on and _collecting:
        collections.append((info["generation"], clock() - _collecting[0]))


def start(*_: object) -> None:
    global on
    on = True


def stop(*_: object) -> None:
    global on
    on = False
    record = {"keys": keys, "received": received, "handled": handled, "writes": writes, "updates": updates}
    record |= {"collections": collections, "busy": busy}
    path = os.environ["KEY_PATH_OUT"]
    with open(path + ".part", "w") as out:
        json.dump(record, out)
    os.replace(path + ".part", path)  # whole when it appears


Driver.process_message = process_message  # type: ignore[method-assign]
App.on_event = on_event  # type: ignore[method-assign, assignment]
TextArea._on_key = on_key  # type: ignore[method-assign]
WriterThread.write = write  # type: ignore[method-assign]
Screen._refresh_layout = refresh_layout  # type: ignore[method-assign, assignment]
asyncio.events.Handle._run = handle  # type: ignore[method-assign]
gc.callbacks.append(collecting)
signal.signal(signal.SIGUSR1, start)
signal.signal(signal.SIGUSR2, stop)
sys.argv = ["tractui", *sys.argv[1:]]
runpy.run_module("tractui", run_name="__main__", alter_sys=True)
