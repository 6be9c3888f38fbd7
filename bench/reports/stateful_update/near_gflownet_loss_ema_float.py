# Source: https://github.com/alexhernandezgarcia/gflownet/pull/133
# Report: the fix computes the loss running averages outside of torch (plain floats), which removed the growth.
# Shape: same agent as the leak, the helper still returns graph-carrying losses but the EMA reads float(value).
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


class FlowAgent:
    def __init__(self, policy: nn.Module, lr=1e-3, ema_alpha=0.9):
        self.policy = policy
        self.opt = torch.optim.Adam(policy.parameters(), lr=lr)
        self.ema_alpha = ema_alpha
        self.loss_ema = {"term": 0.0, "flow": 0.0}

    def compute_losses(self, states, log_rewards):
        log_flows = self.policy(states).squeeze(-1)
        term = (log_flows[-1] - log_rewards[-1]) ** 2
        flow = ((log_flows[:-1] - log_flows[1:]) ** 2).mean()
        return {"term": term, "flow": flow}

    def train_step(self, states, log_rewards):
        losses = self.compute_losses(states, log_rewards)
        total = losses["term"] + losses["flow"]
        self.opt.zero_grad()
        total.backward()
        self.opt.step()
        for key, value in losses.items():
            self.loss_ema[key] = self.ema_alpha * self.loss_ema[key] + (1 - self.ema_alpha) * float(value)
        return total.item()


def train(agent, batches):
    for states, log_rewards in batches:
        agent.train_step(states, log_rewards)
