"""``python -m nasenergy``: the one command, see `nasenergy.cli`."""

from nasenergy.cli import main

raise SystemExit(main())
