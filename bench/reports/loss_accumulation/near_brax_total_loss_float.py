# Source: https://github.com/google/brax/pull/152
# Report: The Brax PyTorch training example summed the differentiable loss into a running total every step, keeping each step's autograd graph alive.
# Shape: Fixed form from the PR: the running total receives float(loss), so only a Python number survives each step.
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


class Agent(nn.Module):
    def __init__(self, obs_dim=87, act_dim=8):
        super().__init__()
        self.policy = nn.Sequential(nn.Linear(obs_dim, 256), nn.Tanh(), nn.Linear(256, act_dim))
        self.value = nn.Sequential(nn.Linear(obs_dim, 256), nn.Tanh(), nn.Linear(256, 1))

    def loss(self, obs, returns):
        logits = self.policy(obs)
        v = self.value(obs).squeeze(-1)
        adv = returns - v.detach()
        pg = -(logits.log_softmax(-1).max(-1).values * adv).mean()
        return pg + 0.5 * (returns - v).pow(2).mean()


def train(env_batches, device="cuda", updates=10000):
    agent = Agent().to(device)
    opt = torch.optim.Adam(agent.parameters(), lr=3e-4)
    total_loss = 0.0
    for i in range(updates):
        obs, returns = next(env_batches)
        obs, returns = obs.to(device), returns.to(device)
        opt.zero_grad()
        loss = agent.loss(obs, returns)
        loss.backward()
        opt.step()
        total_loss += float(loss)
        if i % 100 == 99:
            print(f"update {i + 1}: mean loss {total_loss / 100}")
            total_loss = 0.0
    return agent
