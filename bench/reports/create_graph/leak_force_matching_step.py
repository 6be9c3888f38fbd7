# Source: https://github.com/pytorch/pytorch/issues/1346
# Report: memory grew every iteration when a backward that builds a graph filled .grad and a second backward ran through that .grad; maintainer: the .grad is never detached and keeps the graphs of all iterations alive (detach_/zero the grads)
# Shape: force-matching step gets forces from pos.grad after energy.backward(create_graph=True, inputs=[pos]); pos.grad is never reset, so pos <-> pos.grad keeps each step's graph
# Expect: TML013 line 27
import torch
import torch.nn as nn
import torch.nn.functional as F


class PairPotential(nn.Module):
    def __init__(self, hidden=128):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(1, hidden), nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, 1))

    def forward(self, pos):
        diff = pos[:, :, None, :] - pos[:, None, :, :]
        dist = (diff.pow(2).sum(-1) + 1e-9).sqrt()
        n = pos.size(1)
        mask = ~torch.eye(n, dtype=torch.bool, device=pos.device)
        pair_e = self.mlp(dist[:, mask].unsqueeze(-1)).squeeze(-1)
        return 0.5 * pair_e.sum(-1)


def train_step(model, optimizer, batch, w_force=100.0):
    pos = batch["pos"].clone().requires_grad_(True)
    energy = model(pos)
    energy.sum().backward(create_graph=True, inputs=[pos])  # expect: TML013
    forces = -pos.grad
    loss = F.mse_loss(energy, batch["energy"]) + w_force * F.mse_loss(forces, batch["forces"])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


def fit(model, loader, epochs=50, device="cuda"):
    model.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        running = 0.0
        for batch in loader:
            batch = {k: v.to(device) for k, v in batch.items()}
            running += train_step(model, optimizer, batch)
        print(f"epoch {epoch}: loss {running / len(loader):.4f}, "
              f"alloc {torch.cuda.memory_allocated() / 2**20:.0f} MiB")
    return model
