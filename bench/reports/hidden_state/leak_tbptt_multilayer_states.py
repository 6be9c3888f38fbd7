# Source: https://github.com/NeuroTorch/NeuroTorch/issues/134
# Report: TBPTT on a multi-layer SequentialRNN raised "Trying to backward through the graph a second time": the per-layer hidden states were carried from one truncation window into the next without being detached (fixed by detaching them after each call)
# Shape: hidden states live in a dict keyed by layer name, returned by the model and fed back in at every time step across windows; backward every k steps
# Expect: TML005 line 55
import torch
import torch.nn.functional as F
from torch import nn


class LeakyRecurrentLayer(nn.Module):
    def __init__(self, input_size, output_size, dt=1e-3, tau=10e-3):
        super().__init__()
        self.output_size = output_size
        self.alpha = dt / tau
        self.forward_weights = nn.Parameter(torch.empty(input_size, output_size))
        self.recurrent_weights = nn.Parameter(torch.empty(output_size, output_size))
        nn.init.xavier_normal_(self.forward_weights)
        nn.init.xavier_normal_(self.recurrent_weights)

    def init_state(self, batch_size, device):
        return torch.zeros(batch_size, self.output_size, device=device)

    def forward(self, x, state):
        drive = x @ self.forward_weights + state @ self.recurrent_weights
        return (1.0 - self.alpha) * state + self.alpha * torch.tanh(drive)


class SequentialRNN(nn.Module):
    def __init__(self, sizes, n_out):
        super().__init__()
        self.layers = nn.ModuleDict(
            {f"layer{i}": LeakyRecurrentLayer(a, b) for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:]))}
        )
        self.readout = nn.Linear(sizes[-1], n_out)

    def init_states(self, batch_size, device):
        return {name: layer.init_state(batch_size, device) for name, layer in self.layers.items()}

    def forward(self, x_t, hidden_states):
        new_states = {}
        for name, layer in self.layers.items():
            x_t = layer(x_t, hidden_states[name])
            new_states[name] = x_t
        return self.readout(x_t), new_states


def train_tbptt(model, loader, optimizer, backward_time_steps=20, device="cuda"):
    model.train()
    for inputs, targets in loader:  # [B, T, F], [B, T, n_out]
        inputs, targets = inputs.to(device), targets.to(device)
        hidden_states = model.init_states(inputs.shape[0], device)
        window_loss = 0.0
        n_steps = inputs.shape[1]
        for t in range(n_steps):
            out, hidden_states = model(inputs[:, t], hidden_states)  # expect: TML005
            window_loss = window_loss + F.mse_loss(out, targets[:, t])
            if (t + 1) % backward_time_steps == 0 or t == n_steps - 1:
                optimizer.zero_grad()
                window_loss.backward()
                optimizer.step()
                window_loss = 0.0
