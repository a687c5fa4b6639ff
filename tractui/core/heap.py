"""The cyclic garbage collector, paused around bulk object creation."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic GC around bulk object creation (loading, compiling or encoding a long session).

    Creating tens of thousands of objects triggers full collections that
    rescan the whole heap again and again; the objects made here hold no
    cycles worth collecting, so pausing is safe and several times faster.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
