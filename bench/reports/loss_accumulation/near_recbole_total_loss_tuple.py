# Source: https://github.com/RUCAIBox/RecBole/pull/307
# Report: RecBole's Trainer stored every batch's loss tensor in the epoch's running total, so each batch's autograd graph stayed referenced and training ran out of GPU memory; the fix keeps plain numbers.
# Shape: fixed version: each per-batch loss is turned into a Python float with .item() before it is folded into total_loss, so nothing that outlives the batch holds a graph.
# Expect: near-miss: must be silent
import torch
from torch.nn.utils import clip_grad_norm_


class Trainer:
    def __init__(self, config, model):
        self.model = model
        self.device = config["device"]
        self.clip_grad_norm = config.get("clip_grad_norm")
        self.optimizer = torch.optim.Adam(model.parameters(), lr=config["learning_rate"])

    def _check_nan(self, loss):
        if torch.isnan(loss):
            raise ValueError("Training loss is nan")

    def _train_epoch(self, train_data, epoch_idx, loss_func=None):
        self.model.train()
        loss_func = loss_func or self.model.calculate_loss
        total_loss = None
        for batch_idx, interaction in enumerate(train_data):
            interaction = interaction.to(self.device)
            self.optimizer.zero_grad()
            losses = loss_func(interaction)
            if isinstance(losses, tuple):
                loss = sum(losses)
                loss_tuple = tuple(per_loss.item() for per_loss in losses)
                total_loss = loss_tuple if total_loss is None else tuple(map(sum, zip(total_loss, loss_tuple)))
            else:
                loss = losses
                total_loss = losses.item() if total_loss is None else total_loss + losses.item()
            self._check_nan(loss)
            loss.backward()
            if self.clip_grad_norm:
                clip_grad_norm_(self.model.parameters(), **self.clip_grad_norm)
            self.optimizer.step()
        return total_loss

    def fit(self, train_data, epochs, verbose=True):
        for epoch_idx in range(epochs):
            train_loss = self._train_epoch(train_data, epoch_idx)
            if not verbose:
                continue
            if isinstance(train_loss, tuple):
                desc = ", ".join("train_loss%d: %.4f" % (i + 1, l) for i, l in enumerate(train_loss))
            else:
                desc = "train loss: %.4f" % train_loss
            print("epoch %d training [%s]" % (epoch_idx, desc))
