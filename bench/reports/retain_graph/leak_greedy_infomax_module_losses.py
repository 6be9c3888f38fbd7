# Source: https://github.com/alexcuozzo-1/nupic.research/blob/b6e9b3e652d7f3e2f541dc77477984dbbcf87a45/projects/learning_rules/greedy_info_max/repository_code/customTrainLoop.py
# Report: audit of a Greedy InfoMax contrastive loop: each module's loss is backpropagated in turn; the repo retains the graph only for the non-final modules and logs cur_losses.item(); this variant retains it on every backward and sums the raw loss tensors per module
# Shape: per-module epoch totals in a list on the trainer; every module loss is backwarded with retain_graph=True and the attached loss tensor is added to loss_epoch[idx], so each step's whole retained graph stays alive until the epoch ends
# Expect: TML006 line 43; TML001 line 48
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
            for idx, cur_loss in enumerate(module_losses):
                # the modules share the input pipeline, so keep the graph
                # around for whichever module comes next
                cur_loss.backward(retain_graph=True)  # expect: TML006

            for idx, cur_loss in enumerate(module_losses):
                self.optimizers[idx].step()
                # summed as tensors: averaged once at the end of the epoch
                loss_epoch[idx] += cur_loss  # expect: TML001
                steps[idx] += 1
                if step % self.print_every == 0:
                    print(f"epoch {epoch} step {step} module {idx} "
                          f"acc {accuracy[idx].item():.3f} ({time.time() - tic:.1f}s)")

        return [float(total) / max(n, 1) for total, n in zip(loss_epoch, steps)]


def fit(model, loader, epochs=10, lr=2e-4):
    blocks = list(model.module.encoder) if isinstance(model, nn.DataParallel) else list(model.encoder)
    optimizers = [torch.optim.Adam(b.parameters(), lr=lr) for b in blocks]
    trainer = GreedyInfoMaxTrainer(model, optimizers, loader)
    history = []
    for epoch in range(epochs):
        history.append(trainer.train_epoch(epoch))
    return history
