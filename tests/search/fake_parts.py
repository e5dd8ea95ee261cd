"""Search parts for tests: the fake meter and the table oracle over a table the test writes.

`fake_components` is a components factory for `nasenergy.search.run_search` (and for
``run_fake_search.py``, which tests start as a subprocess). Environment variables tune it:

* ``NASENERGY_TEST_TABLE``: the benchmark table (see `write_table`) the table oracle reads.
* ``NASENERGY_TEST_EVAL_DELAY_S``: seconds each full evaluation sleeps (to kill a run mid-way).
* ``NASENERGY_TEST_STOP_IN_LOCK``: a file; once it exists, the process stops itself (``SIGSTOP``)
  inside its next transaction holding the study's budget row (the worst moment for a worker to
  pause), once.
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from nasenergy.oracles import load_oracle
from nasenergy.oracles.network import NetworkOracle
from nasenergy.run.network_key import measured_form, network_key_fn
from nasenergy.search.command.components import Components, arch_measurer, default_energy_bound, make_dvfs, make_filter
from nasenergy.search.command.config import SearchConfig
from nasenergy.testing import FakeMeter

TABLE_ENV = "NASENERGY_TEST_TABLE"
DELAY_ENV = "NASENERGY_TEST_EVAL_DELAY_S"
STOP_IN_LOCK_ENV = "NASENERGY_TEST_STOP_IN_LOCK"


def stop_inside_the_budget_lock(trigger: Path) -> None:
    """Make this process stop itself (``SIGSTOP``) inside its first transaction holding the
    study's budget row (`ClaimStore._locked`) after ``trigger`` exists, once; another process
    sends ``SIGCONT``."""
    import signal
    from contextlib import contextmanager

    from nasenergy.search.storage.claims import ClaimStore

    original = ClaimStore._locked
    done = [False]

    @contextmanager
    def locked(self):
        with original(self) as held:
            if not done[0] and trigger.exists():
                done[0] = True
                os.kill(os.getpid(), signal.SIGSTOP)
            yield held

    ClaimStore._locked = locked


def write_table(path: Path, space: Any, *, seed: int = 0) -> Path:
    """A synthetic benchmark table (the `nasenergy.oracles.tables` wide schema) over every TSS
    architecture: 12-epoch CIFAR-10 x-valid accuracy growing with FLOPs plus noise, a 200-epoch
    CIFAR-10 test accuracy 8 points above it, and a training time growing with FLOPs. Every figure
    is synthetic."""
    import numpy as np

    rng = np.random.default_rng(seed)
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["arch_index", "cifar10valid_valid_acc_12ep", "cifar10valid_train_time_12ep_s", "cifar10_test_acc_200ep"])
        for i in range(space.size):
            flops = space.count(space.arch_at(i), "cifar10").flops
            acc = 10.0 + 80.0 * (1.0 - np.exp(-flops / 1.5e8)) + rng.normal(0.0, 3.0)
            w.writerow([i, round(float(acc), 3), round(600.0 + flops / 1e6, 1), round(min(99.0, float(acc) + 8.0), 3)])
    return path


class SlowOracle:
    """An oracle whose evaluations take at least ``delay_s`` seconds (to interrupt a run mid-way)."""

    def __init__(self, oracle: Any, delay_s: float) -> None:
        self._oracle = oracle
        self._delay_s = delay_s

    def evaluate(self, arch: Any, dataset: str, *, seed: int | None = None) -> Any:
        time.sleep(self._delay_s)
        return self._oracle.evaluate(arch, dataset, seed=seed)

    def report(self, arch: Any, dataset: str) -> Any:
        return self._oracle.report(arch, dataset)

    def describe(self) -> str:
        return self._oracle.describe()

    def __getattr__(self, name: str) -> Any:  # metrics, space_name, ... of the wrapped oracle
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._oracle, name)


def fake_components(config: SearchConfig) -> Components:
    """The fake meter (synthetic figures for an H200-like GPU), the table oracle over the test
    table, the configured DVFS step (modelled with the H200 set) and the configured filter with
    the energy bound matching that step."""
    from search_spaces import get_space

    space = get_space(config.space)
    meter = FakeMeter(noise_cv=0.05, seed=3, cost_s=0.5, device_name="fake H200")
    oracle = load_oracle(os.environ[TABLE_ENV], space, seed=config.seed)
    delay_s = float(os.environ.get(DELAY_ENV, "0"))
    if os.environ.get(STOP_IN_LOCK_ENV):
        stop_inside_the_budget_lock(Path(os.environ[STOP_IN_LOCK_ENV]))
    network_key = network_key_fn(space, measured_form(meter))
    oracle = NetworkOracle(oracle, space)  # as the search does for deployed networks
    if delay_s:  # one delay per network evaluated, whatever its number of cells
        oracle = SlowOracle(oracle, delay_s)
    step = make_dvfs(config, meter, space)
    bound = step.energy_bound if step else default_energy_bound(config).bound
    return Components(
        space=space,
        measure=arch_measurer(meter, space, config),
        oracle=oracle,
        filter=make_filter(config, energy_bound=bound),
        optimal_clock=step.optimal_clock if step else None,
        describe={"meter": "FakeMeter (synthetic)", "oracle": oracle.describe(), "dvfs": config.dvfs},
        network_key=network_key,
    )


FAKE_BOARD_POWER = (1.0, 0.95, 1.03)
"""The power factor of fake board k (entry k) in `fake_board_components`."""


def fake_board_components(config: SearchConfig) -> Components:
    """`fake_components` whose meter is fake board k in the worker process ``nasenergy-worker-k``
    (board 0 in any other process), drawing `FAKE_BOARD_POWER` [k] times board 0's power."""
    import dataclasses
    import multiprocessing

    name = multiprocessing.current_process().name
    k = int(name.rsplit("-", 1)[-1]) if name.startswith("nasenergy-worker-") else 0
    from search_spaces import get_space

    meter = FakeMeter.board(k, power_factor=FAKE_BOARD_POWER[k], noise_cv=0.05, seed=3, cost_s=0.5)
    parts = fake_components(config)
    return dataclasses.replace(parts, measure=arch_measurer(meter, get_space(config.space), config))


def start_search(args: list[str], env: dict[str, str]) -> subprocess.Popen:
    """``python run_fake_search.py ARGS`` (the search command with these parts) as a child
    process, stdout and stderr piped."""
    script = Path(__file__).resolve().parent / "run_fake_search.py"
    return subprocess.Popen(
        [sys.executable, str(script), *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def dashboard_get(storage: Any, path: str) -> dict:
    """GET ``path`` from optuna-dashboard's WSGI app over ``storage`` (a URL, a journal path or a
    storage object); the parsed JSON body. Skips the test without optuna-dashboard."""
    import json
    import wsgiref.util

    import pytest

    optuna_dashboard = pytest.importorskip("optuna_dashboard")
    app = optuna_dashboard.wsgi(storage)
    environ: dict = {}
    wsgiref.util.setup_testing_defaults(environ)
    environ["PATH_INFO"] = path
    status: list[str] = []
    body = b"".join(app(environ, lambda s, h, *a: status.append(s)))
    assert status[0].startswith("200"), status
    return json.loads(body)
