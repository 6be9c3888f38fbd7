# Source: https://github.com/amirgholami/PyHessian/issues/25
# Report: Computing the top Hessian eigenvalue with PyHessian (which calls loss.backward(create_graph=True)) raised PyTorch's warning that backward with create_graph=True creates a parameter/gradient reference cycle that can leak memory unless .grad is reset.
# Shape: the monitor follows the warning's advice and takes first-order gradients with torch.autograd.grad(create_graph=True), so no .grad field ever holds a graph.
# Expect: near-miss: must be silent
import torch


def top_hessian_eigenvalue(model, criterion, x, y, iters=20):
    params = [p for p in model.parameters() if p.requires_grad]
    loss = criterion(model(x), y)
    grads = torch.autograd.grad(loss, params, create_graph=True)
    v = [torch.randn_like(p) for p in params]
    eig = None
    for _ in range(iters):
        norm = torch.sqrt(sum((vi * vi).sum() for vi in v))
        v = [vi / norm for vi in v]
        hv = torch.autograd.grad(grads, params, grad_outputs=v, retain_graph=True)
        eig = sum((h * vi).sum() for h, vi in zip(hv, v)).item()
        v = [h.detach() for h in hv]
    return eig


def train(model, criterion, optimizer, loader, probe_batch, epochs=10):
    history = []
    for epoch in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            criterion(model(x.cuda()), y.cuda()).backward()
            optimizer.step()
        px, py = probe_batch
        history.append(top_hessian_eigenvalue(model, criterion, px.cuda(), py.cuda()))
    return history
