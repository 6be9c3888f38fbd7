# Source: https://github.com/oxwhirl/pymarl/pull/73
# Report: the fix logs plain numbers.
# Shape: the same logger, given loss.item() and the mean absolute TD error as a float.
# Expect: near-miss: must be silent
from collections import defaultdict

import torch
from torch import nn

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"


class Logger:
    def __init__(self):
        self.stats = defaultdict(list)

    def log_stat(self, key, value, t):
        self.stats[key].append((t, value))


agent = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 5)).to(device)
optimiser = torch.optim.RMSprop(agent.parameters(), lr=5e-4)
logger = Logger()
for t in range(24):
    q_values = agent(torch.randn(32, 20, device=device))
    td_error = q_values.max(dim=1).values - torch.randn(32, device=device)
    loss = td_error.pow(2).mean()
    optimiser.zero_grad()
    loss.backward()
    optimiser.step()
    logger.log_stat("loss", loss.item(), t)
    logger.log_stat("td_error_abs", td_error.abs().mean().item(), t)
print(len(logger.stats["loss"]))
