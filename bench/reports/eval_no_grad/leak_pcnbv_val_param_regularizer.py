# Source: https://github.com/zhanhz/PC-NBV_pytorch/issues/3
# Report: GPU usage keeps increasing when the PC-NBV view scorer is run over data without torch.no_grad(); the leak is the repository's validation pass with the no_grad block dropped.
# Shape: after net.eval() the loop over val_loader calls the model with grad enabled and never calls backward, so each batch saves activations for a backward that never comes; losses are still reduced with .item().
# Expect: TML003 line 48
import torch
import torch.nn as nn
import torch.optim as optim


class ViewScorer(nn.Module):
    def __init__(self, n_views=33):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv1d(3, 128, 1), nn.ReLU(), nn.Conv1d(128, 256, 1))
        self.decoder = nn.Sequential(nn.Linear(256 + n_views, 256), nn.ReLU(), nn.Linear(256, n_views))

    def forward(self, points, view_state):
        feat = self.encoder(points).max(dim=2).values
        return feat, self.decoder(torch.cat([feat, view_state], dim=1))


def param_penalty(crit, module):
    return sum([crit(p, torch.zeros_like(p)) for p in module.parameters()])


def train(net, train_loader, val_loader, epochs, alpha=1e-4, device="cuda"):
    crit = nn.MSELoss(reduction="sum")
    opt = optim.Adam(net.parameters(), lr=1e-3, weight_decay=1e-6)
    best = float("inf")
    for epoch in range(1, epochs + 1):
        net.train()
        total, n = 0.0, 0
        for pc, _, views, target in train_loader:
            pc, views, target = pc.to(device).permute(0, 2, 1), views.to(device), target.to(device)
            opt.zero_grad()
            _, pred = net(pc, views)
            reg = (param_penalty(crit, net.encoder) + param_penalty(crit, net.decoder)) * alpha
            loss = reg + crit(pred, target)
            loss.backward()
            opt.step()
            total += loss.item()
            n += 1
        print(f"epoch {epoch}: train {total / n:.4f}")

        net.eval()
        total, total_eval, n = 0.0, 0.0, 0
        for pc, _, views, target in val_loader:
            pc, views, target = pc.to(device).permute(0, 2, 1), views.to(device), target.to(device)
            _, pred = net(pc, views)  # expect: TML003
            reg = (param_penalty(crit, net.encoder) + param_penalty(crit, net.decoder)) * alpha
            val_eval = crit(pred, target)
            total += (reg + val_eval).item()
            total_eval += val_eval.item()
            n += 1
        mean = total / n
        print(f"epoch {epoch}: valid {mean:.4f} / {total_eval / n:.4f}")
        if mean < best:
            best = mean
            torch.save(net.state_dict(), "lowest_loss.pth")
