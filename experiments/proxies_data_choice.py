"""How much the input batch changes each data-dependent proxy's ranking of networks.

CIFAR images are not available to the package, so the data-dependent proxies (jacov, NASWOT,
snip, grad_norm) run on a stand-in batch (`nasenergy.proxies.data`). The measure, fixed before any
result was seen: Spearman's rho, over a seeded random sample of TSS deployed networks, between the
scores of one proxy under two batches, with a 95 % bootstrap interval (networks resampled, 1,000
draws). Pairs: ``gaussian`` seed 0 against ``gaussian`` seed 1 (the noise of the draw),
``photos`` (crops of scikit-learn's two sample photographs) and ``digits`` (scikit-learn's 8x8
digits, upsampled); and ``photos`` against ``digits``. A rho near 1 means the choice does not
matter for ranking. Networks whose score is degenerate (``-inf``) under a batch keep their ``-inf``,
which ranks last.

Writes ``scores.csv`` (one row per network, batch and proxy; resumable: rows already there are
kept), ``spearman.csv`` and ``README.md`` to ``--out`` (default ``results/proxies_data_choice``)::

    python experiments/proxies_data_choice.py --n 40 --dataset cifar10 [--device cpu] [--threads 1]
"""

from __future__ import annotations

import argparse
import csv
import math
import random
import sys
import time
from pathlib import Path

import numpy as np

from nasenergy._cli import OneLineParser, run_main
from nasenergy.proxies.compute import compute_arch_proxies
from nasenergy.proxies.data import DEFAULT_BATCH_SIZE
from search_spaces import DATASETS, get_space

PROXIES = ("jacov", "naswot", "snip", "grad_norm")
CHOICES: tuple[tuple[str, str, int], ...] = (("gaussian0", "gaussian", 0), ("gaussian1", "gaussian", 1),
                                             ("photos0", "photos", 0), ("digits0", "digits", 0))
PAIRS = (("gaussian0", "gaussian1"), ("gaussian0", "photos0"), ("gaussian0", "digits0"), ("photos0", "digits0"))
SCORE_COLUMNS = ("arch_index", "arch", "batch", "proxy", "score", "cost_s")
DEFAULT_OUT = Path(__file__).resolve().parents[1] / "results" / "proxies_data_choice"


def sample_networks(space, n: int, seed: int) -> list:
    """A seeded random sample of `n` deployed networks (their class representatives), in random order
    (a run stopped early holds a random sample)."""
    return random.Random(seed).sample(space.deployed_classes(), n)


def read_scores(path: Path) -> list[dict[str, str]]:
    if not path.is_file():
        return []
    with open(path, newline="") as f:
        return [r for r in csv.DictReader(f) if None not in r and r.get("cost_s")]


def spearman_with_ci(x: np.ndarray, y: np.ndarray, rng: np.random.Generator, draws: int = 1000):
    """Spearman's rho of `x` and `y` with a percentile bootstrap 95 % interval."""
    from scipy.stats import spearmanr  # lazy: scipy only for the statistics

    def rho(a: np.ndarray, b: np.ndarray) -> float:
        if np.ptp(np.nan_to_num(a, neginf=-1e300)) == 0 or np.ptp(np.nan_to_num(b, neginf=-1e300)) == 0:
            return math.nan
        return float(spearmanr(a, b).statistic)

    point = rho(x, y)
    boots = [rho(x[i], y[i]) for i in (rng.integers(len(x), size=len(x)) for _ in range(draws))]
    boots = [b for b in boots if math.isfinite(b)]
    lo, hi = (np.percentile(boots, [2.5, 97.5]) if boots else (math.nan, math.nan))
    return point, float(lo), float(hi)


def summarise(rows: list[dict[str, str]], seed: int) -> list[dict[str, object]]:
    table: dict[tuple[str, str], dict[int, float]] = {}
    for r in rows:
        table.setdefault((r["proxy"], r["batch"]), {})[int(r["arch_index"])] = float(r["score"])
    out = []
    rng = np.random.default_rng(seed)
    for proxy in PROXIES:
        for a, b in PAIRS:
            xa, xb = table.get((proxy, a), {}), table.get((proxy, b), {})
            common = sorted(set(xa) & set(xb))
            if len(common) < 3:
                continue
            x, y = np.array([xa[i] for i in common]), np.array([xb[i] for i in common])
            rho, lo, hi = spearman_with_ci(x, y, rng)
            out.append({"proxy": proxy, "batch_a": a, "batch_b": b, "n_networks": len(common),
                        "spearman_rho": round(rho, 4), "ci95_low": round(lo, 4), "ci95_high": round(hi, 4)})
    return out


def write_readme(out: Path, stats: list[dict[str, object]], args: argparse.Namespace, cost_s: float) -> None:
    lines = [
        "# Does the stand-in batch change the data-dependent proxies' rankings?",
        "",
        f"Command: `python experiments/proxies_data_choice.py --n {args.n} --dataset {args.dataset} "
        f"--batch-size {args.batch_size} --seed {args.seed} --device {args.device}`"
        + (f" `--threads {args.threads}`" if args.threads else ""),
        "",
        f"{args.n} TSS deployed networks (seeded random sample, seed {args.seed}), {args.dataset} input and "
        f"classes, batch size {args.batch_size}, weights: the builder's default initialisation, seed 0. "
        "Batches: `gaussian0`/`gaussian1` = N(0, 1) pixels (the moments of standardised images) drawn "
        "with seeds 0 and 1; `photos0` = random crops of scikit-learn's two sample photographs "
        "(`load_sample_images`), standardised with the dataset's channel statistics; `digits0` = "
        "scikit-learn's 8x8 digits (`load_digits`) upsampled by nearest neighbour, repeated over the "
        "channels, standardised. Measure (fixed before the run): Spearman's rho between the scores of "
        "the same networks under two batches, 95 % percentile bootstrap over networks (1,000 draws). "
        f"Compute time of the run: {cost_s:.0f} s on {args.device}.",
        "",
        "| proxy | batch A | batch B | networks | Spearman rho | 95 % interval |",
        "| --- | --- | --- | ---: | ---: | --- |",
    ]
    for s in stats:
        lines.append(f"| {s['proxy']} | {s['batch_a']} | {s['batch_b']} | {s['n_networks']} | "
                     f"{s['spearman_rho']:.3f} | [{s['ci95_low']:.3f}, {s['ci95_high']:.3f}] |")
    lines += ["", "`scores.csv` holds every score and its cost; `spearman.csv` this table.", ""]
    (out / "README.md").write_text("\n".join(lines))


def run(args: argparse.Namespace) -> int:
    import torch  # lazy: torch is needed only to compute

    if args.threads:
        torch.set_num_threads(args.threads)
    space = get_space("tss")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    scores_path = out / "scores.csv"
    rows = read_scores(scores_path)
    done = {(int(r["arch_index"]), r["batch"]) for r in rows}
    new_file = not scores_path.is_file() or not rows
    start = time.monotonic()
    with open(scores_path, "w" if new_file else "a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=SCORE_COLUMNS)
        if new_file:
            writer.writeheader()
        for arch in sample_networks(space, args.n, args.seed):
            index = space.index(arch)
            for label, data, seed in CHOICES:
                if (index, label) in done:
                    continue
                report = compute_arch_proxies(space, arch, args.dataset, names=PROXIES, seed=seed,
                                              device=args.device, batch_size=args.batch_size, data=data)
                for r in report:
                    row = {"arch_index": index, "arch": str(arch), "batch": label, "proxy": r.name,
                           "score": repr(r.score), "cost_s": f"{r.cost_s:.4g}"}
                    writer.writerow(row)
                    rows.append({k: str(v) for k, v in row.items()})
                f.flush()
    cost_s = sum(float(r["cost_s"]) for r in rows)
    stats = summarise(rows, args.seed)
    with open(out / "spearman.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(stats[0]) if stats else ["proxy"])
        w.writeheader()
        w.writerows(stats)
    write_readme(out, stats, args, cost_s)
    print(f"{len(stats)} correlations -> {out} ({time.monotonic() - start:.0f} s)")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="experiments/proxies_data_choice.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=40, help="networks in the sample (default 40)")
    p.add_argument("--dataset", default="cifar10", choices=DATASETS)
    p.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE)
    p.add_argument("--seed", type=int, default=0, help="seed of the network sample and the bootstrap")
    p.add_argument("--device", default="cpu")
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    p.add_argument("--out", default=str(DEFAULT_OUT))
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return run_main(lambda: run(args))


if __name__ == "__main__":
    sys.exit(main())
