# Source: https://github.com/emtiyaz/vadam/pull/2
# Report: VOGN optimizer state (mean and diagonal precision) was updated from per-example gradient/GGN tensors that were still attached to the graph, so memory grew linearly with the number of epochs (fix: detach them).
# Shape: the merged fix: the per-sample gradient and GGN vectors are detached before they feed the optimizer state, so the carried Precision/mu hold no graph.
# Expect: near-miss: must be silent
import torch
from torch.nn.utils import parameters_to_vector, vector_to_parameters
from torch.optim.optimizer import Optimizer


def goodfellow_backprop_ggn(activations, linear_grads):
    grads, ggns = [], []
    for act, g in zip(activations, linear_grads):
        act = torch.cat([act, torch.ones_like(act[:, :1])], dim=1)
        per_example = torch.bmm(g.unsqueeze(2), act.unsqueeze(1))
        grads.append(per_example.sum(0))
        ggns.append(per_example.pow(2).sum(0))
    return grads, ggns


class VOGN(Optimizer):
    def __init__(self, params, train_set_size, lr=1e-3, beta=0.999, prior_prec=1.0,
                 prec_init=1.0, num_samples=1):
        defaults = dict(lr=lr, beta=beta, prior_prec=prior_prec, prec_init=prec_init,
                        num_samples=num_samples, train_set_size=train_set_size)
        super().__init__(params, defaults)

    def step(self, closure):
        d = self.defaults
        parameters = self.param_groups[0]["params"]
        if not torch.is_tensor(self.state["Precision"]):
            p = parameters_to_vector(parameters)
            self.state["mu"] = p.detach().clone()
            self.state["Precision"] = torch.ones_like(p).detach() * d["prec_init"]
        Precision = self.state["Precision"]
        mu = self.state["mu"]
        GGN_hat, mu_grad_hat = None, None
        for _ in range(d["num_samples"]):
            raw_noise = torch.normal(mean=torch.zeros_like(mu), std=1.0)
            vector_to_parameters(torch.addcdiv(mu, raw_noise, torch.sqrt(Precision)), parameters)
            loss, grad, ggn, M = closure()
            grad_vec = parameters_to_vector(grad).div(M).detach()
            ggn = parameters_to_vector(ggn).div(M).detach()
            mu_grad_hat = grad_vec if mu_grad_hat is None else mu_grad_hat + grad_vec
            GGN_hat = ggn if GGN_hat is None else GGN_hat + ggn
        mu_grad_hat = mu_grad_hat.mul(d["train_set_size"] / d["num_samples"])
        GGN_hat = GGN_hat.mul(d["train_set_size"] / d["num_samples"])
        Precision = Precision.mul(d["beta"]) + GGN_hat.add(d["prior_prec"]).mul(1 - d["beta"])
        self.state["Precision"] = Precision
        step_dir = mu_grad_hat + torch.mul(mu, d["prior_prec"])
        mu.addcdiv_(step_dir, Precision, value=-d["lr"])
        self.state["mu"] = mu
        return loss


def make_closure(model, x, y, criterion):
    def closure():
        logits, activations, linear_combs = model(x)  # model records its layer inputs/outputs
        loss = criterion(logits, y)
        linear_grads = torch.autograd.grad(loss, linear_combs)
        grad, ggn = goodfellow_backprop_ggn(activations, linear_grads)
        return loss, grad, ggn, x.size(0)
    return closure


def train(model, optimizer, loader, criterion, num_epochs, device):
    for epoch in range(num_epochs):
        batch_objective = []
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            loss = optimizer.step(make_closure(model, x, y, criterion))
            batch_objective.append(loss.detach().cpu().item())
        print(f"Epoch {epoch + 1}: {sum(batch_objective) / len(batch_objective):.4f}")
