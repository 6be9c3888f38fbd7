# Source: https://github.com/sktime/pytorch-forecasting/pull/2371
# Report: a multi-horizon metric with reduction="none" re-concatenated its losses/lengths state tensors on every update(), O(N^2) reallocation over long evaluation loops
# Shape: torchmetrics-style Metric; update() -> _accumulate() rebinds self.losses/self.lengths via torch.cat; validation_step calls update() every batch
# Expect: TML008 line 34; TML008 line 35
import torch
from torchmetrics import Metric


class HorizonQuantileLoss(Metric):
    full_state_update = False

    def __init__(self, quantiles=(0.1, 0.5, 0.9), reduction="none"):
        super().__init__()
        self.quantiles = quantiles
        self.reduction = reduction
        self.add_state("losses", default=torch.tensor(0.0), dist_reduce_fx="sum" if reduction != "none" else "cat")
        self.add_state("lengths", default=torch.tensor(0), dist_reduce_fx="sum" if reduction != "none" else "cat")

    def _pinball(self, y_pred, target):
        errors = target.unsqueeze(-1) - y_pred
        q = torch.tensor(self.quantiles, device=y_pred.device)
        return torch.max((q - 1) * errors, q * errors).sum(-1)

    def update(self, y_pred, target, lengths):
        losses = self._pinball(y_pred, target)
        mask = torch.arange(losses.size(1), device=losses.device)[None, :] < lengths[:, None]
        self._accumulate(losses.masked_fill(~mask, 0.0), lengths)

    def _accumulate(self, losses, lengths):
        if self.reduction == "none":
            if self.losses.ndim == 0:
                self.losses, self.lengths = losses, lengths
            else:
                self.losses = torch.cat([self.losses, losses], dim=0)  # expect: TML008
                self.lengths = torch.cat([self.lengths, lengths], dim=0)  # expect: TML008
        else:
            self.losses = self.losses + losses.sum()
            self.lengths = self.lengths + lengths.sum()

    def compute(self):
        if self.reduction == "none":
            return self.losses.sum(1) / self.lengths.clamp(min=1)
        return self.losses / self.lengths.clamp(min=1)


def validate(model, loader, device="cuda"):
    metric = HorizonQuantileLoss().to(device)
    model.eval()
    with torch.no_grad():
        for batch in loader:
            x, y, lengths = batch["x"].to(device), batch["y"].to(device), batch["decoder_lengths"].to(device)
            metric.update(model(x), y, lengths)
    per_series = metric.compute()
    metric.reset()
    return per_series.mean().item()
