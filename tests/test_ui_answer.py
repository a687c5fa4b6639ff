"""The answer is cut into Markdown segments at block boundaries, never inside a code fence or a list."""

from __future__ import annotations

from ui_support import build_app

from tractui.ui.widgets.answer import SEGMENT_CHARS, AnswerView, safe_cut
from tractui.ui.widgets.answer_segment import AnswerSegment
from tractui.ui.widgets.message import AssistantMessage

BLOCK = "## Step\n\nSome prose here.\n\n```python\ndef f():\n\n    return 1\n```\n\n- one\n\n- two\n\n"


def test_safe_cut_skips_fences_lists_and_indented_text():
    text = "para\n\n```\ncode\n\nmore\n```\n\n- a\n\n- b\n\n    indented\n\nnext"
    cut = safe_cut(text, 0)
    assert text[cut:].startswith("```")
    assert text[safe_cut(text, cut):] == "next"  # not inside the fence, not between list items or before indented text
    assert safe_cut("```\nopen fence\n\nstill code", 0) == -1


async def test_long_streamed_answer_is_segmented_and_complete(tmp_path):
    app = build_app(tmp_path)
    source = BLOCK * (3 * SEGMENT_CHARS // len(BLOCK) + 2)
    async with app.run_test(size=(100, 40)) as pilot:
        message = AssistantMessage(app._count, app.clock)
        await app.query_one("#chat").mount(message)
        answer = await message.answer()
        for i in range(0, len(source), 37):  # fragments cutting through fences and blank lines
            await answer.write(source[i : i + 37])
        await message.finish()
        await pilot.pause()
        segments = list(answer.query_children(AnswerSegment))
        assert len(segments) >= 3
        assert "".join(s.source for s in segments) == source == answer.text
        for segment in segments:
            assert segment.source.count("```") % 2 == 0
        assert len(app.query("MarkdownFence")) == source.count("```python")


async def test_history_answer_is_segmented_the_same_way(tmp_path):
    app = build_app(tmp_path)
    source = BLOCK * (2 * SEGMENT_CHARS // len(BLOCK) + 2)
    async with app.run_test(size=(100, 40)) as pilot:
        view = AnswerView(source)
        await app.query_one("#chat").mount(view)
        await pilot.pause()
        segments = list(view.query_children(AnswerSegment))
        assert len(segments) >= 2 and "".join(s.source for s in segments) == source


async def test_finished_segments_are_pinned_to_their_full_height_and_follow_the_width(tmp_path):
    app = build_app(tmp_path)
    source = BLOCK * (3 * SEGMENT_CHARS // len(BLOCK) + 2)

    def measured(view: AnswerView, segment: AnswerSegment) -> int:
        return segment.get_content_height(view.content_region.size, app.size, view.content_region.width)

    async with app.run_test(size=(100, 40)) as pilot:
        view = AnswerView(source)
        await app.query_one("#chat").mount(view)
        for _ in range(10):
            await pilot.pause(0.05)
        segments = list(view.query_children(AnswerSegment))
        assert len(segments) >= 3
        for segment in segments:  # a pinned height that is too small would cut text off
            assert segment.styles.height is not None and segment.styles.height.is_cells
            assert segment.styles.height.value == measured(view, segment) == segment.size.height
        await pilot.resize_terminal(50, 40)
        for _ in range(10):
            await pilot.pause(0.05)
        for segment in segments:
            assert segment.styles.height.value == measured(view, segment) == segment.size.height
