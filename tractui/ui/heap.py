"""A loaded session kept out of the garbage collector's full walks.

A full collection walks every object the collector tracks and holds the whole
app meanwhile, a key and a streaming reply included. In a long session most of
them are the session itself (its history as read, merged for the next request
and drawn), and they live as long as the session does; once it is loaded they
are frozen (``gc.freeze``), as start-up's imports are (``launch.tune_gc``), and
each full collection walks only what came after (figures: docs/ui.md, "Speed").
"""

from __future__ import annotations

import gc


class Heap:
    """Freezes what a loaded session keeps.

    Off unless the app runs as the ``tractui`` command: in a process that runs
    many apps, tests, each freeze would keep every earlier app's garbage for good.
    """

    def __init__(self, *, enabled: bool) -> None:
        self.enabled = enabled

    def loaded(self, *, replaced: bool) -> None:
        """A session is loaded, drawn and its next request readied: freeze what is alive.

        ``replaced``: it took the place of another session or view, whose objects,
        frozen before, may be garbage now; they are thawed and collected first (one
        full collection, while the user looks at what was just drawn).
        """
        if not self.enabled:
            return
        if replaced:
            gc.unfreeze()
            gc.collect()
        gc.freeze()
