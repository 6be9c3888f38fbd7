# Source: https://github.com/by2101/OpenASR/issues/12
# Report: ASR trainer kept running totals for its progress log as tot_loss = tot_loss + batch_loss; host memory climbed every step until the process died after ~2 hours (fix: batch_loss.item()).
# Shape: the fix from the thread: the running total for the log line is rebound from batch_loss.item(), a Python float.
# Expect: near-miss: must be silent
import logging
import time

import torch

logger = logging.getLogger(__name__)


class Trainer:
    def __init__(self, model, optimizer, lr_scheduler, grad_max_norm=5.0,
                 print_inteval=100, device="cuda"):
        self.model = model.to(device)
        self.optimizer = optimizer
        self.lr_scheduler = lr_scheduler
        self.grad_max_norm = grad_max_norm
        self.print_inteval = print_inteval
        self.device = device
        self.global_step = 0

    def _forward(self, batch):
        utts, padded_waveforms, wave_lengths, ids, labels, paddings = batch
        padded_waveforms = padded_waveforms.to(self.device)
        wave_lengths = wave_lengths.to(self.device)
        ids, labels, paddings = ids.to(self.device), labels.to(self.device), paddings.to(self.device)
        loss = self.model(padded_waveforms, wave_lengths, ids, labels, paddings)
        n_token = torch.sum(1 - paddings).float()
        return loss, n_token

    def train_one_epoch(self, tr_loader, epoch):
        self.model.train()
        tot_loss = 0.0
        tot_token = 0
        tic = time.time()
        for batch in tr_loader:
            self.optimizer.zero_grad()
            loss, n_token = self._forward(batch)
            batch_loss = loss.sum() / n_token
            batch_loss.backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.grad_max_norm)
            self.optimizer.step()
            self.lr_scheduler.step()
            self.global_step += 1
            tot_loss = tot_loss + batch_loss.item()
            tot_token += 1
            if self.global_step % self.print_inteval == 0:
                logger.info(
                    "Epoch %d | step %d | avg loss %.4f | lr %.3e | %.1fs",
                    epoch, self.global_step, tot_loss / tot_token,
                    self.optimizer.param_groups[0]["lr"], time.time() - tic,
                )
        return tot_loss / tot_token
