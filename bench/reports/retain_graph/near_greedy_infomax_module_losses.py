# Source: https://github.com/alexcuozzo-1/nupic.research/blob/b6e9b3e652d7f3e2f541dc77477984dbbcf87a45/projects/learning_rules/greedy_info_max/repository_code/customTrainLoop.py
# Report: audit of a Greedy InfoMax contrastive loop (correct code): each module's loss is backpropagated in turn, retain_graph=True only for the non-final modules, and the logged value is cur_losses.item()
# Shape: same trainer; the last module's backward frees the graph (retain only for idx < last) and loss_epoch[idx] receives a Python float, so nothing of the step outlives it
# Expect: near-miss: must be silent
import time

import torch
import torch.nn as nn


class GreedyInfoMaxTrainer:
    """Trains a stack of encoder modules, each with its own InfoNCE loss."""

    def __init__(self, model, optimizers, loader, device="cuda", print_every=50):
        self.model = model
        self.optimizers = optimizers
        self.loader = loader
        self.device = device
        self.print_every = print_every
        self.num_modules = len(optimizers)

    def _forward(self, images, labels):
        losses, _, _, accuracy = self.model(images, labels)
        # the model is DataParallel-wrapped: average over the replica dimension
        return losses.mean(dim=0), accuracy.mean(dim=0)

    def train_epoch(self, epoch):
        self.model.train()
        loss_epoch = [0.0 for _ in range(self.num_modules)]
        steps = [0 for _ in range(self.num_modules)]
        tic = time.time()

        for step, (images, labels) in enumerate(self.loader):
            images = images.to(self.device, non_blocking=True)
            labels = labels.to(self.device, non_blocking=True)

            module_losses, accuracy = self._forward(images, labels)

            self.model.zero_grad()
            last = len(module_losses) - 1
            for idx, cur_loss in enumerate(module_losses):
                # earlier modules share the graph with the later ones: only
                # the final backward may free it
                cur_loss.backward(retain_graph=idx < last)

            for idx, cur_loss in enumerate(module_losses):
                self.optimizers[idx].step()
                print_loss = cur_loss.item()
                loss_epoch[idx] += print_loss
                steps[idx] += 1
                if step % self.print_every == 0:
                    print(f"epoch {epoch} step {step} module {idx} "
                          f"acc {accuracy[idx].item():.3f} ({time.time() - tic:.1f}s)")

        return [total / max(n, 1) for total, n in zip(loss_epoch, steps)]


def fit(model, loader, epochs=10, lr=2e-4):
    blocks = list(model.module.encoder) if isinstance(model, nn.DataParallel) else list(model.encoder)
    optimizers = [torch.optim.Adam(b.parameters(), lr=lr) for b in blocks]
    trainer = GreedyInfoMaxTrainer(model, optimizers, loader)
    history = []
    for epoch in range(epochs):
        history.append(trainer.train_epoch(epoch))
    return history
