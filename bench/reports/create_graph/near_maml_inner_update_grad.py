# Source: https://github.com/tristandeleu/pytorch-maml/blob/master/maml/metalearners/maml.py
# Report: repository is correct: the inner-loop adaptation gets second-order gradients from torch.autograd.grad(create_graph=not first_order) inside update_parameters and builds a new params OrderedDict; .grad is never written
# Shape: the fast weights are returned (not stored in p.grad), the outer loss is summed per task and backpropagated once by train_iter; per-task numbers go into results via .item()
# Expect: near-miss: must be silent
from collections import OrderedDict

import numpy as np
import torch
import torch.nn.functional as F


def update_parameters(model, loss, params=None, step_size=0.5, first_order=False):
    if params is None:
        params = OrderedDict(model.meta_named_parameters())
    grads = torch.autograd.grad(loss, params.values(), create_graph=not first_order)
    updated_params = OrderedDict()
    for (name, param), grad in zip(params.items(), grads):
        updated_params[name] = param - step_size * grad
    return updated_params


class ModelAgnosticMetaLearning(object):
    def __init__(self, model, optimizer=None, step_size=0.1, first_order=False,
                 num_adaptation_steps=1, loss_function=F.cross_entropy, device=None):
        self.model = model.to(device=device)
        self.optimizer = optimizer
        self.step_size = step_size
        self.first_order = first_order
        self.num_adaptation_steps = num_adaptation_steps
        self.loss_function = loss_function
        self.device = device

    def get_outer_loss(self, batch):
        _, test_targets = batch["test"]
        num_tasks = test_targets.size(0)
        results = {"inner_losses": np.zeros((self.num_adaptation_steps, num_tasks), dtype=np.float32),
                   "outer_losses": np.zeros((num_tasks,), dtype=np.float32)}
        mean_outer_loss = torch.tensor(0., device=self.device)
        for task_id, (train_inputs, train_targets, test_inputs, test_targets) \
                in enumerate(zip(*batch["train"], *batch["test"])):
            params, adaptation_results = self.adapt(train_inputs, train_targets)
            results["inner_losses"][:, task_id] = adaptation_results["inner_losses"]
            with torch.set_grad_enabled(self.model.training):
                test_logits = self.model(test_inputs, params=params)
                outer_loss = self.loss_function(test_logits, test_targets)
                results["outer_losses"][task_id] = outer_loss.item()
                mean_outer_loss += outer_loss
        mean_outer_loss.div_(num_tasks)
        results["mean_outer_loss"] = mean_outer_loss.item()
        return mean_outer_loss, results

    def adapt(self, inputs, targets):
        params = None
        results = {"inner_losses": np.zeros((self.num_adaptation_steps,), dtype=np.float32)}
        for step in range(self.num_adaptation_steps):
            logits = self.model(inputs, params=params)
            inner_loss = self.loss_function(logits, targets)
            results["inner_losses"][step] = inner_loss.item()
            self.model.zero_grad()
            params = update_parameters(self.model, inner_loss, step_size=self.step_size, params=params,
                                       first_order=(not self.model.training) or self.first_order)
        return params, results

    def train_iter(self, dataloader, max_batches=500):
        num_batches = 0
        self.model.train()
        while num_batches < max_batches:
            for batch in dataloader:
                if num_batches >= max_batches:
                    break
                self.optimizer.zero_grad()
                batch = {k: [t.to(self.device) for t in v] for k, v in batch.items()}
                outer_loss, results = self.get_outer_loss(batch)
                yield results
                outer_loss.backward()
                self.optimizer.step()
                num_batches += 1
