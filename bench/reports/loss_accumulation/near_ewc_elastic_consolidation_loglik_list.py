# Source: https://github.com/shivamsaboo17/Overcoming-Catastrophic-forgetting-in-Neural-Networks/issues/7
# Report: "Improve the efficiency of GPU memory utilization": the original _update_fisher_params exhausts 24GB with VGG19; proposed fix takes the gradient batch by batch and sums detached squared gradients
# Shape: same class; autograd.grad is taken per batch so each graph dies in its iteration, and only detached squared gradients are accumulated into the outliving fisher dict
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch import autograd
from torch.utils.data import DataLoader


class ElasticWeightConsolidation:
    def __init__(self, model, crit, lr=0.001, weight=1000000, device="cuda"):
        self.model = model.to(device)
        self.device = device
        self.weight = weight
        self.crit = crit
        self.optimizer = optim.Adam(self.model.parameters(), lr)

    @staticmethod
    def _buffer_name(param_name):
        return param_name.replace(".", "__")

    def _update_mean_params(self):
        for param_name, param in self.model.named_parameters():
            name = self._buffer_name(param_name)
            self.model.register_buffer(name + "_estimated_mean", param.data.clone())

    def _update_fisher_params(self, current_ds, batch_size, num_batch):
        dl = DataLoader(current_ds, batch_size, shuffle=True)
        params = list(self.model.parameters())
        fisher = [torch.zeros_like(p) for p in params]
        seen = 0
        for i, (inputs, target) in enumerate(dl):
            if i > num_batch:
                break
            inputs = inputs.to(self.device)
            target = target.to(self.device)
            output = F.log_softmax(self.model(inputs), dim=1)
            picked = output[torch.arange(output.size(0)), target]
            grads = autograd.grad(picked.mean(), params)
            for k, g in enumerate(grads):
                fisher[k] += g.detach() ** 2
            seen += 1
        for (param_name, _), f in zip(self.model.named_parameters(), fisher):
            name = self._buffer_name(param_name)
            self.model.register_buffer(name + "_estimated_fisher", f / max(seen, 1))

    def register_ewc_params(self, dataset, batch_size, num_batches):
        self._update_fisher_params(dataset, batch_size, num_batches)
        self._update_mean_params()

    def _compute_consolidation_loss(self, weight):
        try:
            losses = []
            for param_name, param in self.model.named_parameters():
                name = self._buffer_name(param_name)
                mean = getattr(self.model, name + "_estimated_mean")
                fisher = getattr(self.model, name + "_estimated_fisher")
                losses.append((fisher * (param - mean) ** 2).sum())
            return (weight / 2) * sum(losses)
        except AttributeError:
            return 0

    def forward_backward_update(self, inputs, target):
        output = self.model(inputs.to(self.device))
        loss = self._compute_consolidation_loss(self.weight)
        loss = loss + self.crit(output, target.to(self.device))
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()
