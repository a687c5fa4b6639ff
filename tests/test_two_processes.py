"""Two processes writing one history database at once: no corruption, no lost writes."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap

from tractui.core.content import Content
from tractui.store.history import HistoryStore

PER_PROCESS = 100

WRITER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from tractui.core.content import Content, Usage
    from tractui.store.history import HistoryStore

    db, shared, name, go, count = sys.argv[1], sys.argv[2], sys.argv[3], Path(sys.argv[4]), int(sys.argv[5])
    store = HistoryStore(db)
    own = store.create_session()
    while not go.exists():
        time.sleep(0.001)
    for i in range(count):
        store.append(shared, "user", Content.human(f"{name} {i}"))
        c = store.append(own, "assistant", Content(speaker="ai"), status="interrupted")
        store.update(c.id, content=Content.human(f"{name} own {i}"), status="complete", usage=Usage(output_tokens=1))
    print(own)
    """
)


def test_two_writers_at_once(tmp_path):
    db = tmp_path / "history.db"
    with HistoryStore(db) as store:
        shared = store.create_session()
        store.append(shared, "system", Content.system_prompt("start"))
    go = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(db), shared, name, str(go), str(PER_PROCESS)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for name in ("A", "B")
    ]
    go.touch()
    own_ids = []
    for proc in procs:
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0
        own_ids.append(out.strip())

    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
    with HistoryStore(db) as store:
        chain = store.chain(shared)
        # every append landed, and each one read the head the other process had just moved: one linear chain
        assert len(chain) == 1 + 2 * PER_PROCESS
        texts = [c.content.text for c in chain[1:]]
        for name in ("A", "B"):
            assert [t for t in texts if t.startswith(name)] == [f"{name} {i}" for i in range(PER_PROCESS)]
        assert {c.id for c in store.commits(shared)} == {c.id for c in chain}
        for own, name in zip(own_ids, ("A", "B"), strict=True):
            mine = store.chain(own)
            assert [c.content.text for c in mine] == [f"{name} own {i}" for i in range(PER_PROCESS)]
            assert all(c.status == "complete" for c in mine)
            assert store.totals(own).output_tokens == PER_PROCESS
