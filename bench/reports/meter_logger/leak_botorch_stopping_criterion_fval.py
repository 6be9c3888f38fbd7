# Source: https://github.com/meta-pytorch/botorch/pull/2529
# Report: botorch issue #2526: a SingleTaskVariationalGP fitted from a DataLoader ran the device out of memory after some iterations; `fval` from the closure reached the stopping criterion undetached; fixed with `fval = closure()[0].detach()`
# Shape: the closure's attached loss travels through a callable stopping-criterion object; its `_prev_fvals` window is rebound from a cat of its own previous value, so every step links to the last one
# Expect: TML005 line 31
from time import monotonic

import torch


class ExpMAStoppingCriterion:
    def __init__(self, maxiter=10000, minimize=True, n_window=10, eta=1.0, rel_tol=1e-5):
        self.maxiter = maxiter
        self.minimize = minimize
        self.n_window = n_window
        self.rel_tol = rel_tol
        self.iter = 0
        weights = torch.exp(torch.linspace(-eta, 0, n_window))
        self.weights = weights / weights.sum()
        self._prev_fvals = None

    def __call__(self, fvals):
        return self.evaluate(fvals)

    def evaluate(self, fvals):
        self.iter += 1
        if self.iter == self.maxiter:
            return True
        if self._prev_fvals is None:
            self._prev_fvals = fvals.unsqueeze(0)
        else:
            self._prev_fvals = torch.cat([self._prev_fvals[-self.n_window:], fvals.unsqueeze(0)])  # expect: TML005
        if self._prev_fvals.size(0) < self.n_window + 1:
            return False
        weights = self.weights.to(fvals)
        prev_ma = (self._prev_fvals[:-1] * weights).sum(dim=0)
        ma = (self._prev_fvals[1:] * weights).sum(dim=0)
        rel_delta = (prev_ma - ma) / prev_ma.abs()
        if not self.minimize:
            rel_delta = -rel_delta
        return bool(torch.max(rel_delta) < self.rel_tol)


def torch_minimize(closure, parameters, optimizer, step_limit=1000, stopping_criterion=None, callback=None):
    start_time = monotonic()
    result = {}
    for step in range(1, step_limit + 1):
        fval, _ = closure()
        result = {"step": step, "fval": fval.detach().cpu().item(), "runtime": monotonic() - start_time}
        if stopping_criterion and stopping_criterion(fval):
            result["status"] = "stopped"
            break
        if callback:
            callback(parameters, result)
        optimizer.step()
    return result


def fit_mll(mll, train_loader, lr=0.01):
    parameters = {n: p for n, p in mll.named_parameters() if p.requires_grad}
    optimizer = torch.optim.Adam(list(parameters.values()), lr=lr)
    batches = iter(train_loader)

    def closure():
        nonlocal batches
        try:
            x, y = next(batches)
        except StopIteration:
            batches = iter(train_loader)
            x, y = next(batches)
        optimizer.zero_grad()
        loss = -mll(mll.model(x), y.squeeze(-1)).sum()
        loss.backward()
        return loss, [p.grad for p in parameters.values()]

    return torch_minimize(closure, parameters, optimizer, stopping_criterion=ExpMAStoppingCriterion())
