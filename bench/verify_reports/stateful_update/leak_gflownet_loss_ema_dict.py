# Source: https://github.com/alexhernandezgarcia/gflownet/pull/133
# Report: running averages of the terminal and flow losses were kept as tensors without detach, so every step's graph stayed reachable and memory grew fast.
# Shape: the EMA lives in a dict on self, updated in a step method from the dict of losses a helper method returns.
# Expect: TML005 line 30
import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"


class FlowAgent:
    def __init__(self, policy, alpha=0.9):
        self.policy = policy
        self.opt = torch.optim.Adam(policy.parameters(), lr=1e-3)
        self.alpha = alpha
        self.loss_ema = {"term": None, "flow": None}

    def losses(self, states):
        flows = self.policy(states)
        return {"term": flows[:, 0].pow(2).mean(), "flow": (flows[:, 1:].logsumexp(1) - flows[:, 0]).pow(2).mean()}

    def train_step(self, states):
        losses = self.losses(states)
        self.opt.zero_grad()
        sum(losses.values()).backward()
        self.opt.step()
        for key, value in losses.items():
            previous = self.loss_ema[key]
            self.loss_ema[key] = value if previous is None else self.alpha * previous + (1 - self.alpha) * value  # expect: TML005


agent = FlowAgent(nn.Sequential(nn.Linear(12, 64), nn.ReLU(), nn.Linear(64, 4)).to(device))
for it in range(24):
    agent.train_step(torch.randn(32, 12, device=device))
print({key: float(value) for key, value in agent.loss_ema.items()})
