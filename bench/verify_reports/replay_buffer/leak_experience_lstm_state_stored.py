# Source: https://github.com/Metta-AI/metta/pull/1139
# Report: computational graphs attached to the LSTM state persisted into the experience buffer because the state was not detached before storing experience.
# Shape: the policy returns (action, value, (h, c)); the rollout writes the value and recurrent state into preallocated experience slots every step.
# Expect: TML001 lines 30, 31
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
    experience["values"][t] = value  # expect: TML001
    experience["h"][t] = state[0]  # expect: TML001
    state = (state[0].detach(), state[1].detach())
print(sum(v.sum().item() for v in experience["values"]))
