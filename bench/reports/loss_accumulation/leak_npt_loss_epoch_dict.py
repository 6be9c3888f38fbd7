# Source: https://github.com/OATML/non-parametric-transformers/issues/6
# Report: NPT training on cifar10 runs out of GPU memory; the reporter traced it to the Loss object adding batch losses into its epoch dict without detach_all(self.batch_loss) on the training path
# Shape: Loss.compute() stores a nested dict of attached per-column losses on self.batch_loss; update_losses() adds it into self.epoch_loss, detaching only when evaluating, so every training step's loss graph stays referenced until the epoch ends
# Expect: TML001 line 62
from collections import defaultdict

import torch
import torch.nn.functional as F

LOSS_MODES = ("label", "augmentation")
LOSS_STATS = ("cat_loss", "cat_total_preds", "num_loss", "num_total_preds")


class Loss:
    """Tracks per-batch and per-epoch losses for masked-column prediction."""

    def __init__(self, device):
        self.device = device
        self.reset()

    def reset(self):
        self.batch_loss = None
        self.epoch_loss = {mode: defaultdict(float) for mode in LOSS_MODES}

    @staticmethod
    def detach_all(raw_dict):
        for mode in raw_dict:
            for key, value in raw_dict[mode].items():
                if torch.is_tensor(value) and value.requires_grad:
                    raw_dict[mode][key] = value.detach()

    def compute_loss(self, output, ground_truth, masks, cat_cols):
        loss_dict = {mode: {key: torch.zeros(1, device=self.device) for key in LOSS_STATS}
                     for mode in LOSS_MODES}
        for col, (out, dat) in enumerate(zip(output, ground_truth)):
            for mode in LOSS_MODES:
                rows = masks[mode][:, col]
                if col in cat_cols:
                    loss_dict[mode]["cat_loss"] += F.cross_entropy(
                        out[rows], dat[rows].argmax(-1), reduction="sum")
                    loss_dict[mode]["cat_total_preds"] += rows.sum()
                else:
                    loss_dict[mode]["num_loss"] += F.mse_loss(out[rows], dat[rows], reduction="sum")
                    loss_dict[mode]["num_total_preds"] += rows.sum()
        return loss_dict

    def compute(self, *args, **kwargs):
        self.batch_loss = self.compute_loss(*args, **kwargs)

    def finalize_batch_losses(self):
        total = sum(self.batch_loss[m]["cat_loss"] + self.batch_loss[m]["num_loss"]
                    for m in LOSS_MODES)
        preds = sum(self.batch_loss[m]["cat_total_preds"] + self.batch_loss[m]["num_total_preds"]
                    for m in LOSS_MODES)
        return {"total_loss": total / preds.clamp(min=1)}

    def update_losses(self, eval_model):
        if eval_model:
            self.detach_all(self.batch_loss)
        for mode in LOSS_MODES:
            for key in LOSS_STATS:
                self.epoch_loss[mode][key] = self.epoch_loss[mode][key] + self.batch_loss[mode][key]  # expect: TML001

    def finalize_epoch_losses(self):
        out = {}
        for mode in LOSS_MODES:
            n = float(self.epoch_loss[mode]["cat_total_preds"] + self.epoch_loss[mode]["num_total_preds"])
            out[mode] = float(self.epoch_loss[mode]["cat_loss"] + self.epoch_loss[mode]["num_loss"]) / max(n, 1.0)
        self.reset()
        return out


def run_train_epoch(model, loader, optimizer, loss_fn, cat_cols):
    model.train()
    for batch in loader:
        inputs = [x.cuda(non_blocking=True) for x in batch["masked"]]
        targets = [x.cuda(non_blocking=True) for x in batch["data"]]
        masks = {m: batch[f"{m}_mask"].cuda(non_blocking=True) for m in LOSS_MODES}
        output = model(inputs)
        loss_fn.compute(output, targets, masks, cat_cols)
        total = loss_fn.finalize_batch_losses()["total_loss"]
        optimizer.zero_grad()
        total.backward()
        optimizer.step()
        loss_fn.update_losses(eval_model=False)
    return loss_fn.finalize_epoch_losses()
