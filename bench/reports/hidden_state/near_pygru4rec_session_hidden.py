# Source: https://github.com/yhs968/pyGRU4REC/issues/8
# Report: issue about `hidden = reset_hidden(hidden, mask).detach()` in run_epoch: the GRU state is carried across session-parallel mini-batches for the whole epoch, and the maintainer explains why the whole state has to be detached every step (rows cannot be detached separately)
# Shape: the repository's shape: the carried state is reset for finished sessions and detached through the helper's return value before it is fed back into the GRU
# Expect: near-miss: must be silent
import torch


def reset_hidden(hidden, mask):
    """Zero the hidden rows of sessions that just ended."""
    if len(mask) != 0:
        hidden[:, mask, :] = 0
    return hidden


class GRU4RECTrainer:
    def __init__(self, gru, loss_fn, optimizer, batch_size=50, device="cuda"):
        self.gru = gru.to(device)
        self.loss_fn = loss_fn
        self.optimizer = optimizer
        self.batch_size = batch_size
        self.device = torch.device(device)

    def run_epoch(self, dataloader):
        self.gru.train()
        losses = []
        hidden = self.gru.init_hidden()
        for input, target, mask in dataloader:
            input = input.to(self.device)
            target = target.to(self.device)
            hidden = reset_hidden(hidden, mask).detach()
            logit, hidden = self.gru(input, hidden)
            logit_sampled = logit[:, target.view(-1)]
            loss = self.loss_fn(logit_sampled)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            losses.append(loss.item())
        return sum(losses) / max(len(losses), 1)
