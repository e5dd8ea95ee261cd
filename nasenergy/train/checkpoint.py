"""Epoch checkpoints of a training, as ``.npz`` arrays (no pickles): the network's tensors, the
optimiser's momentum buffers, the random stream's state and the counters so far. A training
given the same checkpoint path continues after the last finished epoch; on the CPU the result is
then the same as an uninterrupted training's (tested)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from nasenergy.errors import writing

if TYPE_CHECKING:
    import torch


@dataclass(frozen=True)
class Progress:
    """The counters a checkpoint keeps besides the tensors."""

    epoch: int
    step: int
    train_s: float
    energy_j: float | None
    fingerprint: str


def save_checkpoint(path: Path, *, model: "torch.nn.Module", buffers: list["torch.Tensor"],
                    generator: "torch.Generator", progress: Progress) -> None:
    """Write a checkpoint atomically (a temporary file, then a rename)."""
    arrays: dict[str, np.ndarray] = {}
    for name, tensor in model.state_dict().items():
        arrays[f"model/{name}"] = tensor.detach().float().cpu().numpy() if tensor.is_floating_point() \
            else tensor.detach().cpu().numpy()
    for i, buf in enumerate(buffers):
        arrays[f"momentum/{i}"] = buf.detach().float().cpu().numpy()
    arrays["rng"] = generator.get_state().cpu().numpy()
    arrays["progress"] = np.frombuffer(json.dumps(progress.__dict__).encode(), dtype=np.uint8)
    tmp = path.with_name(path.name + ".tmp.npz")
    with writing(path):  # a full disk or a read-only place: one line, not a traceback
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as fh:
            np.savez(fh, **arrays)  # type: ignore[arg-type]
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)


def load_checkpoint(path: Path, *, model: "torch.nn.Module", buffers: list["torch.Tensor"],
                    generator: "torch.Generator", fingerprint: str) -> Progress | None:
    """Restore a checkpoint into the network, buffers and stream; ``None`` when there is none,
    or it belongs to another training (its fingerprint differs) or cannot be read (it is then
    ignored and the training starts over)."""
    import torch

    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as z:
            progress = Progress(**json.loads(bytes(z["progress"]).decode()))
            if progress.fingerprint != fingerprint:
                return None
            state = model.state_dict()
            new_state: dict[str, Any] = {}
            for name, tensor in state.items():
                new_state[name] = torch.from_numpy(z[f"model/{name}"]).to(tensor.dtype)
            model.load_state_dict(new_state)
            with torch.no_grad():
                for i, buf in enumerate(buffers):
                    buf.copy_(torch.from_numpy(z[f"momentum/{i}"]))
            generator.set_state(torch.from_numpy(z["rng"].copy()))
    except (OSError, ValueError, KeyError, TypeError, RuntimeError):
        return None
    return progress
