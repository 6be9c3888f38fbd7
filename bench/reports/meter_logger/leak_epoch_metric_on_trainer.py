# Source: https://github.com/pytorch/ignite/issues/221
# Report: an epoch-level metric attached to the *training* loop accumulated y_pred without detach, so every batch's graph was kept until the epoch ended (only evaluators ran under no_grad)
# Shape: a custom Metric class whose update() appends the raw predictions to self lists; the training loop feeds it the live model output every step
# Expect: TML001 line 53
import torch
import torch.nn.functional as F


class EpochMetric:
    """Collects predictions/targets for the whole epoch, then calls compute_fn once."""

    def __init__(self, compute_fn):
        self.compute_fn = compute_fn
        self.reset()

    def reset(self):
        self._predictions = []
        self._targets = []

    def update(self, output):
        y_pred, y = output
        if y_pred.ndimension() == 2 and y_pred.shape[1] == 1:
            y_pred = y_pred.squeeze(dim=-1)
        self._predictions.append(y_pred)
        self._targets.append(y)

    def compute(self):
        preds = torch.cat(self._predictions, dim=0)
        targets = torch.cat(self._targets, dim=0)
        return self.compute_fn(preds, targets)


def roc_auc_approx(scores, targets):
    order = torch.argsort(scores, descending=True)
    hits = targets[order].float()
    tpr = torch.cumsum(hits, 0) / hits.sum().clamp(min=1)
    fpr = torch.cumsum(1 - hits, 0) / (1 - hits).sum().clamp(min=1)
    return torch.trapz(tpr, fpr).item()


def train(model, loader, optimizer, epochs, device="cuda"):
    train_auc = EpochMetric(roc_auc_approx)
    for epoch in range(epochs):
        model.train()
        train_auc.reset()
        for x, y_cpu in loader:
            x, y = x.to(device), y_cpu.to(device)
            optimizer.zero_grad()
            logits = model(x)
            loss = F.binary_cross_entropy_with_logits(logits.squeeze(-1), y.float())
            loss.backward()
            optimizer.step()
            train_auc.update((torch.sigmoid(logits), y_cpu))  # expect: TML001
        print(f"epoch {epoch}: train auc {train_auc.compute():.4f}")
