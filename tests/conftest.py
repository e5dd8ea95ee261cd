"""Project-wide test settings.

Tiny networks run far slower with several intra-op threads on a busy 2-core machine, so the test
suite pins torch to one thread unless the caller chose otherwise.
"""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import importlib.util  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"


@pytest.fixture(scope="session")
def load_experiment():
    """Import a script of ``experiments/`` as a module: ``load_experiment("search_efficiency")``.

    The module stays in ``sys.modules`` (its dataclasses look it up) until the session ends. As
    when a script is run (``python experiments/x.py``), ``experiments/`` is on ``sys.path`` while
    the session lasts, so a script can import its siblings.
    """
    loaded: list[str] = []
    added = str(EXPERIMENTS) not in sys.path
    if added:
        sys.path.insert(0, str(EXPERIMENTS))

    def load(name: str):
        module_name = f"nasenergy_experiment_{name}"
        if module_name in sys.modules:
            return sys.modules[module_name]
        spec = importlib.util.spec_from_file_location(module_name, EXPERIMENTS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        loaded.append(module_name)
        spec.loader.exec_module(module)
        return module

    yield load
    for module_name in loaded:
        sys.modules.pop(module_name, None)
    if added and str(EXPERIMENTS) in sys.path:
        sys.path.remove(str(EXPERIMENTS))
