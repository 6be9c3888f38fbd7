# Source: https://github.com/boschresearch/Continuous-Recurrent-Units/pull/4
# Report: the computation graphs of the losses were held in memory because the epoch totals were summed without .item(), which led to high memory use and a hanging system.
# Shape: a method per task returns the loss and the imputation loss in a long tuple with the outputs; the epoch loop folds both into running totals while stepping the optimizer.
# Expect: TML001 line 35; TML001 line 36
import torch
import torch.nn as nn


def gaussian_nll(mean, target, var):
    return (0.5 * (torch.log(var) + (target - mean) ** 2 / var)).mean()


class RecurrentForecaster(nn.Module):
    def __init__(self, encoder, cell, decoder):
        super().__init__()
        self.encoder, self.cell, self.decoder = encoder, cell, decoder

    def interpolation(self, batch):
        obs, truth, valid = (part.to(next(self.parameters()).device) for part in batch)
        mean, var = self.decoder(self.cell(self.encoder(obs), valid))
        loss = gaussian_nll(mean, truth, var)
        hidden = ~valid[..., None]
        imputation_loss = gaussian_nll(mean * hidden, truth * hidden, var)
        return loss, mean, var, obs, truth, imputation_loss

    def train_epoch(self, loader, optimizer):
        epoch_loss = 0
        epoch_imputation_loss = 0
        for step, batch in enumerate(loader):
            loss, mean, var, obs, truth, imputation_loss = self.interpolation(batch)
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(self.parameters(), 1.0)
            optimizer.step()
            epoch_loss += loss  # expect: TML001
            epoch_imputation_loss += imputation_loss  # expect: TML001
        return epoch_loss / (step + 1), epoch_imputation_loss / (step + 1)
