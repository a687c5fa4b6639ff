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
    """Freezes what a loaded session keeps; a view replaced since is collected first.

    Off unless the app runs as the ``tractui`` command: in a process that runs
    many apps, tests, each freeze would keep every earlier app's garbage for good.
    """

    def __init__(self, *, enabled: bool) -> None:
        self.enabled = enabled
        self.stale = False  # what was frozen may be garbage now: the next settle collects it

    def replaced(self) -> None:
        """A view or session was replaced: widgets and history frozen with it may be garbage."""
        self.stale = True

    def settle(self) -> None:
        """Freeze what is alive now; if anything was replaced since the last freeze, give
        everything back to the collector and collect once first (a pause of one full
        collection)."""
        if not self.enabled:
            return
        if self.stale:
            gc.unfreeze()
            gc.collect()
            self.stale = False
        gc.freeze()
