"""``python -m nasenergy.proxies``: see `nasenergy.proxies.cli`."""

import sys

from nasenergy.proxies.cli import main

sys.exit(main())
