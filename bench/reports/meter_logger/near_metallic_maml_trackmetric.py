# Source: https://github.com/Renovamen/metallic/blob/356cc0012136e37d5eff940e4676cbeddc6550cc/metacraft/metalearners/maml.py
# Report: audited idiom: MAML.outer_loop() sums query losses over the task batch with query_loss.item() and hands the float to a TrackMetric meter in train()/validate()
# Shape: as in the repository: outer_loss is a Python float built from query_loss.item(), so the meter's self.sum and the returned value hold no graph, even in validate() where backward never runs
# Expect: near-miss: must be silent
import time

import torch
from torch import nn
from torch.autograd import grad

from metacraft.utils import clone_module, update_module


class TrackMetric:
    def __init__(self):
        self.val, self.avg, self.sum, self.count = 0, 0, 0, 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def maml_inner_loop_update(model, inner_lr, grad_list):
    for param, g in zip(model.parameters(), grad_list):
        if g is not None:
            param.update = -inner_lr * g
    return update_module(model)


def get_accuracy(scores, labels):
    _, predictions = scores.max(dim=1)
    return torch.eq(predictions, labels).sum().float() / labels.size(0)


class MAML(nn.Module):
    def __init__(self, model, outer_optimizer, loss_function, inner_lr,
                 inner_steps=1, first_order=False, device=None):
        super().__init__()
        self.module = model
        self.outer_optimizer = outer_optimizer
        self.loss_function = loss_function
        self.inner_lr = inner_lr
        self.inner_steps = inner_steps
        self.first_order = first_order
        self.device = device

    def inner_loop_step(self, cloned_module, loss):
        second_order = not self.first_order
        gradients = grad(loss, cloned_module.parameters(),
                         retain_graph=second_order, create_graph=second_order)
        return maml_inner_loop_update(cloned_module, self.inner_lr, gradients)

    def inner_loop(self, cloned_module, support_input, support_target):
        for step in range(self.inner_steps):
            support_output = cloned_module(support_input)
            support_loss = self.loss_function(support_output, support_target) / len(support_input)
            cloned_module = self.inner_loop_step(cloned_module, support_loss)
        return cloned_module

    def outer_loop(self, batch, meta_train=True):
        self.outer_optimizer.zero_grad()

        support_inputs, support_targets = [t.to(self.device) for t in batch["support"]]
        query_inputs, query_targets = [t.to(self.device) for t in batch["query"]]
        num_tasks = query_targets.size(0)

        outer_loss, outer_accuracy = 0.0, 0.0
        for support_input, support_target, query_input, query_target in zip(
                support_inputs, support_targets, query_inputs, query_targets):
            fast = self.inner_loop(clone_module(self.module), support_input, support_target)

            query_output = fast(query_input)
            query_loss = self.loss_function(query_output, query_target) / len(query_input)
            query_accuracy = get_accuracy(query_output, query_target)

            if meta_train:
                query_loss.backward()

            outer_loss += query_loss.item()
            outer_accuracy += query_accuracy.item()

        if meta_train:
            for param in self.module.parameters():
                param.grad.data.div_(num_tasks)
            self.outer_optimizer.step()

        return outer_loss / num_tasks, outer_accuracy / num_tasks

    def train_epoch(self, epoch, train_loader, num_batches=500):
        self.module.train()
        outer_losses, outer_accuracies = TrackMetric(), TrackMetric()
        for batch_id, batch in enumerate(train_loader):
            outer_loss, outer_accuracy = self.outer_loop(batch)
            outer_losses.update(outer_loss)
            outer_accuracies.update(outer_accuracy)
            if batch_id >= num_batches:
                break

    def validate(self, epoch, val_loader, num_batches=500, print_freq=1):
        batch_time, outer_losses, outer_accuracies = TrackMetric(), TrackMetric(), TrackMetric()
        start = time.time()
        for batch_id, batch in enumerate(val_loader):
            outer_loss, outer_accuracy = self.outer_loop(batch, meta_train=False)
            outer_losses.update(outer_loss)
            outer_accuracies.update(outer_accuracy)
            batch_time.update(time.time() - start)
            start = time.time()
            if batch_id % print_freq == 0:
                print("Validation: [{0}][{1}/{2}]\tAccuracy {acc.val:.3f} ({acc.avg:.3f})".format(
                    epoch, batch_id, num_batches, acc=outer_accuracies))
            if batch_id >= num_batches:
                break
        return outer_accuracies.avg
