# Source: https://discuss.pytorch.org/t/exponential-moving-average-with-backward/93219
# Report: an exponential moving average used inside the loss (BatchNorm-style running statistics) is computed with autograd, so every step's graph links to all past steps and backward() quickly runs out of memory
# Shape: a loss module keeps self.running_mean, rebinding it from its own previous value and the attached batch mean in forward; the loop needs retain_graph=True to backward through the old links
# Expect: TML005 line 20; TML019 line 20; TML006 line 44
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
        self.running_mean = self.momentum * self.running_mean + (1 - self.momentum) * batch_mean  # expect: TML005, TML019
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
            # without retain_graph the second step fails: the running mean
            # still points into last step's (already freed) graph
            loss.backward(retain_graph=True)  # expect: TML006
            optimizer.step()
            history["ce"].append(ce.item())
            history["center"].append(center.item())
    return history
