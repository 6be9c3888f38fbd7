# Source: https://github.com/sithu31296/audio-tagging/blob/a52ec4a5ff8ccbd082def8e7afdc8743fffe8e46/utils/metrics.py
# Report: audio-tagging evaluate() (tools/val.py) feeds every batch's model output to a Metrics object; fixed variant: for mAP datasets Metrics keeps host copies of predictions and targets and concatenates them at compute()
# Shape: evaluate() runs under @torch.no_grad(); _update_map appends pred.cpu() / target.cpu(), so the per-batch GPU outputs are freed each step and only host memory grows with the validation set
# Expect: near-miss: must be silent
import math

import torch
from scipy import stats
from sklearn import metrics as skmetrics
from torch import Tensor
from tqdm import tqdm


class Metrics:
    def __init__(self, metric="accuracy") -> None:
        assert metric in ["accuracy", "mAP", "map"]
        self.metric = metric
        self.count = 0
        self.acc = 0.0
        self.preds = []
        self.targets = []

    def _update_accuracy(self, pred: Tensor, target: Tensor):
        self.acc += (pred.argmax(dim=-1) == target.argmax(dim=-1)).sum(dim=0).item()
        self.count += target.shape[0]

    def _update_map(self, pred: Tensor, target: Tensor):
        self.preds.append(pred.cpu())
        self.targets.append(target.cpu())

    def _compute_accuracy(self):
        return [(self.acc / self.count) * 100]

    def _compute_map(self):
        preds = torch.cat(self.preds, dim=0).numpy()
        targets = torch.cat(self.targets, dim=0).numpy()
        ap = skmetrics.average_precision_score(targets, preds, average=None)
        auc = skmetrics.roc_auc_score(targets, preds, average=None)
        m_auc = auc.mean()
        d_prime = stats.norm().ppf(m_auc) * math.sqrt(2.0)
        return ap.mean() * 100, m_auc * 100, d_prime * 100

    def update(self, pred: Tensor, target: Tensor):
        if self.metric == "accuracy":
            self._update_accuracy(pred, target)
        else:
            self._update_map(pred, target)

    def compute(self):
        return self._compute_accuracy() if self.metric == "accuracy" else self._compute_map()


@torch.no_grad()
def evaluate(dataloader, model, device, metric="accuracy"):
    print("Evaluating...")
    model.eval()
    ametrics = Metrics(metric)
    for audio, target in tqdm(dataloader):
        audio = audio.to(device)
        target = target.to(device)
        pred = model(audio)
        ametrics.update(pred, target)
    return ametrics.compute()
