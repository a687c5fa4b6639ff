"""``python -m tractui``: the same entry point as the ``tractui`` command."""

from tractui.cli.main import main

raise SystemExit(main())
