"""The filter yields after many rejections in a row, to a promising candidate, and within a bound."""

from __future__ import annotations

import math

from nasenergy.filter.records import Decision
from nasenergy.search.loop.filter_yield import FilterYield


def _rejected(upper: float) -> Decision:
    return Decision(admit=False, reason="dominated", mode="dominance", utilization=0.5, accuracy_upper=upper)


def test_it_yields_to_a_candidate_among_the_most_promising_rejected():
    rule = FilterYield(after=10, top=0.1)
    for i in range(10):
        assert not rule.consider(_rejected(float(i))).admit  # 0..9 rejected: the bar is the 90% quantile
    assert not rule.consider(_rejected(5.0)).admit
    chosen = rule.consider(_rejected(9.5))
    assert chosen.admit and "yields after 11 rejections" in chosen.reason and rule.yielded == 1
    assert not rule.consider(_rejected(100.0)).admit  # the count starts again


def test_an_admission_resets_the_count_and_the_bound_holds():
    rule = FilterYield(after=5)
    for _ in range(4):
        rule.consider(_rejected(1.0))
    rule.consider(Decision(admit=True, reason="ok", mode="dominance", utilization=0.5))
    assert not any(rule.consider(_rejected(1.0)).admit for _ in range(5))
    # never promising enough: admitted anyway after 3 * after rejections
    outcomes = [rule.consider(_rejected(-1.0 - i)).admit for i in range(20)]
    assert outcomes.index(True) == 3 * 5 - 5
    assert not FilterYield(after=0).consider(_rejected(math.inf)).admit  # 0 turns it off


class _AdmitsThree:
    """A filter that admits its first three candidates and rejects every later one, with an
    optimistic accuracy that ranks the rejected ones (their utilization, in percent)."""

    n_observed = 0

    def __init__(self) -> None:
        self.admitted = 0

    def admit(self, measurement, front_points, *, features=None) -> Decision:
        if self.admitted < 3:
            self.admitted += 1
            return Decision(admit=True, reason="cold start", mode="fake", utilization=measurement.utilization)
        return Decision(admit=False, reason="dominated", mode="fake", utilization=measurement.utilization,
                        accuracy_upper=100.0 * measurement.utilization)

    def observe(self, *args, **kwargs) -> None:
        pass


N_COVERED = 12
"""Networks the small profile of `_small_profile` holds."""


def _small_profile(config):
    """The fake parts over a profile of `N_COVERED` networks that can learn, proposed in turn
    (a trial the worker enqueued proposes the network of the trial it reopens, as its parameters
    would), and a filter that rejects all but three of them."""
    import dataclasses

    from fake_parts import fake_components

    from nasenergy.search.command.coverage import Coverage
    from nasenergy.search.loop.filter_yield import REOPENED_FROM

    parts = fake_components(config)
    space, key_of = parts.space, parts.key_of
    archs, keys = [], set()
    for i in range(space.size):
        arch = space.arch_at(i)
        if space.output_depends_on_input(arch) and key_of(arch) not in keys:
            archs.append(arch)
            keys.add(key_of(arch))
        if len(archs) == N_COVERED:
            break

    class Turns:
        def suggest(self, trial):
            space.suggest(trial)
            return archs[trial.user_attrs.get(REOPENED_FROM, trial.number) % N_COVERED]

        def __getattr__(self, name):
            return getattr(space, name)

    coverage = Coverage("small.csv", "fake H200", "tss", "fp16", N_COVERED, 6466, N_COVERED, space.size)
    return dataclasses.replace(parts, space=Turns(), filter=_AdmitsThree(), coverage=coverage)


def _search(tmp_path, **kw):
    from nasenergy.run.files import load_run
    from nasenergy.search import SearchConfig, run_search

    config = SearchConfig(budget=8, dvfs="none", out=str(tmp_path / "run"), quiet=True, patience=0,
                          redirect_after=0, **kw)
    summary = run_search(config, components_factory=_small_profile)
    return summary, load_run(tmp_path / "run")


def test_with_every_covered_network_seen_the_filter_yields_on_the_most_promising_rejected(tmp_path, fake_env):
    summary, run = _search(tmp_path, filter_yield_after=1000)  # the in-a-row rule never fires here
    assert (summary.stop_reason, summary.evaluated) == ("budget", 8)
    reopened = [r for r in run.evaluated if "was seen with budget left" in str(r["filter_reason"])]
    assert len(reopened) == 5 and len({r["network"] for r in run.evaluated}) == 8
    rejected = [r for r in run.rows if r["outcome"] == "filtered"]
    promise = sorted((float(r["utilization"]) for r in rejected), reverse=True)
    assert sorted((float(r["utilization"]) for r in reopened), reverse=True) == promise[:5]
    assert "5 of them on networks it had rejected" in (run.run_dir / "report.md").read_text()


def test_without_the_yield_the_run_stops_as_exhausted(tmp_path, fake_env):
    summary, _ = _search(tmp_path, filter_yield_after=0)
    assert (summary.stop_reason, summary.evaluated) == ("exhausted", 3)



def _whole_space(config, census=True):
    """`_small_profile`'s parts as if its networks were the whole space: no partial coverage, and
    (with ``census``) a census that counts them."""
    import dataclasses

    from nasenergy.search.command.coverage import NetworkCensus

    parts = _small_profile(config)
    return dataclasses.replace(parts, coverage=None,
                               census=NetworkCensus(N_COVERED, frozenset()) if census else None)


def test_with_every_network_of_the_space_seen_the_filter_yields_on_the_rejected(tmp_path, fake_env):
    from nasenergy.run.files import load_run
    from nasenergy.search import SearchConfig, run_search

    def config(name):
        return SearchConfig(budget=8, dvfs="none", out=str(tmp_path / name), quiet=True, patience=0,
                            redirect_after=0, filter_yield_after=1000, max_candidates=60)

    summary = run_search(config("run"), components_factory=_whole_space)
    run = load_run(tmp_path / "run")
    assert (summary.stop_reason, summary.evaluated) == ("budget", 8)
    assert len({r["network"] for r in run.evaluated}) == 8
    assert sum("was seen with budget left" in str(r["filter_reason"]) for r in run.evaluated) == 5
    # without the census the worker cannot tell that nothing new is left: only the cap stops it
    blind = run_search(config("blind"), components_factory=lambda c: _whole_space(c, census=False))
    assert (blind.stop_reason, blind.evaluated) == ("max_candidates", 3)


def test_the_census_counts_the_networks_that_can_learn():
    from nasenergy.run.network_key import network_key_fn
    from nasenergy.search.command.coverage import learnable_networks, network_census
    from search_spaces import get_space

    space = get_space("tss")
    census = network_census(space, network_key_fn(space, "deployed"))
    assert census.learnable == learnable_networks(space, network_key_fn(space, "deployed")) == 6016
    assert len(census.cannot_learn) == 24


def test_the_reopen_reason_is_the_one_the_report_counts():
    from nasenergy.run.report import REOPENED_TEXT
    from nasenergy.search.loop.filter_yield import REOPEN_REASON

    assert REOPENED_TEXT in REOPEN_REASON
