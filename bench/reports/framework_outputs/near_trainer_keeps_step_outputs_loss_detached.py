# Source: https://github.com/TRI-ML/packnet-sfm/pull/51
# Report: the fix detaches the loss before the output dict joins the epoch's output list.
# Shape: same module and hand-written trainer; the loss in the output dict is replaced by its detached value after backward, before the dict is kept.
# Expect: near-miss: must be silent
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
            output["loss"] = output["loss"].detach()
            outputs.append(output)
        return module.training_epoch_end(outputs)

    def fit(self, module, dataloader, optimizer):
        for epoch in range(self.max_epochs):
            self.train(dataloader, module, optimizer)
