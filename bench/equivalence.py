"""The live-equals-resume property with many more examples than CI runs.

CI runs 8 generated answers per drawing path and 4 replies with a tool call
(``tests/test_ui_equivalence.py``); this runs the same tests with
``EXAMPLES`` each (default 200) and prints how many passed and how long each
took. Run: uv run python bench/equivalence.py [EXAMPLES]
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = (
    "test_what_streamed_is_drawn_as_a_resume_draws_it",
    "test_the_public_textual_fallback_draws_what_streamed_as_a_resume_draws_it",
    "test_a_reply_with_a_tool_call_is_drawn_as_a_resume_draws_it",
)


def main() -> None:
    examples = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    env = {**os.environ, "TRACTUI_EQUIVALENCE_EXAMPLES": str(examples)}
    failed = 0
    for name in TESTS:
        started = time.perf_counter()
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-n",
                "0",
                "-p",
                "no:randomly",
                "--timeout=0",
                f"tests/test_ui_equivalence.py::{name}",
            ],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        took = time.perf_counter() - started
        ok = run.returncode == 0
        failed += not ok
        print(
            f"{name}: {examples} examples {'passed' if ok else 'FAILED'} in {took:.0f} s ({took / examples:.1f} s each)"
        )
        if not ok:
            print(run.stdout[-4000:])
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
