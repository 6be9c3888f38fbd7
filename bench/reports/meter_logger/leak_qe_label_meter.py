# Source: https://github.com/NJUNLP/njuqe/issues/1
# Report: memory kept rising during QE training with --qe-meter: the criterion put every batch's predictions into its logging output and a label meter concatenated them for dataset-level Pearson/F1
# Shape: criterion helper returns (loss, logs) with the attached score predictions packed in logs["labels"]; the loop hands them to a LabelMeter whose update() torch.cat's them onto self
# Expect: TML001 line 62
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
            "labels": {"y": target, "y_hat": pred},
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
            label_meter.update(logs["labels"])  # expect: TML001
        if (step + 1) % log_every == 0:
            print(f"step {step + 1} loss {running / log_every:.4f}")
            running = 0.0
    return label_meter.pearson() if use_qe_meter else None
