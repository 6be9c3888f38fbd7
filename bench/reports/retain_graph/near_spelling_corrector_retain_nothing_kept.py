# Source: https://github.com/hiyoung123/SoftMaskedBert/issues/15
# Report: a user asked why the training backward used retain_graph=True and whether GPU memory would blow up because of it.
# Shape: a trainer's shared train/validation iteration backpropagates its only loss with retain_graph=True; nothing of the step outlives it (the loss total is a Python number), so the retained graph dies when the next batch rebinds the names: a higher peak, no growth (TML006 is for growth).
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


class CorrectorTrainer:
    def __init__(self, model, optimizer, device, weight=0.8):
        self.model = model.to(device)
        self.optimizer = optimizer
        self.device = device
        self.weight = weight
        self.correction_loss = nn.NLLLoss()
        self.detection_loss = nn.BCELoss()

    def train(self, loader, epoch):
        self.model.train()
        return self.iteration(loader, epoch, train=True)

    def evaluate(self, loader, epoch):
        self.model.eval()
        with torch.no_grad():
            return self.iteration(loader, epoch, train=False)

    def iteration(self, loader, epoch, train):
        total_loss, correct, seen = 0.0, 0, 0
        for step, batch in enumerate(loader):
            batch = {name: value.to(self.device) for name, value in batch.items()}
            tokens, detection = self.model(batch["noisy"])
            loss = self.weight * self.correction_loss(tokens.transpose(1, 2), batch["clean"]) \
                + (1 - self.weight) * self.detection_loss(detection.squeeze(-1), batch["errors"].float())
            if train:
                self.optimizer.zero_grad()
                loss.backward(retain_graph=True)
                self.optimizer.step()
            correct += tokens.argmax(dim=-1).eq(batch["clean"]).sum().item()
            seen += batch["clean"].numel()
            total_loss += loss.item()
        return total_loss / (step + 1), correct / seen
