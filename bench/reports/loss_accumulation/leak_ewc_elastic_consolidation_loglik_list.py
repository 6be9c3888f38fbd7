# Source: https://github.com/shivamsaboo17/Overcoming-Catastrophic-forgetting-in-Neural-Networks/issues/2
# Report: EWC Fisher update on resnet50 runs CUDA out of memory at `log_liklihoods.append(output[:, target])`; maintainer: the list keeps every batch's probabilities (and graph) until the single autograd.grad, keep a running estimate instead
# Shape: same ElasticWeightConsolidation class; each batch's graph-attached log-likelihood slice is appended to a list that lives across the whole Fisher loop
# Expect: TML001 line 40
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
        log_liklihoods = []
        for i, (inputs, target) in enumerate(dl):
            if i > num_batch:
                break
            inputs = inputs.to(self.device)
            target = target.to(self.device)
            output = F.log_softmax(self.model(inputs), dim=1)
            picked = output[torch.arange(output.size(0)), target]
            log_liklihoods.append(picked)  # expect: TML001
        log_likelihood = torch.cat(log_liklihoods).mean()
        grads = autograd.grad(log_likelihood, list(self.model.parameters()))
        for (param_name, _), g in zip(self.model.named_parameters(), grads):
            name = self._buffer_name(param_name)
            self.model.register_buffer(name + "_estimated_fisher", g.data.clone() ** 2)

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
