# Source: https://github.com/oxwhirl/pymarl/pull/73
# Report: the Logger kept every logged stat in memory (self.stats lists were never cleared), and logged values could still carry the learner's graph.
# Shape: the learner hands loss tensors to a project logger whose log_stat body appends (t, value) to a dict of lists.
# Expect: TML001 lines 40, 41
from collections import defaultdict

import torch
import torch.nn as nn


class Logger:
    def __init__(self):
        self.stats = defaultdict(list)

    def log_stat(self, key, value, t):
        self.stats[key].append((t, value))

    def print_recent(self):
        for key, values in self.stats.items():
            print(key, values[-1][1])


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
        self.logger.log_stat("loss", loss, t_env)  # expect: TML001
        self.logger.log_stat("td_error_abs", td_error.abs().mean(), t_env)  # expect: TML001


def run(learner, sampler, steps):
    for t_env in range(steps):
        learner.train(sampler.sample(), t_env)
