# Source: https://github.com/Lightning-AI/torchmetrics/issues/1160
# Report: GPU memory grew every epoch until OOM and was isolated to the MAPE metric object fed with model outputs in a validation loop that ran without no_grad; the metric's running sums kept every batch's autograd graph
# Shape: a torchmetrics-style metric object whose update() does `self.sum_abs_per_error += ...` on graph-attached predictions, called once per validation batch and computed per epoch
# Expect: TML001 line 25; TML003 line 55
import torch
import torch.nn as nn
from tqdm import tqdm


class MeanAbsolutePercentageError(nn.Module):
    """Accumulates sum(|y - y_hat| / |y|) and the number of observations."""

    def __init__(self, eps=1.17e-06):
        super().__init__()
        self.eps = eps
        self.register_buffer("sum_abs_per_error", torch.tensor(0.0))
        self.register_buffer("total", torch.tensor(0))

    def reset(self):
        self.sum_abs_per_error = torch.zeros_like(self.sum_abs_per_error)
        self.total = torch.zeros_like(self.total)

    def update(self, preds, target):
        abs_per_error = (preds - target).abs() / target.abs().clamp(min=self.eps)
        self.sum_abs_per_error += abs_per_error.sum()  # expect: TML001
        self.total += target.numel()

    def compute(self):
        return self.sum_abs_per_error / self.total

    def forward(self, preds, target):
        self.update(preds, target)
        return self.compute()


def run(model, optimizer, train_loader, val_loader, epochs=100, n_out=396):
    sl1 = nn.SmoothL1Loss()
    mape_hist = []
    for epoch in tqdm(range(epochs)):
        mape = MeanAbsolutePercentageError().cuda()
        model.train()
        for spec, lld, _ in tqdm(train_loader, leave=False):
            spec, lld = spec.cuda(), lld.cuda()
            optimizer.zero_grad()
            logits = model(spec)[0][:, :n_out]
            loss = sl1(logits, lld)
            loss.backward()
            optimizer.step()
            break

        model.eval()
        temp_mape = []
        for spec, lld, _ in tqdm(val_loader, leave=False):
            spec, lld = spec.cuda(), lld.cuda()
            logits = model(spec)[0][:, :n_out]  # expect: TML003
            temp_mape.append(mape(logits, lld).item())
        mape_hist.append(sum(temp_mape) / len(temp_mape))
    return mape_hist
