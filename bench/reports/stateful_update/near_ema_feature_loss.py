# Source: https://discuss.pytorch.org/t/exponential-moving-average-with-backward/93219
# Report: an exponential moving average used inside the loss (BatchNorm-style running statistics) is computed with autograd, so every step's graph links to all past steps and backward() quickly runs out of memory
# Shape: near-miss, the answer's fix: the running mean is a buffer updated in place under torch.no_grad() as BatchNorm does, so it is a constant for autograd and a plain backward() works
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F


class EMACenteringLoss(nn.Module):
    """Pulls embeddings toward a slowly moving centre, like BN's running mean."""

    def __init__(self, dim, momentum=0.99):
        super().__init__()
        self.momentum = momentum
        self.register_buffer("running_mean", torch.zeros(dim))

    def forward(self, features):
        batch_mean = features.mean(dim=0)
        with torch.no_grad():
            self.running_mean.mul_(self.momentum).add_((1 - self.momentum) * batch_mean)
        centred = features - self.running_mean
        return centred.pow(2).sum(dim=1).mean()


def train(encoder, head, loader, epochs=10, device="cuda"):
    criterion = nn.CrossEntropyLoss()
    center_loss = EMACenteringLoss(encoder.out_dim).to(device)
    params = list(encoder.parameters()) + list(head.parameters())
    optimizer = torch.optim.SGD(params, lr=0.05, momentum=0.9)
    history = {"ce": [], "center": []}
    for epoch in range(epochs):
        encoder.train()
        head.train()
        for images, labels in loader:
            images, labels = images.to(device), labels.to(device)
            feats = F.normalize(encoder(images), dim=1)
            logits = head(feats)
            ce = criterion(logits, labels)
            center = center_loss(feats)
            loss = ce + 0.1 * center
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            history["ce"].append(ce.item())
            history["center"].append(center.item())
    return history
