# Source: https://github.com/astra-vision/LMSCNet/blob/cb205f28e4ea42aafd3724daeba635e8f88e6115/LMSCNet/common/metrics.py
# Report: fix of the LMSCNet loss tracker (GPU memory rose until OOM in a derived repo, fixed by taking the value only): the tracker now sums detached losses
# Shape: model.compute_loss() returns a dict of graph-attached losses; update_train_losses() detaches each entry before += on the epoch-long tracker, so no step's graph is kept
# Expect: near-miss: must be silent
import torch


class LossesTrackEpoch:
    def __init__(self):
        self.train_losses = {}
        self.val_losses = {}
        self.train_count = 0
        self.val_count = 0

    def set_keys(self, train_keys, val_keys):
        self.train_losses = {k: 0 for k in train_keys}
        self.val_losses = {k: 0 for k in val_keys}

    def update_train_losses(self, loss):
        for key in loss:
            self.train_losses[key] += loss[key].detach()
        self.train_count += 1

    def update_val_losses(self, loss):
        for key in loss:
            self.val_losses[key] += loss[key]
        self.val_count += 1

    def restart(self):
        for key in self.train_losses:
            self.train_losses[key] = 0
        for key in self.val_losses:
            self.val_losses[key] = 0
        self.train_count = self.val_count = 0


class SSCMetrics:
    def __init__(self):
        self.losses_track = LossesTrackEpoch()
        self.conf = {}

    def add_batch(self, prediction, target):
        for key in prediction:
            pred = torch.argmax(prediction[key], dim=1).data.cpu().numpy()
            self.conf.setdefault(key, []).append(int((pred == target[key].cpu().numpy()).sum()))


def to_device(data, device):
    return {k: v.to(device) for k, v in data.items()}


def train(model, optimizer, loaders, n_epochs, writer, device="cuda"):
    metrics = SSCMetrics()
    metrics.losses_track.set_keys(model.get_train_loss_keys(), model.get_validation_loss_keys())
    for epoch in range(n_epochs):
        model.train()
        for t, (data, _) in enumerate(loaders["train"]):
            data = to_device(data, device)
            scores = model(data)
            loss = model.compute_loss(scores, data)
            optimizer.zero_grad()
            loss["total"].backward()
            optimizer.step()
            for l_key in loss:
                writer.add_scalar(f"train_loss_batch/{l_key}", loss[l_key].item(), t)
            metrics.losses_track.update_train_losses(loss)
            metrics.add_batch(prediction=scores, target=model.get_target(data))

        track = metrics.losses_track
        epoch_loss = track.train_losses["total"] / track.train_count
        writer.add_scalar("train_loss_epoch/total", epoch_loss.item(), epoch)
        validate(model, loaders["val"], metrics, writer, epoch, device)
        metrics.losses_track.restart()


def validate(model, loader, metrics, writer, epoch, device):
    model.eval()
    with torch.no_grad():
        for data, _ in loader:
            data = to_device(data, device)
            scores = model(data)
            loss = model.compute_loss(scores, data)
            metrics.losses_track.update_val_losses(loss)
            metrics.add_batch(prediction=scores, target=model.get_target(data))
    track = metrics.losses_track
    writer.add_scalar("val_loss_epoch/total", (track.val_losses["total"] / track.val_count).item(), epoch)
