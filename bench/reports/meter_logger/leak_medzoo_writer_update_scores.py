# Source: https://github.com/black0017/MedicalZooPytorch/blob/master/lib/train/trainer.py
# Report: 3D medical segmentation trainer logs every step through TensorboardWriter.update_scores(), whose docstring asks for "loss.item()"; this variant hands it the Dice loss tensor itself in the training loop
# Shape: update_scores() does self.data[mode]['loss'] += loss; the writer lives for the whole run (reset only at epoch end) so the attached 0-dim loss chains each batch's graph into the running sum until reset
# Expect: TML001 line 95
import numpy as np
import torch
import torch.nn as nn


class SoftDiceLoss(nn.Module):
    def __init__(self, classes, skip_background=True):
        super().__init__()
        self.classes = classes
        self.skip_background = skip_background

    def forward(self, logits, target):
        target = nn.functional.one_hot(target.long(), self.classes).permute(0, 4, 1, 2, 3).float()
        probs = torch.softmax(logits, dim=1)
        dims = (0, 2, 3, 4)
        inter = (probs * target).sum(dims)
        denom = (probs * probs).sum(dims) + (target * target).sum(dims)
        per_channel = 2 * inter / denom.clamp(min=1e-6)
        if self.skip_background:
            per_channel = per_channel[1:]
        loss = 1.0 - per_channel.mean()
        return loss, per_channel.detach().cpu().numpy()


class ScoreWriter:
    def __init__(self, label_names, summary_writer=None):
        self.label_names = label_names
        self.tb = summary_writer
        self.data = {mode: self._blank() for mode in ("train", "val")}

    def _blank(self):
        d = {name: 0.0 for name in self.label_names}
        d.update(loss=0.0, dsc=0.0, count=1)
        return d

    def reset(self, mode):
        self.data[mode] = self._blank()

    def update_scores(self, it, loss, channel_score, mode, step):
        self.data[mode]["dsc"] += np.mean(channel_score) * 100
        self.data[mode]["loss"] += loss
        self.data[mode]["count"] = it + 1
        for i, name in enumerate(self.label_names[:len(channel_score)]):
            self.data[mode][name] += channel_score[i]
            if self.tb is not None:
                self.tb.add_scalar(f"{mode}/{name}", channel_score[i], global_step=step)

    def display(self, epoch, mode):
        d = self.data[mode]
        print(f"{mode} epoch {epoch} loss {d['loss'] / d['count']:.4f} dsc {d['dsc'] / d['count']:.4f}")


def prepare_input(batch, device):
    volumes, target = batch
    return volumes.to(device), target.to(device)


class Trainer:
    def __init__(self, args, model, criterion, optimizer, train_loader, valid_loader, writer):
        self.args = args
        self.model = model
        self.criterion = criterion
        self.optimizer = optimizer
        self.train_loader = train_loader
        self.valid_loader = valid_loader
        self.writer = writer
        self.len_epoch = len(train_loader)

    def training(self):
        for epoch in range(1, self.args.n_epochs):
            self.train_epoch(epoch)
            self.validate_epoch(epoch)
            val = self.writer.data["val"]
            val_loss = val["loss"] / val["count"]
            if self.args.save is not None:
                torch.save({"epoch": epoch, "val_loss": val_loss,
                            "state_dict": self.model.state_dict()},
                           f"{self.args.save}/epoch_{epoch}.pth")
            self.writer.reset("train")
            self.writer.reset("val")

    def train_epoch(self, epoch):
        self.model.train()
        for batch_idx, batch in enumerate(self.train_loader):
            self.optimizer.zero_grad()
            volumes, target = prepare_input(batch, self.args.device)
            output = self.model(volumes)
            loss_dice, per_ch_score = self.criterion(output, target)
            loss_dice.backward()
            self.optimizer.step()
            self.writer.update_scores(batch_idx, loss_dice, per_ch_score, "train",  # expect: TML001
                                      epoch * self.len_epoch + batch_idx)
            if (batch_idx + 1) % self.args.terminal_show_freq == 0:
                self.writer.display(epoch, "train")
        self.writer.display(epoch, "train")

    def validate_epoch(self, epoch):
        self.model.eval()
        for batch_idx, batch in enumerate(self.valid_loader):
            with torch.no_grad():
                volumes, target = prepare_input(batch, self.args.device)
                output = self.model(volumes)
                loss, per_ch_score = self.criterion(output, target)
                self.writer.update_scores(batch_idx, loss.item(), per_ch_score, "val",
                                          epoch * self.len_epoch + batch_idx)
        self.writer.display(epoch, "val")
