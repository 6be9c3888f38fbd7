# Modelled on: https://github.com/pytorch/pytorch/issues/16744
# Report: the workaround: reset p.grad = None after using the graph-carrying gradients, which breaks the cycle.
import torch


def train(model, loader, optimizer, penalty=0.1):
    params = list(model.parameters())
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward(create_graph=True)
        grad_norm = sum(p.grad.pow(2).sum() for p in params)
        for p in params:
            p.grad = None
        (loss + penalty * grad_norm).backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
