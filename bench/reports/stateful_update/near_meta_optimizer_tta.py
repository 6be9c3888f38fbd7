# Source: https://github.com/metaopt/torchopt/issues/218
# Report: stepping a differentiable meta-optimizer (MetaAdam) repeatedly, e.g. at inference, makes GPU memory grow every step: the optimizer never detaches the gradient link, so each step's params and moment buffers hold all earlier steps' graphs
# Shape: near-miss, the fix proposed in the linked PR (metaopt/torchopt#219): step() cuts the gradient link, re-leafing params and buffers after each update
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F
from torch.func import functional_call


class MetaMomentumSGD:
    """Differentiable SGD with momentum: updates are part of the autograd graph."""

    def __init__(self, module, lr=1e-3, momentum=0.9):
        self.module = module
        self.lr = lr
        self.momentum = momentum
        self.names = [n for n, _ in module.named_parameters()]
        self.params = [p for _, p in module.named_parameters()]
        self.bufs = [torch.zeros_like(p) for p in self.params]

    def state(self):
        return dict(zip(self.names, self.params))

    def forward(self, x):
        return functional_call(self.module, self.state(), (x,))

    def step(self, loss):
        grads = torch.autograd.grad(loss, self.params, create_graph=True)
        bufs = [self.momentum * b + g for b, g in zip(self.bufs, grads)]
        new_params = [p - self.lr * b for p, b in zip(self.params, bufs)]
        self.bufs = [b.detach() for b in bufs]
        self.params = [p.detach().requires_grad_() for p in new_params]


def entropy_loss(logits):
    probs = logits.softmax(dim=1)
    return -(probs * F.log_softmax(logits, dim=1)).sum(dim=1).mean()


def adapt_on_stream(model, stream, device="cuda"):
    meta_opt = MetaMomentumSGD(model, lr=1e-4)
    predictions = []
    for images in stream:
        images = images.to(device)
        logits = meta_opt.forward(images)
        loss = entropy_loss(logits)
        meta_opt.step(loss)
        with torch.no_grad():
            predictions.append(meta_opt.forward(images).argmax(dim=1).cpu())
    return torch.cat(predictions)
