# Source: https://e-com-net.com/article/1600156146990088192.htm
# Report: A write-up of LSTM pitfalls: forward wrote the LSTM's returned (h, c) back into self.h0 / self.c0, training hit "Trying to backward through the graph a second time", retain_graph=True was added, and training then ran out of CUDA memory.
# Shape: the usual truncated-BPTT fix (a close variant, not the post's own code): the state is still carried in attributes, but only detached copies are stored, and backward() no longer retains the graph.
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


class SeqRegressor(nn.Module):
    def __init__(self, in_features, hidden_size, batch_size, device):
        super().__init__()
        self.flat = nn.Flatten(start_dim=2)
        self.lstm = nn.LSTM(in_features, hidden_size, batch_first=True)
        self.model1 = nn.Sequential(nn.Linear(hidden_size, 64), nn.ReLU(), nn.Linear(64, 1))
        self.h0 = torch.zeros(1, batch_size, hidden_size, device=device)
        self.c0 = torch.zeros(1, batch_size, hidden_size, device=device)

    def forward(self, inp):
        to_in = self.flat(inp)
        f, (h, c) = self.lstm(to_in, (self.h0, self.c0))
        self.h0, self.c0 = h.detach(), c.detach()
        return self.model1(f[:, -1])


def fit(model, loader, epochs, device, lr=1e-3):
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.MSELoss()
    for epoch in range(epochs):
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            pred = model(x)
            loss = loss_fn(pred.squeeze(-1), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"epoch {epoch}: last loss {loss.item():.4f}")
