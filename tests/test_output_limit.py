"""A reply the provider cut at its output limit looks finished: each protocol's word for it is told,
under the reply, in one line; a reply that ended on its own is not."""

from __future__ import annotations

import pytest
from loopback import LoopbackServer, sse
from protocol_streams import AFTER_HELLO, KEY, KEY_ENV, VALID, Chunk, encode
from test_bad_streams import conversed

from tractui.core.events import Notice
from tractui.core.settings import Settings

CUT = "the reply stopped at its output limit"


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)


def ended(name: str, cut: bool) -> list[Chunk]:
    """Thinking and "Hello", then the end as each protocol says it: at the output limit or not."""
    chunks = VALID[name][: AFTER_HELLO[name] + 1]
    match name:
        case "openai":
            usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
            chunks += [
                (
                    None,
                    {
                        **chunks[-1][1],
                        "choices": [{"index": 0, "delta": {}, "finish_reason": "length" if cut else "stop"}],
                    },
                )
            ]
            chunks += [(None, {"id": "chatcmpl-1", "choices": [], "usage": usage})]
        case "anthropic":
            chunks += [
                ("content_block_stop", {"type": "content_block_stop", "index": 1}),
                (
                    "message_delta",
                    {
                        "type": "message_delta",
                        "delta": {"stop_reason": "max_tokens" if cut else "end_turn"},
                        "usage": {"output_tokens": 5},
                    },
                ),
                ("message_stop", {"type": "message_stop"}),
            ]
        case "gemini":
            reason = "MAX_TOKENS" if cut else "STOP"
            chunks += [
                (
                    None,
                    {
                        "candidates": [
                            {"content": {"role": "model", "parts": [{"text": "!"}]}, "index": 0, "finishReason": reason}
                        ]
                    },
                )
            ]
        case "openai-responses":
            response = {"id": "resp_1", "model": "o-loop", "usage": {"input_tokens": 10, "output_tokens": 5}}
            if cut:
                response |= {"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}}
                chunks += [("response.incomplete", {"type": "response.incomplete", "response": response})]
            else:
                response |= {"status": "completed"}
                chunks += [("response.completed", {"type": "response.completed", "response": response})]
    return chunks


@pytest.mark.parametrize("name", list(VALID))
@pytest.mark.parametrize("cut", [True, False])
async def test_a_reply_cut_at_the_output_limit_is_told_so(loopback: LoopbackServer, tmp_path, name: str, cut: bool):
    events, chain = await conversed(loopback, tmp_path, name, sse(encode(name, ended(name, cut)), seed=None))
    told = [e.message for e in events if isinstance(e, Notice) and CUT in e.message]
    assert told == ([f"{CUT}; what arrived is kept, and /set max-tokens N allows a longer one"] if cut else [])
    assert chain[-1].status == "complete" and chain[-1].content.text.startswith("Hello")


async def test_the_app_tells_it_under_the_reply_live_and_on_resume(loopback: LoopbackServer, tmp_path):
    from ui_support import build_app, loop_config, screen_text, settle, type_line

    loopback.add(sse(encode("openai", ended("openai", True)), seed=None))
    config = loop_config(loopback)
    app = build_app(tmp_path, config=config, settings=Settings({"retries": 0}))
    async with app.run_test(size=(100, 30)) as pilot:
        await type_line(pilot, "hi")
        await settle(pilot)
        live = screen_text(app)
        assert f"ℹ {CUT};" in live
        session = app.conversation.session_id
    resumed = build_app(tmp_path, config=config)
    resumed.conversation.open_session(session)
    async with resumed.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        shown = screen_text(resumed)
        assert f"ℹ {CUT};" in shown
        assert shown.index("Hello") < shown.index(CUT)  # under the reply, as it was told
