# Source: https://github.com/RUCAIBox/RecBole/pull/307
# Report: RecBole's Trainer stored every batch's loss tensor in the epoch's running total, so each batch's autograd graph stayed referenced and training ran out of GPU memory; the fix keeps plain numbers.
# Shape: _train_epoch folds the (single or tuple-valued) return of the model's calculate_loss into total_loss, which outlives the batch loop: a conditional `total + losses` and, for multi-loss models, tuple(map(sum, zip(total, losses))).
# Expect: TML001 lines 30, 33
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
                total_loss = losses if total_loss is None else tuple(map(sum, zip(total_loss, losses)))  # expect: TML001
            else:
                loss = losses
                total_loss = losses if total_loss is None else total_loss + losses  # expect: TML001
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
                desc = ", ".join("train_loss%d: %.4f" % (i + 1, float(l)) for i, l in enumerate(train_loss))
            else:
                desc = "train loss: %.4f" % float(train_loss)
            print("epoch %d training [%s]" % (epoch_idx, desc))
