# Source: https://github.com/skorch-dev/skorch/issues/509
# Report: the EpochScoring callback cached every validation y_pred exactly as the module returned it (CUDA tensors); with ~100k multi-label targets GPU memory climbed through each validation pass until OOM
# Shape: fixed as the reporter and braindecode did: the hook moves each cached prediction to host memory (detach().cpu()) before appending
# Expect: near-miss: must be silent
import numpy as np
import torch
from sklearn.metrics import f1_score


class EpochScoring:
    def __init__(self, name, lower_is_better=False, on_train=False, use_caching=True):
        self.name = name
        self.lower_is_better = lower_is_better
        self.on_train = on_train
        self.use_caching = use_caching
        self.y_trues_ = []
        self.y_preds_ = []

    def on_epoch_begin(self, net, **kwargs):
        self.y_trues_ = []
        self.y_preds_ = []

    def on_batch_end(self, net, y, y_pred, training, **kwargs):
        if not self.use_caching or training != self.on_train:
            return
        if y is not None:
            self.y_trues_.append(y)
        self.y_preds_.append(y_pred.detach().cpu())

    def on_epoch_end(self, net, **kwargs):
        y_true = torch.cat(self.y_trues_).numpy()
        y_prob = torch.cat(self.y_preds_).sigmoid().numpy()
        score = f1_score(y_true, (y_prob > 0.5).astype(np.int64), average="micro")
        net.history[-1][self.name] = score


class MultiLabelNet:
    def __init__(self, module, criterion, callbacks, device="cuda"):
        self.module_ = module.to(device)
        self.criterion_ = criterion
        self.callbacks_ = callbacks
        self.device = device
        self.history = []

    def validation_step(self, Xi, yi):
        self.module_.eval()
        with torch.no_grad():
            y_pred = self.module_(Xi.to(self.device))
            loss = self.criterion_(y_pred, yi.to(self.device).float())
        return {"loss": loss, "y_pred": y_pred}

    def run_valid_epoch(self, valid_loader):
        self.history.append({})
        for cb in self.callbacks_:
            cb.on_epoch_begin(self)
        valid_loss, n_seen = 0.0, 0
        for Xi, yi in valid_loader:
            step = self.validation_step(Xi, yi)
            valid_loss += step["loss"].item() * len(Xi)
            n_seen += len(Xi)
            for cb in self.callbacks_:
                cb.on_batch_end(self, y=yi, y_pred=step["y_pred"], training=False)
        self.history[-1]["valid_loss"] = valid_loss / max(n_seen, 1)
        for cb in self.callbacks_:
            cb.on_epoch_end(self)
        return self.history[-1]
