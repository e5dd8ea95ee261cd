"""Nesterov SGD with weight decay as tensor operations a CUDA graph can capture.

`torch.optim.SGD` reads its learning rate as a Python float, so a graph captured around a
training step would freeze it. `NesterovSgd` keeps the learning rate in a 0-d tensor on the
parameters' device and updates with ``torch._foreach_*`` kernels only; one step computes exactly
what ``torch.optim.SGD(params, lr, momentum, weight_decay=wd, nesterov=True)`` computes (tested):

    g <- g + wd * p;  buf <- momentum * buf + g;  g <- g + momentum * buf;  p <- p - lr * g

(the momentum buffers start at zero, so the first step sets ``buf = g`` as torch's does).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:
    import torch


class NesterovSgd:
    """SGD with Nesterov momentum and L2 weight decay, capturable in a CUDA graph.

    Args:
        params: the parameters to train (those with ``requires_grad``).
        lr: the initial learning rate.
        momentum: momentum factor (0.9 in NATS-Bench's recipe).
        weight_decay: L2 penalty added to each gradient.
    """

    def __init__(self, params: Iterable["torch.nn.Parameter"], *, lr: float, momentum: float,
                 weight_decay: float) -> None:
        import torch

        self.params: list[torch.Tensor] = [p for p in params if p.requires_grad]
        if not self.params:
            raise ValueError("nothing to train: the network has no trainable parameter")
        device = self.params[0].device
        self.lr = torch.tensor(float(lr), dtype=torch.float32, device=device)
        self.momentum = float(momentum)
        self.weight_decay = float(weight_decay)
        self.buffers = [torch.zeros_like(p, memory_format=torch.preserve_format) for p in self.params]

    def set_lr(self, lr: float) -> None:
        """Set the learning rate of the next steps (an in-place write: graphs see it)."""
        self.lr.fill_(float(lr))

    def zero_grad(self) -> None:
        """Forget the gradients (``set_to_none``: the next backward allocates them)."""
        for p in self.params:
            p.grad = None

    def step(self) -> None:
        """One update from the parameters' ``.grad``."""
        import torch

        with torch.no_grad():
            grads: list[torch.Tensor] = []
            for p in self.params:
                if p.grad is None:
                    raise RuntimeError("a parameter has no gradient: run backward() before step()")
                grads.append(p.grad)
            if self.weight_decay:
                torch._foreach_add_(grads, self.params, alpha=self.weight_decay)
            if self.momentum:
                torch._foreach_mul_(self.buffers, self.momentum)
                torch._foreach_add_(self.buffers, grads)
                torch._foreach_add_(grads, self.buffers, alpha=self.momentum)
            torch._foreach_mul_(grads, self.lr)
            torch._foreach_sub_(self.params, grads)
