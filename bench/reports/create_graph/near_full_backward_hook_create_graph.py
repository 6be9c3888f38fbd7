# Source: https://github.com/pytorch/pytorch/issues/82528
# Report: training with loss.backward(create_graph=True) while a register_full_backward_hook is installed leaked GPU memory every step until OOM (8 GB after ~12 epochs)
# Shape: same loop, but after each optimizer step every parameter's .grad is set to None, breaking the parameter <-> grad reference cycle the PyTorch warning describes
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F


class SmallNet(nn.Module):
    def __init__(self, d_in=784, d_hidden=512, n_classes=10):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.fc2 = nn.Linear(d_hidden, n_classes)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x.flatten(1))))


class GradOutputStats:
    """Collects the norm of dL/d(output) of one layer, BackPACK style."""

    def __init__(self, layer: nn.Module):
        self.last_norm = 0.0
        self.handle = layer.register_full_backward_hook(self._hook)

    def _hook(self, module, grad_input, grad_output):
        self.last_norm = grad_output[0].detach().norm().item()


def train(loader, epochs=30, lr=0.1, device="cuda"):
    model = SmallNet().to(device)
    stats = GradOutputStats(model.fc2)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    for epoch in range(epochs):
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            loss = F.cross_entropy(model(x), y)
            loss.backward(create_graph=True)
            opt.step()
            for p in model.parameters():
                p.grad = None
        mem = torch.cuda.memory_allocated() / 2**30
        print(f"epoch {epoch}: loss {loss.item():.3f} grad-out {stats.last_norm:.3e} mem {mem:.2f} GiB")
    stats.handle.remove()
    return model
