# Source: https://github.com/NJUNLP/njuqe/issues/1
# Report: memory kept rising during QE training with --qe-meter because per-batch predictions were kept by a label meter; storing them detached on the CPU keeps the meter off the graph and off the GPU
# Shape: same criterion/meter/loop, but the criterion packs target.cpu() and pred.detach().cpu() into logs["labels"] before the meter concatenates them
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F
from scipy.stats import pearsonr


class LabelMeter:
    """Keeps every target / prediction seen so far for corpus-level metrics."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.y = None
        self.y_hat = None

    def update(self, labels):
        y, y_hat = labels["y"], labels["y_hat"]
        self.y = y if self.y is None else torch.cat([self.y, y])
        self.y_hat = y_hat if self.y_hat is None else torch.cat([self.y_hat, y_hat])

    def pearson(self):
        return pearsonr(self.y.float().cpu().numpy(), self.y_hat.float().cpu().numpy())[0]


class SentenceScoreCriterion(torch.nn.Module):
    def __init__(self, score_weight=1.0):
        super().__init__()
        self.score_weight = score_weight

    def forward(self, model, sample):
        out = model(**sample["net_input"])
        pred = out["score"].view(-1)
        target = sample["score"].view(-1)
        loss = F.mse_loss(pred, target) * self.score_weight
        logs = {
            "loss": loss.data,
            "nsentences": sample["nsentences"],
            "labels": {"y": target.cpu(), "y_hat": pred.detach().cpu()},
        }
        return loss, logs


def train_epoch(model, criterion, optimizer, loader, use_qe_meter=True, log_every=100):
    model.train()
    label_meter = LabelMeter()
    running = 0.0
    for step, sample in enumerate(loader):
        sample = {k: (v.cuda() if torch.is_tensor(v) else v) for k, v in sample.items()}
        sample["net_input"] = {k: v.cuda() for k, v in sample["net_input"].items()}

        loss, logs = criterion(model, sample)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        running += logs["loss"].item()
        if use_qe_meter:
            label_meter.update(logs["labels"])
        if (step + 1) % log_every == 0:
            print(f"step {step + 1} loss {running / log_every:.4f}")
            running = 0.0
    return label_meter.pearson() if use_qe_meter else None
