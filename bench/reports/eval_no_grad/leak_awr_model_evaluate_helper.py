# Source: https://github.com/lukDev/awr_pytorch/blob/007df476d8575dd58cce50121b41ee017198fb8f/src/models/model.py
# Report: audit of an AWR (advantage-weighted regression) agent: the shared Model base class gives actor and critic an evaluate() that switches to eval mode, runs forward under torch.no_grad() and switches back; this is the variant it avoided, the same evaluate() without no_grad, called for every environment step of a rollout and for every critic batch inside the actor update
# Shape: Model.evaluate(x) wraps self.forward between self.eval()/self.train(); AWRAgent-style helpers call actor.evaluate(state) per env step and critic.evaluate(ins).clone().detach() per actor step, so each call records a graph nobody backpropagates
# Expect: TML003 line 15
import random

import torch
import torch.nn as nn
from torch.distributions import Normal


class Model(nn.Module):
    def evaluate(self, x):
        self.eval()
        y = self.forward(x)  # expect: TML003
        self.train()
        return y


class Actor(Model):
    def __init__(self, state_dim, action_dim, hidden=256):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(state_dim, hidden), nn.ReLU(), nn.Linear(hidden, action_dim))
        self.log_std = nn.Parameter(torch.zeros(action_dim))

    def forward(self, state):
        normal = Normal(self.body(state), self.log_std.exp())
        return normal, normal.sample()


class Critic(Model):
    def __init__(self, state_dim, hidden=256):
        super().__init__()
        self.fc = nn.Sequential(nn.Linear(state_dim, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, state):
        return self.fc(state)


def sample_from_env(actor, env, device):
    samples, state, done = [], torch.as_tensor(env.reset(), dtype=torch.float32), False
    while not done:
        _, action = actor.evaluate(state.to(device))
        next_state, reward, done, _ = env.step(action.cpu().numpy())
        samples.append((state, action.detach().cpu(), float(reward)))
        state = torch.as_tensor(next_state, dtype=torch.float32)
    return samples


def actor_update(actor, critic, actor_opt, replay, returns, beta=0.05, batch_size=256, steps=100, device="cuda"):
    total = 0.0
    for _ in range(steps):
        idx = random.choices(range(len(replay)), k=batch_size)
        states = torch.stack([replay[i][0] for i in idx]).to(device)
        actions = torch.stack([replay[i][1] for i in idx]).to(device)
        rets = torch.tensor([returns[i] for i in idx], device=device)
        values = critic.evaluate(states).clone().detach().squeeze(1)
        weights = torch.clamp(torch.exp((rets - values) / beta), max=20.0)
        normal, _ = actor(states)
        loss = -(normal.log_prob(actions).sum(1) * weights).mean()
        actor_opt.zero_grad()
        loss.backward()
        actor_opt.step()
        total += loss.item()
    return total / steps


def train(actor, critic, env, actor_opt, epochs=100, device="cuda"):
    replay, returns = [], []
    for epoch in range(epochs):
        samples = sample_from_env(actor, env, device)
        replay.extend(samples)
        returns.extend(sum(r for _, _, r in samples[i:]) for i in range(len(samples)))
        print(epoch, actor_update(actor, critic, actor_opt, replay, returns, device=device))
