# Source: https://github.com/oxwhirl/pymarl/pull/73
# Report: the learner logs Python numbers (loss.item()); the logger only keeps those.
# Shape: same logger that appends what it is given, fed floats.
# Expect: near-miss: must be silent
from collections import defaultdict

import torch
import torch.nn as nn


class Logger:
    def __init__(self):
        self.stats = defaultdict(list)

    def log_stat(self, key, value, t):
        self.stats[key].append((t, value))


class QLearner:
    def __init__(self, agent: nn.Module, target: nn.Module, logger: Logger, gamma=0.99):
        self.agent = agent
        self.target = target
        self.logger = logger
        self.gamma = gamma
        self.optimiser = torch.optim.RMSprop(agent.parameters(), lr=5e-4)

    def train(self, batch, t_env):
        q = self.agent(batch["obs"]).gather(1, batch["actions"]).squeeze(1)
        with torch.no_grad():
            target_q = batch["reward"] + self.gamma * self.target(batch["next_obs"]).max(dim=1).values
        td_error = q - target_q
        loss = (td_error ** 2).mean()
        self.optimiser.zero_grad()
        loss.backward()
        self.optimiser.step()
        self.logger.log_stat("loss", loss.item(), t_env)
        self.logger.log_stat("td_error_abs", td_error.abs().mean().item(), t_env)
        self.logger.log_stat("lr", self.optimiser.param_groups[0]["lr"], t_env)


def run(learner, sampler, steps):
    for t_env in range(steps):
        learner.train(sampler.sample(), t_env)
