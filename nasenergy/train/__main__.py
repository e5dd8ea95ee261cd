"""``python -m nasenergy.train``: see `nasenergy.train.cli`."""

from nasenergy.train.cli import main

raise SystemExit(main())
