# Source: https://github.com/f-dangel/curvlinops/blob/0f9491ecf71c2e7e8c86c3e43c514baa11c98257/curvlinops/computers/kfac_hooks.py
# Report: one edit away from the real code: the clean-up loop that removes the KFAC hooks is dropped, while a training loop recomputes the factors every update_every steps
# Shape: compute() registers a pre-hook and a forward hook per layer of the persistent model each time it runs and never removes them; old hooks keep firing on every training forward and their partials keep the old covariance dicts alive
# Expect: TML007 lines 29, 30
from functools import partial

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import autograd


class HooksKFACComputer:
    def __init__(self, model, loss_func, data, n_data):
        self._model = model
        self._loss_func = loss_func
        self._data = data
        self._n_data = n_data

    def _layers(self):
        return [(name, mod) for name, mod in self._model.named_modules() if isinstance(mod, nn.Linear)]

    def compute(self):
        input_covariances, gradient_covariances = {}, {}
        hook_handles = []
        for name, module in self._layers():
            fwd_hook = partial(self._hook_accumulate_input_covariance, name=name, input_covariances=input_covariances)
            bwd_hook = partial(self._install_output_hook, name=name, gradient_covariances=gradient_covariances)
            hook_handles.append(module.register_forward_pre_hook(fwd_hook))  # expect: TML007
            hook_handles.append(module.register_forward_hook(bwd_hook))  # expect: TML007

        for X, y in self._data:
            X, y = X.cuda(), y.cuda()
            output = self._model(X)
            self._compute_loss_and_backward(output, y)

        return input_covariances, gradient_covariances

    def _compute_loss_and_backward(self, output, y):
        probs = output.detach().softmax(-1)
        sampled = torch.multinomial(probs, 1).squeeze(-1)
        grad_outputs = (probs - F.one_hot(sampled, probs.shape[-1]).float()) / output.shape[0]
        params = [p for p in self._model.parameters() if p.requires_grad]
        autograd.grad(output, params, grad_outputs=grad_outputs)

    def _install_output_hook(self, module, inputs, output, name, gradient_covariances):
        output.register_hook(partial(self._accumulate_gradient_covariance, name=name, gradient_covariances=gradient_covariances))

    def _accumulate_gradient_covariance(self, grad_output, name, gradient_covariances):
        g = grad_output.data.detach()
        cov = torch.einsum("bi,bj->ij", g, g) * g.shape[0]
        gradient_covariances[name] = gradient_covariances.get(name, 0) + cov

    def _hook_accumulate_input_covariance(self, module, inputs, name, input_covariances):
        x = inputs[0].data.detach()
        x = torch.cat([x, torch.ones_like(x[:, :1])], dim=1)
        cov = torch.einsum("bi,bj->ij", x, x) / self._n_data
        input_covariances[name] = input_covariances.get(name, 0) + cov


def train_with_kfac(model, train_loader, fisher_loader, n_data, epochs, update_every=100, damping=1e-3, lr=0.05):
    computer = HooksKFACComputer(model, nn.CrossEntropyLoss(), fisher_loader, n_data)
    layers = dict(computer._layers())
    A, G = {}, {}
    step = 0
    for epoch in range(epochs):
        for x, y in train_loader:
            x, y = x.cuda(), y.cuda()
            if step % update_every == 0:
                A, G = computer.compute()
            model.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            with torch.no_grad():
                for name, mod in layers.items():
                    grad = torch.cat([mod.weight.grad, mod.bias.grad.unsqueeze(1)], dim=1)
                    a_inv = torch.linalg.inv(A[name] + damping * torch.eye(A[name].shape[0], device=grad.device))
                    g_inv = torch.linalg.inv(G[name] + damping * torch.eye(G[name].shape[0], device=grad.device))
                    nat = g_inv @ grad @ a_inv
                    mod.weight.sub_(lr * nat[:, :-1])
                    mod.bias.sub_(lr * nat[:, -1])
            step += 1
        print(f"epoch {epoch}: last loss {loss.item():.4f}")
