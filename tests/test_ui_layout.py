"""A frame of a stream is laid out once: the sizes a layout pass found do not ask for a second pass.

(The frame that first mounts a block may take two; the steady frames of a long stream may not.)"""

from __future__ import annotations

import asyncio

from ui_support import build_app

from tractui.ui.widgets.message import AssistantMessage

THOUGHT = "I should check the edge cases first, then the common path.\n\n"
ANSWER = "## Plan\n\nA paragraph that wraps over more than one line of the screen as it grows.\n\n```python\nx = 1\n"


async def _layouts_per_frame(tmp_path, write) -> list[int]:
    app = build_app(tmp_path)
    counts: list[int] = []
    async with app.run_test(
        size=(60, 40)
    ) as pilot:  # tall enough for no scrollbar to appear (that is a layout of its own)
        message = AssistantMessage(app.chat.count, app.clock)
        await app.query_one("#chat").mount(message)
        await pilot.pause()
        app.screen.screen_layout_refresh_signal.subscribe(app, lambda _: counts.append(1), immediate=True)
        per_frame = []
        for step in range(6):
            before = len(counts)
            with app.batch_update():  # as the app's frames write
                await write(message, step)
            for _ in range(4):  # the layout, and time for any layout it asks for
                await pilot.pause()
                await asyncio.sleep(0.02)
            per_frame.append(len(counts) - before)
    return per_frame


async def test_each_frame_of_streamed_thinking_is_laid_out_once(tmp_path):
    async def write(message, step):
        await (await message.thinking()).append(THOUGHT)

    assert (await _layouts_per_frame(tmp_path, write))[1:] == [1] * 5


async def test_each_frame_of_a_streamed_answer_is_laid_out_once(tmp_path):
    async def write(message, step):
        await (await message.answer()).write(
            ANSWER if step == 0 else f"y = {step}\n"
        )  # the paragraph, then a growing fence

    assert (await _layouts_per_frame(tmp_path, write))[1:] == [1] * 5


async def test_the_conversation_is_as_wide_with_a_scrollbar_as_without(tmp_path):
    """A width that moved with the scrollbar resized every answer when it came or went: finished
    parts were drawn again at the other width, and a capture of them hid the scrollbar again
    (a loop that blanked the answer on screen, frame after frame, in a real terminal)."""
    from textual.widgets import Static

    app = build_app(tmp_path)
    async with app.run_test(size=(60, 20)) as pilot:
        chat = app.query_one("#chat")
        await chat.mount(Static("short", id="probe"))
        await pilot.pause()
        assert not chat.show_vertical_scrollbar
        narrow = app.query_one("#probe").size.width
        await chat.mount_all([Static(f"line {i}") for i in range(40)])
        await pilot.pause()
        assert chat.show_vertical_scrollbar
        assert app.query_one("#probe").size.width == narrow
