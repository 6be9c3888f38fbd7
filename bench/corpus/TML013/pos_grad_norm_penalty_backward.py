# Modelled on: https://github.com/pytorch/pytorch/issues/7343
# Report: backward(create_graph=True) leaks through the cycle x -> x.grad -> x.grad.grad_fn -> x; the maintainers suggested autograd.grad instead.
import torch


def train(model, loader, optimizer, penalty=0.1):
    for x, y in loader:
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward(create_graph=True)  # expect: TML013
        grad_norm = sum(p.grad.pow(2).sum() for p in model.parameters())
        (penalty * grad_norm).backward()
        optimizer.step()
