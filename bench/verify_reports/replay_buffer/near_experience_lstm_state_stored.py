# Source: https://github.com/Metta-AI/metta/pull/1139
# Report: the fix detaches the state and value before storing experience.
# Shape: the same rollout writes detached values and states.
# Expect: near-miss: must be silent
import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.LSTMCell(8, 32)
        self.actor = nn.Linear(32, 4)
        self.critic = nn.Linear(32, 1)

    def forward(self, obs, state):
        h, c = self.cell(obs, state)
        return self.actor(h).argmax(-1), self.critic(h), (h, c)


policy = Policy().to(device)
steps = 24
experience = {"values": [None] * steps, "h": [None] * steps}
state = None
for t in range(steps):
    action, value, state = policy(torch.randn(2, 8, device=device), state)
    experience["values"][t] = value.detach()
    experience["h"][t] = state[0].detach()
    state = (state[0].detach(), state[1].detach())
print(sum(v.sum().item() for v in experience["values"]))
