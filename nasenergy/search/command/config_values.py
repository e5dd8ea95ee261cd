"""Reading one setting's value: the objectives and the searched accuracy as the command line
spells them, and a value among its choices; each bad value is a one-line `UsageError`.
"""

from __future__ import annotations

from collections.abc import Collection

from nasenergy.errors import UsageError
from nasenergy.objectives import OBJECTIVE_NAMES
from nasenergy.oracles.datasets import SPLITS


def check_choice(flag: str, value: str, choices: Collection[str]) -> None:
    """Refuse ``value`` unless it is one of ``choices``, naming ``flag`` and the choices.

    Raises:
        UsageError: ``value`` is not among ``choices``.
    """
    if value not in choices:
        raise UsageError(f"{flag}: {value!r} is not one of {', '.join(choices)}")


def parse_objectives(text: str) -> tuple[str, ...]:
    """``"accuracy,energy"`` -> ``("accuracy", "energy")`` in canonical order.

    Raises:
        UsageError: an empty list, an unknown name or a repeated name.
    """
    names = tuple(p.strip().lower() for p in text.split(",") if p.strip())
    if not names:
        raise UsageError(f"--objectives needs at least one of {', '.join(OBJECTIVE_NAMES)}")
    for name in names:
        check_choice("--objectives", name, OBJECTIVE_NAMES)
    if len(set(names)) != len(names):
        raise UsageError(f"--objectives lists an objective twice: {text}")
    return tuple(n for n in OBJECTIVE_NAMES if n in names)


def parse_search_metric(text: str) -> tuple[str, str]:
    """``"x-valid/12"`` -> ``("x-valid", "12")``: the split and the NATS schedule (epochs) of
    ``--search-metric``.

    Raises:
        UsageError: not ``SPLIT/EPOCHS``, or an unknown split.
    """
    split, sep, epochs = str(text).strip().partition("/")
    split = split.strip().lower().replace("_", "-")
    if not sep or not epochs.strip().isdigit() or int(epochs) < 1 or split not in (*SPLITS, "valid", "test"):
        raise UsageError(
            f"--search-metric: expected SPLIT/EPOCHS with SPLIT one of {', '.join(SPLITS)}, valid, test "
            f"(e.g. x-valid/12, test/200), got {text!r}"
        )
    return split, str(int(epochs))
