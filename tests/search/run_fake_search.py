"""``python tests/search/run_fake_search.py [flags]``: the search command with the test parts."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fake_parts import fake_components  # noqa: E402

from nasenergy.search.command.cli import main  # noqa: E402

if __name__ == "__main__":
    raise SystemExit(main(components_factory=fake_components))
