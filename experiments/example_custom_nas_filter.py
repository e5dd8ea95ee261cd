"""Example: the utilization filter inside your own NAS loop, on networks that are not NATS cells.

The search space here is a family of small CNNs (depth, width, kernel size) for the scikit-learn
8×8 digits. Each candidate is measured cheaply on the CPU with `CpuMeter` (throughput and
utilization; a CPU has no energy reading, so the front is accuracy ↑ × throughput ↑); only the
candidates the filter admits are trained for real (a few epochs) — the "expensive evaluation".
Optuna proposes the networks; filtered trials end PRUNED with their figures kept as user
attributes; the budget counts full evaluations only.

    python experiments/example_custom_nas_filter.py --budget 30 --mode dominance [--save filter.json]

Runs in about a minute or two on two CPU cores.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from nasenergy._cli import OneLineParser, run_main
from nasenergy.errors import UsageError
from nasenergy.filter import Candidate, CompleteTrialBudget, FilteredObjective, UtilizationFilter, decision_of
from nasenergy.hardware.cpu_meter import CpuMeter

DEPTHS = (1, 2, 3)
WIDTHS = (2, 4, 8, 16, 32)
KERNELS = (1, 3)
INPUT_SHAPE = (1, 8, 8)


def make_cnn(depth: int, width: int, kernel: int, seed: int) -> Any:
    """A small CNN: ``depth`` conv+ReLU layers of ``width`` channels, then a linear classifier.

    Weights are initialised from ``seed`` without touching the global torch generator.
    """
    import torch
    from torch import nn

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        layers: list[nn.Module] = []
        c_in = INPUT_SHAPE[0]
        for _ in range(depth):
            layers += [nn.Conv2d(c_in, width, kernel, padding=kernel // 2), nn.ReLU()]
            c_in = width
        layers += [nn.Flatten(), nn.Linear(width * INPUT_SHAPE[1] * INPUT_SHAPE[2], 10)]
        return nn.Sequential(*layers)


def load_digits_tensors(seed: int) -> dict[str, Any]:
    """The digits data as tensors, split 80/20 (train/validation) with ``seed``."""
    import numpy as np
    import torch
    from sklearn.datasets import load_digits

    x, y = load_digits(return_X_y=True)
    x = (x / 16.0).astype(np.float32).reshape(-1, *INPUT_SHAPE)
    order = np.random.default_rng(seed).permutation(len(x))
    cut = int(0.8 * len(x))
    tr, va = order[:cut], order[cut:]
    return {
        "x_train": torch.from_numpy(x[tr]),
        "y_train": torch.from_numpy(y[tr]),
        "x_val": torch.from_numpy(x[va]),
        "y_val": torch.from_numpy(y[va]),
    }


def train_and_score(model: Any, data: dict[str, Any], *, epochs: int, seed: int, batch_size: int = 128) -> float:
    """Train ``model`` with Adam for ``epochs`` and return validation accuracy in percent."""
    import torch
    from torch import nn

    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    loss_fn = nn.CrossEntropyLoss()
    n = len(data["x_train"])
    model.train()
    for _ in range(epochs):
        perm = torch.randperm(n, generator=gen)
        for i in range(0, n, batch_size):
            idx = perm[i : i + batch_size]
            opt.zero_grad()
            loss_fn(model(data["x_train"][idx]), data["y_train"][idx]).backward()
            opt.step()
    model.eval()
    with torch.inference_mode():
        pred = model(data["x_val"]).argmax(dim=1)
    return float((pred == data["y_val"]).float().mean() * 100.0)


def build_filter(mode: str, min_fit: int, target_recall: float, seed: int) -> Any:
    """The filter for this example: the front is accuracy × throughput (no energy on a CPU), and
    the front holds figures measured at the same (only) clock, so no energy optimism is needed."""
    objectives = ("accuracy", "throughput")
    if mode == "dominance":
        return UtilizationFilter.create(
            "dominance", min_fit=min_fit, target_recall=target_recall, objectives=objectives, seed=seed,
            energy_bound={"energy_factor": 1.0, "throughput_factor": 1.0, "noise_sigmas": 2.0},
        )
    if mode == "threshold":
        return UtilizationFilter.create(
            "threshold", min_fit=min_fit, target_recall=target_recall, good="pareto", objectives=objectives
        )
    return UtilizationFilter.create("none")


DUPLICATE_OF = "duplicate_of"
"""User attribute of a trial whose network an earlier trial proposed (it is pruned unmeasured, so
each network is measured, trained and listed on the front once)."""


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Run the search; returns a summary."""
    import optuna
    import torch
    from optuna.trial import TrialState


    torch.set_num_threads(args.threads)
    data = load_digits_tensors(args.seed)
    meter = CpuMeter(n_repeats=3, min_repeat_s=0.03)
    flt = build_filter(args.mode, args.min_fit, args.target_recall, args.seed)
    cost_s = {"measure": 0.0, "train": 0.0}
    first_of: dict[tuple[int, int, int], int] = {}  # network -> the trial that proposed it first

    def propose(trial: optuna.Trial) -> Candidate:
        depth = trial.suggest_categorical("depth", DEPTHS)
        width = trial.suggest_categorical("width", WIDTHS)
        kernel = trial.suggest_categorical("kernel", KERNELS)
        network = (depth, width, kernel)
        if network in first_of:  # a repeat: measured (and trained, or skipped) once already
            trial.set_user_attr(DUPLICATE_OF, first_of[network])
            raise optuna.TrialPruned(f"the network of trial {first_of[network]}")
        first_of[network] = trial.number
        model = make_cnn(depth, width, kernel, seed=args.seed + trial.number)
        m = meter.measure(model, INPUT_SHAPE, batch_size=256, precision="fp32")
        cost_s["measure"] += m.measure_cost_s
        return Candidate(measurement=m, features=(depth, width, kernel), payload=model)

    def evaluate(trial: optuna.Trial, cand: Candidate) -> float:
        t0 = time.perf_counter()
        acc = train_and_score(cand.payload, data, epochs=args.epochs, seed=args.seed + trial.number)
        cost_s["train"] += time.perf_counter() - t0
        return acc

    objective = FilteredObjective(flt, propose, evaluate, objectives=("accuracy", "throughput"))
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(directions=objective.directions, sampler=optuna.samplers.RandomSampler(seed=args.seed))
    study.optimize(objective, n_trials=args.max_trials, callbacks=[CompleteTrialBudget(args.budget)])
    if args.save:
        flt.save(args.save)
    return {
        "study": study,
        "objective": objective,
        "complete": study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)),
        "pruned": study.get_trials(deepcopy=False, states=(TrialState.PRUNED,)),
        "cost_s": cost_s,
    }


def report(summary: dict[str, Any], args: argparse.Namespace) -> None:
    """Print what happened."""
    complete, pruned, cost = summary["complete"], summary["pruned"], summary["cost_s"]
    repeats = [t for t in pruned if DUPLICATE_OF in t.user_attrs]
    skipped = [t for t in pruned if DUPLICATE_OF not in t.user_attrs]
    print(f"mode {args.mode}: {len(complete)} trained, {len(skipped)} skipped by the filter, "
          f"{len(repeats)} repeats of a network already proposed (cheap measuring {cost['measure']:.1f} s, "
          f"training {cost['train']:.1f} s; figures measured on this CPU)")
    for t in skipped[:5]:
        print(f"  skipped trial {t.number} {t.params}: {decision_of(t)['reason']}")
    print("front (validation accuracy %, throughput img/s):")
    by_number = {t.number: t for t in complete}
    for key, point in sorted(summary["objective"].front, key=lambda kp: -kp[1][0]):
        t = by_number[key]
        print(f"  trial {key:3d} {t.params}: {point[0]:.1f} %, {point[1]:.0f} img/s")


EXIT_BUDGET_NOT_REACHED = 3
"""The exit status when the trial cap stops the search before its budget (as the search's candidate cap)."""


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    p = OneLineParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mode", choices=("dominance", "threshold", "none"), default="dominance")
    p.add_argument("--budget", type=int, default=30, help="full evaluations (trainings)")
    p.add_argument("--max-trials", type=int, default=100, help="cap on all trials, skipped ones included")
    p.add_argument("--min-fit", type=int, default=10, help="evaluations before the filter starts skipping")
    p.add_argument("--target-recall", type=float, default=0.8, help="share of front members to keep")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--save", type=Path, default=None, help="write the trained filter here (JSON)")
    args = p.parse_args(argv)

    def body() -> int:
        if args.budget < 1 or args.max_trials < args.budget or args.epochs < 1 or args.threads < 1:
            raise UsageError("need --budget >= 1, --max-trials >= --budget, --epochs >= 1 and --threads >= 1")
        if not 0 < args.target_recall < 1:
            raise UsageError(f"--target-recall must be in (0, 1), got {args.target_recall}")
        t0 = time.perf_counter()
        summary = run(args)
        report(summary, args)
        print(f"total {time.perf_counter() - t0:.0f} s")
        trained = len(summary["complete"])
        if trained < args.budget:  # the trial cap came first: say so, as the search does
            print(f"stopped: {trained} of --budget {args.budget} networks trained within --max-trials "
                  f"{args.max_trials}; raise --max-trials or lower --budget", file=sys.stderr)
            return EXIT_BUDGET_NOT_REACHED
        return 0

    return run_main(body)


if __name__ == "__main__":
    sys.exit(main())
