# Source: https://discuss.pytorch.org/t/implementing-truncated-backpropagation-through-time/15500
# Report: recurrent net trained on very long sequences ran into memory problems because the whole sequence was backpropagated; the poster switched to detaching the state every k1 steps (truncated BPTT)
# Shape: k1 == k2 truncated BPTT: every k1 steps backward/step, then the carried state is detached and the segment loss reset, so the graph never spans more than k1 steps
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


class OneStep(nn.Module):
    def __init__(self, n_in, n_hidden, n_out):
        super().__init__()
        self.cell = nn.GRUCell(n_in, n_hidden)
        self.readout = nn.Linear(n_hidden, n_out)

    def forward(self, inp, state):
        state = self.cell(inp, state)
        return self.readout(state), state


def init_state(n_hidden, device):
    return torch.zeros(1, n_hidden, device=device)


def train_on_stream(one_step_module, loss_module, optimizer, stream, n_hidden, k1=50, device="cuda"):
    """stream yields (inp, target) pairs of one very long recording."""
    one_step_module.train()
    state = init_state(n_hidden, device)
    segment_loss = 0.0
    running, n_updates = 0.0, 0
    for i, (inp, target) in enumerate(stream):
        inp, target = inp.to(device), target.to(device)
        output, state = one_step_module(inp, state)
        segment_loss = segment_loss + loss_module(output, target)
        if (i + 1) % k1 == 0:
            optimizer.zero_grad()
            (segment_loss / k1).backward()
            optimizer.step()
            running += segment_loss.item() / k1
            n_updates += 1
            state = state.detach()
            segment_loss = 0.0
    return running / max(n_updates, 1)


def run(recordings, n_in=40, n_hidden=256, n_out=10, epochs=5, device="cuda"):
    model = OneStep(n_in, n_hidden, n_out).to(device)
    loss_module = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        for rec in recordings:
            avg = train_on_stream(model, loss_module, optimizer, rec, n_hidden, device=device)
            print(f"epoch {epoch} loss {avg:.4f}")
    return model
