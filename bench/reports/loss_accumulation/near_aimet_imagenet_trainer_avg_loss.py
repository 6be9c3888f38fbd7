# Source: https://github.com/qualcomm/aimet/pull/2047
# Report: the ImageNet example trainer summed each step's loss tensor into avg_loss, keeping every batch's autograd history alive; host/GPU memory ran out during fine-tuning until .item() was added
# Shape: same trainer class; the running sum takes loss.item(), a Python float, so no graph outlives its step
# Expect: near-miss: must be silent
import logging
import time

import torch
from torch import nn

logger = logging.getLogger("ImageNetTrainer")


class ImageNetTrainer:
    def __init__(self, train_loader, evaluator, log_every: int = 100):
        self._train_data_loader = train_loader
        self._evaluator = evaluator
        self._log_every = log_every

    def _train_loop(self, model: nn.Module, criterion: nn.Module, optimizer: torch.optim.Optimizer,
                    max_iterations: int, current_epoch: int, device: torch.device):
        model.train()
        avg_loss = 0.0
        start = time.time()
        curr_iter = 0
        for curr_iter, (images, target) in enumerate(self._train_data_loader):
            images = images.to(device, non_blocking=True)
            target = target.to(device, non_blocking=True)

            output = model(images)
            loss = criterion(output, target)
            avg_loss += loss.item()

            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

            if curr_iter % self._log_every == 0:
                logger.info("epoch %d iter %d/%d loss %.4f (%.1fs)", current_epoch, curr_iter,
                            max_iterations, float(avg_loss) / (curr_iter + 1), time.time() - start)
            if curr_iter + 1 >= max_iterations:
                break
        return avg_loss / (curr_iter + 1)

    def train(self, model, criterion, optimizer, scheduler, epochs, max_iterations, device):
        for epoch in range(epochs):
            epoch_loss = self._train_loop(model, criterion, optimizer, max_iterations, epoch, device)
            scheduler.step()
            top1 = self._evaluator.evaluate(model, device=device)
            logger.info("epoch %d done: train loss %.4f, val top1 %.2f", epoch, float(epoch_loss), top1)
