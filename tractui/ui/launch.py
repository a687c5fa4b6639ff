"""``tractui`` with no ``-p``: resolve the start-up, open the history, run the app.

Flags, profile and history file are checked before the app starts (a bad one
exits 2 with one line); the conversation itself is built after the first frame.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import os
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tractui.config.options import CliOptions
    from tractui.config.startup import Startup
    from tractui.conversation.conversation import Conversation
    from tractui.store.history import Commit, HistoryStore
    from tractui.ui.app import TractApp


def run_app(options: CliOptions) -> int:
    """Run the interactive app; a bad flag, profile or session is one line on stderr and exit 2."""
    set_frame_rate()
    with collected_after_start_up():
        prepared = _prepare(options)
    if isinstance(prepared, int):
        return prepared
    app, store = prepared
    tune_threads()
    try:
        result = app.run()
    finally:
        store.close()
    return result or 0


def _prepare(options: CliOptions) -> tuple[TractApp, HistoryStore] | int:
    """The app and its open history, or the exit code of a bad flag, profile or session."""
    from tractui.config.paths import history_path
    from tractui.config.startup import resolve_startup
    from tractui.errors import UserError
    from tractui.store.history import HistoryStore

    store: HistoryStore | None = None
    session_id: str | None = None
    chain: Callable[[int | None], list[Commit]] | None = None
    try:
        last_reply = None
        if options.resumes:  # the session first: it goes on with its own setup
            store = HistoryStore(history_path())
            session_id = store.resolve_session(options.resume or None)
            chain = opened(store, session_id)
            last_reply = None if options.chose_setup else store.last_reply(session_id)
        startup = resolve_startup(options, last_reply=last_reply)
        store = store or HistoryStore(history_path())
    except UserError as err:
        if store is not None:
            store.close()
        print(f"tractui: {err}", file=sys.stderr)
        return 2
    from tractui.ui.app import TractApp
    from tractui.ui.heap import Heap
    from tractui.ui.pending import PendingConversation

    pending = PendingConversation(
        startup.config,
        startup.settings,
        startup.profile_name,
        lambda: _conversation(store, startup, session_id),
        opened=chain,
    )
    app = TractApp(pending, notices=startup.notices, theme=startup.theme, heap=Heap(enabled=True))
    return app, store


def opened(store: HistoryStore, session_id: str) -> Callable[[int | None], list[Commit]]:
    """The session as this window opens it, ``chain(last)``: its head taken now, so that the
    messages drawn before the conversation is built are the ones it continues from."""
    store.see_head(session_id)
    store.hold(session_id)
    return functools.partial(store.seen_chain, session_id)


FRAMES_PER_SECOND = 120


def set_frame_rate() -> None:
    """Let the screen update up to 120 times a second (Textual's default is 60),
    unless ``TEXTUAL_FPS`` is already set; before Textual is imported, which reads it once.

    A change on screen, a typed key included, waits for the screen's next update
    tick; a faster tick halves that wait, and updates still come only when
    something changed (figures: docs/ui.md, "Speed").
    """
    os.environ.setdefault("TEXTUAL_FPS", str(FRAMES_PER_SECOND))


GC_YOUNG = 10_000  # allocations between young collections (Python's default: 700)
GC_MIDDLE = 5  # young collections between middle ones (default 10)
GC_OLD = 20  # middle collections between full ones (default 10): full ones stay as rare


def tune_gc() -> None:
    """Collect garbage less often, in shorter pauses, and never scan what start-up loaded.

    A streaming reply allocates fast (Markdown blocks, strips, events), and each
    collection is a frozen screen: young collections come rarer, middle ones
    twice as often so each scans half as much, full ones keep their pace.
    Imported modules and the objects made so far live as long as the process:
    frozen, full collections no longer walk them (figures: docs/ui.md, "Speed").
    """
    if sys.version_info < (3, 14):
        gc.set_threshold(GC_YOUNG, GC_MIDDLE, GC_OLD)
    else:  # an incremental collector: the other two numbers mean something else
        gc.set_threshold(GC_YOUNG, *gc.get_threshold()[1:])
    gc.freeze()


@contextlib.contextmanager
def collected_after_start_up() -> Iterator[None]:
    """No garbage collection while the app is imported and built, then ``tune_gc``.

    What start-up makes (modules, classes, config, the app) lives as long as
    the process, so collecting it meanwhile only costs time (figures:
    docs/ui.md, "Speed").
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        tune_gc()
        if enabled:
            gc.enable()


SWITCH_INTERVAL = 0.001  # seconds a thread keeps the interpreter while another waits for it (default 0.005)


def tune_threads() -> None:
    """Hand the interpreter to a waiting thread after a millisecond, not five.

    A typed key reaches the app through Textual's input thread and its echo
    leaves through its output thread; while a reply streams the event loop
    holds the interpreter almost all the time, and each of the two threads
    waited up to the whole interval for it (figures: docs/ui.md, "Speed").
    """
    sys.setswitchinterval(SWITCH_INTERVAL)


def _conversation(store: HistoryStore, startup: Startup, session_id: str | None) -> Conversation:
    # imported here: session pulls in providers, httpx and compaction, which the first frame does not need
    from tractui.conversation.conversation import Conversation
    from tractui.tools.setup import build_toolbox

    conversation = Conversation(
        store,
        startup.settings,
        startup.config,
        session_id=session_id,
        profile_name=startup.profile_name,
        mcp_servers=startup.mcp_servers,
    )
    conversation.tools = build_toolbox(startup.mcp, startup.config, startup.mcp_servers)  # started by the app
    return conversation
