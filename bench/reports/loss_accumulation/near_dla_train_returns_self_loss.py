# Source: https://github.com/ULTR-Community/ULTRA_pytorch/issues/6
# Report: fixed version of the ULTRA_pytorch DLA leak: train() returns self.loss.item(), so the driver accumulates and keeps plain floats
# Shape: same (loss, outputs, summary) tuple and the same loss += step_loss / steps and previous_losses.append(loss) in the caller, but the returned loss is a Python float
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F
from torch import nn


class DLA:
    def __init__(self, ranker, propensity_model, lr=0.05, ranker_loss_weight=1.0):
        self.model = ranker
        self.propensity_model = propensity_model
        self.ranker_loss_weight = ranker_loss_weight
        params = list(ranker.parameters()) + list(propensity_model.parameters())
        self.optimizer = torch.optim.Adagrad(params, lr=lr)
        self.train_summary = {}
        self.global_step = 0

    def create_summary(self, name, value):
        self.train_summary[name] = float(value)

    def softmax_loss(self, output, labels, weights):
        label_dis = labels * weights / (labels * weights).sum(dim=1, keepdim=True).clamp_min(1e-6)
        return -(label_dis * F.log_softmax(output, dim=1)).sum(dim=1).mean()

    def train(self, input_feed):
        self.model.train()
        self.propensity_model.train()
        features, labels = input_feed["features"], input_feed["labels"]
        train_output = self.model(features).squeeze(-1)
        propensity = self.propensity_model(labels)
        propensity_weights = (propensity[:, :1] / propensity).detach()
        self.rank_loss = self.softmax_loss(train_output, labels, propensity_weights)
        relevance_weights = (F.softmax(train_output, dim=1)[:, :1] / F.softmax(train_output, dim=1)).detach()
        self.exam_loss = self.softmax_loss(propensity, labels, relevance_weights)
        self.loss = self.exam_loss + self.ranker_loss_weight * self.rank_loss

        self.optimizer.zero_grad()
        self.loss.backward()
        self.optimizer.step()
        self.global_step += 1
        self.create_summary("Rank Loss", self.rank_loss.item())
        self.create_summary("Exam Loss", self.exam_loss.item())
        return self.loss.item(), None, self.train_summary


def train_loop(model, train_batches, steps_per_checkpoint=200, max_train_iteration=10000):
    step_time, loss = 0.0, 0.0
    current_step = 0
    previous_losses = []
    while current_step < max_train_iteration:
        input_feed = next(train_batches)
        step_loss, _, summary = model.train(input_feed)
        loss += step_loss / steps_per_checkpoint
        current_step += 1
        if current_step % steps_per_checkpoint == 0:
            print(f"global step {model.global_step} loss {float(loss):.4f} {summary}")
            previous_losses.append(loss)
            loss = 0.0
    return previous_losses
