# Source: https://github.com/gabrielloye/RNN-walkthrough/issues/3
# Report: a user replaced the per-forward zero hidden state with one carried on the model (self.hidden) across batches; without .detach() it raised "backward through the graph a second time" errors, with .detach() it trained
# Shape: same state on self carried across batches, but fed back as self.hidden.detach() (the user's working version), so each batch's graph stops at the previous state
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


class CharModel(nn.Module):
    def __init__(self, input_size, output_size, hidden_dim, n_layers, batch_size, device):
        super().__init__()
        self.hidden_dim = hidden_dim
        self.n_layers = n_layers
        self.device = device
        self.rnn = nn.RNN(input_size, hidden_dim, n_layers, batch_first=True)
        self.fc = nn.Linear(hidden_dim, output_size)
        self.hidden = self.init_hidden(batch_size)

    def init_hidden(self, batch_size):
        return torch.zeros(self.n_layers, batch_size, self.hidden_dim, device=self.device)

    def forward(self, x):
        if self.hidden.size(1) != x.size(0):
            self.hidden = self.init_hidden(x.size(0))
        # keep the state from the previous batch instead of starting from zeros
        out, self.hidden = self.rnn(x, self.hidden.detach())
        out = out.contiguous().view(-1, self.hidden_dim)
        return self.fc(out)


def train(model, input_seq, target_seq, n_epochs=2000, lr=0.001):
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    for epoch in range(1, n_epochs + 1):
        optimizer.zero_grad()
        output = model(input_seq.to(model.device))
        loss = criterion(output, target_seq.to(model.device).view(-1).long())
        loss.backward()
        optimizer.step()
        if epoch % 100 == 0:
            print(f"Epoch: {epoch}/{n_epochs} Loss: {loss.item():.4f}")
    return model
