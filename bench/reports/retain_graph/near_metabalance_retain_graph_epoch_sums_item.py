# Source: https://github.com/facebookresearch/MetaBalance/issues/2
# Report: on a large dataset MetaBalance used more and more CUDA memory until it crashed; the reporter suspected the graph was never cleared because both the example script and the optimizer call loss.backward(retain_graph=True).
# Shape: the retained graph is only reused within one step (task-layer backward, then one backward per auxiliary loss); the per-epoch sums take .item() instead of adding the raw loss tensors as the example did, and the moving averages on the parameters are computed under no_grad, so every step's graph dies when the losses are rebound.
# Expect: near-miss: must be silent
import torch
from torch.optim.optimizer import Optimizer


class MetaBalance(Optimizer):
    def __init__(self, params, relax_factor=0.7, beta=0.9):
        super().__init__(params, dict(relax_factor=relax_factor, beta=beta))

    @torch.no_grad()
    def step(self, loss_array):
        for loss_index, loss in enumerate(loss_array):
            loss.backward(retain_graph=True)
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    if "norms" not in state:
                        state["norms"] = [torch.zeros(1, device=p.device) for _ in loss_array]
                    norms, beta = state["norms"], group["beta"]
                    norms[loss_index] = norms[loss_index] * beta + (1 - beta) * torch.norm(p.grad)
                    relax = group["relax_factor"]
                    p.grad = (norms[0] * p.grad / norms[loss_index]) * relax + p.grad * (1.0 - relax)
                    if loss_index == 0:
                        state["sum_gradient"] = torch.zeros_like(p)
                    state["sum_gradient"] += p.grad
                    p.grad.zero_()
                    if loss_index == len(loss_array) - 1:
                        p.grad = state["sum_gradient"]


def train_epoch(model, loader, loss_fn, balancer, opt_shared, opt_task, device="cuda"):
    model.train()
    sums = {"buy": 0.0, "click": 0.0, "fav": 0.0, "cart": 0.0}
    for step, (user, item, *labels) in enumerate(loader):
        user, item = user.to(device), item.to(device)
        labels = [lab.float().to(device) for lab in labels]
        model.zero_grad()
        preds = model(user, item)
        losses = {name: loss_fn(pred, lab) for name, pred, lab in zip(sums, preds, labels)}
        sum(losses.values()).backward(retain_graph=True)
        opt_task.step()
        model.zero_grad()
        balancer.step([losses["buy"], losses["fav"], losses["click"], losses["cart"]])
        opt_shared.step()
        for name, loss in losses.items():
            sums[name] += loss.item()
    return {name: total / (step + 1) for name, total in sums.items()}
