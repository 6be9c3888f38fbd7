# Modelled on: https://github.com/TRI-ML/packnet-sfm/pull/51
# Report: detach the loss before appending it to the list kept for the epoch.
import torch


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def train_epoch(self, dataloader):
        outputs = []
        for batch in dataloader:
            output = self.model(batch)
            loss = output["loss"]
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            outputs.append(loss.detach())
        return torch.stack(outputs).mean()
