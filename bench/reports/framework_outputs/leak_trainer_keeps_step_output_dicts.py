# Source: https://github.com/TRI-ML/packnet-sfm/pull/51
# Report: the trainer appended each training step's output dict to the epoch's output list with the loss still attached to its graph; detaching the loss before appending fixed the leak.
# Shape: the module's training_step returns a dict holding the loss and metrics; a hand-written trainer calls backward on output["loss"] and keeps every output dict for the epoch-end hook.
# Expect: TML001 line 36
import torch
import torch.nn as nn


class DepthModule(nn.Module):
    def __init__(self, depth_net, pose_net, photometric_loss):
        super().__init__()
        self.depth_net, self.pose_net, self.photometric_loss = depth_net, pose_net, photometric_loss

    def training_step(self, batch):
        depth = self.depth_net(batch["rgb"])
        poses = self.pose_net(batch["rgb"], batch["rgb_context"])
        loss, metrics = self.photometric_loss(batch, depth, poses)
        return {"loss": loss, "metrics": metrics}

    def training_epoch_end(self, outputs):
        return {"avg_loss": sum(output["loss"].item() for output in outputs) / len(outputs)}


class Trainer:
    def __init__(self, max_epochs):
        self.max_epochs = max_epochs

    def train(self, dataloader, module, optimizer):
        module.train()
        outputs = []
        for batch in dataloader:
            optimizer.zero_grad()
            output = module.training_step(batch)
            output["loss"].backward()
            optimizer.step()
            outputs.append(output)  # expect: TML001
        return module.training_epoch_end(outputs)

    def fit(self, module, dataloader, optimizer):
        for epoch in range(self.max_epochs):
            self.train(dataloader, module, optimizer)
