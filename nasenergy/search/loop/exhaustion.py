"""Whether a study has seen every network it can evaluate while budget slots are still free (a new
candidate can then only be a duplicate or not recorded)."""

from __future__ import annotations

from nasenergy.search.command.components import Components
from nasenergy.search.storage.claims import BudgetStatus, ClaimStore


class Exhaustion:
    """Tells one worker whether its study is exhausted (`is_exhausted`), remembering the census
    keys that cannot learn it has found in the claims."""

    def __init__(self, components: Components, claims: ClaimStore) -> None:
        self.components = components
        self.claims = claims
        self._unlearnable_seen: set[str] = set()  # census keys that cannot learn, found in the claims

    def is_exhausted(self, status: BudgetStatus) -> bool:
        """Whether every network the study can evaluate has been seen (a new candidate can then
        only be a duplicate or not recorded) while budget slots are still free: every class of a
        partial recorded profile, else every network of the census that can learn
        (`Components.census`; the networks that cannot learn are recorded as filtered once seen)."""
        if status.claimed >= status.budget:
            return False
        seen = status.done + status.running + status.failed + status.filtered
        coverage = self.components.coverage
        if coverage is not None and not coverage.complete:
            return seen >= coverage.covered_classes
        census = self.components.census
        if census is None or seen < census.learnable:
            return False
        # claims are only forgotten when a study is opened, so only keys not found yet are looked up again
        self._unlearnable_seen.update(key for key in census.cannot_learn - self._unlearnable_seen
                                      if self.claims.lookup(key) is not None)
        return seen - len(self._unlearnable_seen) >= census.learnable
