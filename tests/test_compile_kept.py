"""``Compiler`` keeps a chain's settled messages between sends; it must compile exactly what
``compile_history`` and ``merge_commits`` make of the whole chain, whatever happens to it.

One ``Compiler`` follows a session in a real SQLite file through random writes:
every kind of commit (reasoning, answers with tool calls, results, interrupted
replies, system messages, summaries standing in for ranges, clearings of tool
results), branches from earlier commits, rewrites of earlier commits, and a
it is asked at the head and at an earlier commit (a head moved back), under every
reasoning policy in turn.
"""

from __future__ import annotations

import sys
import threading

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tractui.core.content import Content, TextBlock, ThinkingBlock, ToolCallBlock, ToolResultBlock
from tractui.core.settings import Settings
from tractui.store.compile import Compiler, clearing_metadata, compile_history, merge_commits, summary_metadata
from tractui.store.history import HistoryStore

POLICIES = [
    Settings({}),
    Settings({"reasoning.includeInContext": True}),
    Settings({"reasoning.includeInContext": True, "reasoning.stripFromContext": "allButLast"}),
    Settings({"reasoning.includeInContext": True, "reasoning.stripFromContext": "all"}),
]

WHAT = [
    "user",
    "reasoning",
    "answer",
    "call",
    "result",
    "interrupted",
    "system",
    "summary",
    "clearing",
    "branch",
    "rewrite",
]

# one write: what, which earlier commit it concerns (counted back from the newest), a number
writes = st.tuples(st.sampled_from(WHAT), st.integers(min_value=0, max_value=40), st.integers(0, 3))


def ai(*blocks: object) -> Content:
    return Content(speaker="ai", blocks=list(blocks), metadata={"provider": "openai", "model": "m"})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(writes, min_size=1, max_size=40))
def test_kept_compile_is_the_whole_chains(tmp_path_factory, steps):
    path = tmp_path_factory.mktemp("kept") / "h.db"
    compiler = Compiler()
    with HistoryStore(path) as store:
        sid = store.create_session()
        ids = [store.append(sid, "user", Content.human("start")).id]
        calls: list[str] = []
        for number, (what, back, n) in enumerate(steps):
            chain = store.chain(sid)
            target = chain[-1 - back % len(chain)]
            match what:
                case "user":
                    ids.append(store.append(sid, "user", Content.human(f"q{number}")).id)
                case "reasoning":
                    block = ThinkingBlock(thought=f"t{number}" * n, signature="s" if n else None)
                    ids.append(store.append(sid, "reasoning", ai(block)).id)
                case "answer":
                    ids.append(store.append(sid, "assistant", ai(*[TextBlock(text=f"a{number}")] * min(n, 2))).id)
                case "call":
                    calls.append(f"c{number}")
                    blocks = [ThinkingBlock(thought="why")] * (n % 2) + [ToolCallBlock(id=f"c{number}", name="f")]
                    ids.append(store.append(sid, "assistant", ai(*blocks)).id)
                case "result":
                    call = calls[-1 - n % len(calls)] if calls else "nowhere"
                    result = Content(speaker="tool", blocks=[ToolResultBlock(tool_call_id=call, content="r" * n)])
                    ids.append(store.append(sid, "tool", result).id)
                case "interrupted":
                    ids.append(
                        store.append(sid, "reasoning", ai(ThinkingBlock(thought="cut")), status="interrupted").id
                    )
                case "system":
                    ids.append(store.append(sid, "system", Content.system_prompt(f"s{number}")).id)
                case "summary":
                    metadata = summary_metadata(chain[n % len(chain)].id, target.id)
                    ids.append(store.append(sid, "summary", Content.human(f"summary {number}"), metadata=metadata).id)
                case "clearing":
                    tools = [c.id for c in chain if c.kind == "tool"][-1 - n :]
                    empty = Content(speaker="human", blocks=[])
                    ids.append(store.append(sid, "summary", empty, metadata=clearing_metadata(tools, 9)).id)
                case "branch":
                    ids.append(store.append(sid, "user", Content.human(f"b{number}"), parent_id=target.id).id)
                case "rewrite":
                    store.update(target.id, metadata={"rewritten": number}, status="interrupted" if n else "complete")
            for head in (None, target.id):
                chain = store.chain(sid, head=head)
                for policy in POLICIES:
                    assert compiler.compiled(chain, policy) == compile_history(chain, policy)
                assert compiler.merged(chain) == merge_commits(chain)


def test_a_thread_compiling_beside_the_sends_changes_nothing(tmp_path):
    """``Conversation.prepare`` compiles on a thread while the event loop may compile too (a
    send, the gauge): every result from either side is the whole chain's."""
    store_path = tmp_path / "h.db"
    compiler = Compiler()
    policy = POLICIES[1]
    wrong: list[str] = []
    stop = threading.Event()
    with HistoryStore(store_path) as store:
        sid = store.create_session()
        store.append(sid, "user", Content.human("start"))
        chains = [store.chain(sid)]

        def beside() -> None:
            while not stop.is_set():
                chain = chains[-1]
                if compiler.compiled(chain, policy) != compile_history(chain, policy):
                    wrong.append(chain[-1].id)
                if compiler.merged(chain) != merge_commits(chain):
                    wrong.append(chain[-1].id)

        thread = threading.Thread(target=beside)
        previous = sys.getswitchinterval()
        sys.setswitchinterval(1e-6)  # the two sides take turns as often as they can
        thread.start()
        try:
            for i in range(60):
                kind, content = [
                    ("user", Content.human(f"q{i}")),
                    ("reasoning", ai(ThinkingBlock(thought=f"t{i}"))),
                    ("assistant", ai(TextBlock(text=f"a{i}"))),
                ][i % 3]
                store.append(sid, kind, content)  # type: ignore[arg-type]
                chain = store.chain(sid)
                chains.append(chain)
                assert compiler.compiled(chain, policy) == compile_history(chain, policy)
                assert compiler.merged(chain) == merge_commits(chain)
        finally:
            stop.set()
            thread.join()
            sys.setswitchinterval(previous)
    assert wrong == []
