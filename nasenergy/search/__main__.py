"""``python -m nasenergy.search``."""

from nasenergy.search.cli import main

raise SystemExit(main())
