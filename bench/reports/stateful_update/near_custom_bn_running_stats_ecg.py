# Source: https://github.com/zkqiu/RUN/blob/9aa104479768717a632636609eb255b67f536931/Structure/BN.py
# Report: audit of a hand-written BatchNorm1d whose running_mean / running_var were rebuilt from the attached batch moments in forward(); the fix is to do the running-stat update under torch.no_grad()
# Shape: the same ECG heartbeat MLP; the self.running_* rebinds still read the attached batch mean / var but sit inside `with torch.no_grad()`, so the buffers are plain tensors
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F


class CustomBatchNorm1d(nn.Module):
    """Hand-written BatchNorm1d with running statistics for inference."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1):
        super().__init__()
        self.eps = eps
        self.momentum = momentum
        self.gamma = nn.Parameter(torch.ones(num_features))
        self.beta = nn.Parameter(torch.zeros(num_features))
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))

    def forward(self, x):
        if self.training:
            mean = x.mean(dim=0)
            var = x.var(dim=0, unbiased=False)
            with torch.no_grad():
                self.running_mean = (1 - self.momentum) * self.running_mean + self.momentum * mean
                self.running_var = (1 - self.momentum) * self.running_var + self.momentum * var
        else:
            mean, var = self.running_mean, self.running_var
        x_hat = (x - mean) / torch.sqrt(var + self.eps)
        return self.gamma * x_hat + self.beta


class BeatClassifier(nn.Module):
    """MLP over one resampled ECG heartbeat window (MIT-BIH style, 187 samples)."""

    def __init__(self, in_dim=187, hidden=256, n_classes=5):
        super().__init__()
        self.fc1 = nn.Linear(in_dim, hidden)
        self.bn1 = CustomBatchNorm1d(hidden)
        self.fc2 = nn.Linear(hidden, hidden // 2)
        self.bn2 = CustomBatchNorm1d(hidden // 2)
        self.head = nn.Linear(hidden // 2, n_classes)

    def forward(self, beats):
        h = F.relu(self.bn1(self.fc1(beats)))
        h = F.relu(self.bn2(self.fc2(h)))
        return self.head(h)


def run_epoch(model, loader, optimizer, class_weights, device):
    model.train()
    seen, loss_sum, correct = 0, 0.0, 0
    for beats, labels in loader:
        beats, labels = beats.to(device).float(), labels.to(device)
        logits = model(beats)
        loss = F.cross_entropy(logits, labels, weight=class_weights)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        seen += labels.size(0)
        loss_sum += loss.item() * labels.size(0)
        correct += (logits.argmax(1) == labels).sum().item()
    return {"loss": loss_sum / seen, "acc": correct / seen}


def fit(model, train_loader, epochs=30, lr=1e-3, device="cuda"):
    model.to(device)
    # N, S, V, F, Q beats are heavily imbalanced in MIT-BIH
    class_weights = torch.tensor([0.2, 2.0, 1.0, 4.0, 1.0], device=device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    history = []
    for epoch in range(epochs):
        stats = run_epoch(model, train_loader, optimizer, class_weights, device)
        history.append(stats)
        print(f"epoch {epoch:02d} loss {stats['loss']:.4f} acc {stats['acc']:.3f}")
    return history
