"""``python -m nasenergy.search``."""

from nasenergy.search.command.cli import main

raise SystemExit(main())
