# Source: https://github.com/AntreasAntoniou/HowToTrainYourMAMLPytorch/blob/0209bb646e393bddcee95c2fb163956a1d9b064e/experiment_builder.py
# Report: MAML++ experiment builder as written in the repository: each train iteration's loss dict is folded into self.total_losses with float(value) before it is kept for the epoch summary.
# Shape: run_train_iter returns a dict whose 'loss' is graph-attached (second-order MAML graph); float(value) turns it into a Python number before the append, so the per-epoch lists hold no tensors. The inner loop's fast weights are rebuilt from the parameters for every task.
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class MetaLearner(nn.Module):
    def __init__(self, net, inner_lr, meta_lr, num_steps, second_order=True):
        super().__init__()
        self.net = net
        self.inner_lr = inner_lr
        self.num_steps = num_steps
        self.second_order = second_order
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=meta_lr)

    def inner_update(self, loss, fast_weights):
        grads = torch.autograd.grad(loss, list(fast_weights.values()), create_graph=self.second_order)
        return {name: w - self.inner_lr * g for (name, w), g in zip(fast_weights.items(), grads)}

    def forward(self, batch):
        xs, ys, xq, yq = batch
        total_losses, accuracies = [], []
        for x_s, y_s, x_q, y_q in zip(xs, ys, xq, yq):
            fast_weights = dict(self.net.named_parameters())
            for step in range(self.num_steps):
                support_loss = F.cross_entropy(torch.func.functional_call(self.net, fast_weights, (x_s,)), y_s)
                fast_weights = self.inner_update(support_loss, fast_weights)
            target_preds = torch.func.functional_call(self.net, fast_weights, (x_q,))
            total_losses.append(F.cross_entropy(target_preds, y_q))
            accuracies.extend(target_preds.argmax(1).eq(y_q).float().cpu().tolist())
        losses = dict()
        losses["loss"] = torch.mean(torch.stack(total_losses))
        losses["accuracy"] = np.mean(accuracies)
        return losses

    def meta_update(self, loss):
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()

    def run_train_iter(self, batch):
        if not self.training:
            self.train()
        losses = self.forward(batch)
        self.meta_update(losses["loss"])
        self.optimizer.zero_grad()
        return losses


class ExperimentBuilder:
    def __init__(self, model, train_batches, iters_per_epoch):
        self.model = model
        self.train_batches = train_batches
        self.iters_per_epoch = iters_per_epoch
        self.total_losses = dict()
        self.current_iter = 0

    def build_summary_dict(self, total_losses, phase):
        summary = dict()
        for key in total_losses:
            summary[f"{phase}_{key}_mean"] = np.mean(total_losses[key])
            summary[f"{phase}_{key}_std"] = np.std(total_losses[key])
        return summary

    def train_iteration(self, batch, total_losses):
        losses = self.model.run_train_iter(batch)
        for key, value in zip(list(losses.keys()), list(losses.values())):
            if key not in total_losses:
                total_losses[key] = []
            total_losses[key].append(float(value))
        self.current_iter += 1
        return total_losses

    def run_experiment(self):
        for batch in self.train_batches:
            self.total_losses = self.train_iteration(batch, self.total_losses)
            if self.current_iter % self.iters_per_epoch == 0:
                print(self.build_summary_dict(self.total_losses, "train"))
                self.total_losses = dict()
