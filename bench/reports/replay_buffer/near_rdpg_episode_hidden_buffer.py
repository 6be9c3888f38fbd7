# Source: https://github.com/quantumiracle/Popular-RL-Algorithms/blob/3b814ea159f1fc0b521d6e0e699a7945f770f105/rdpg.py
# Report: audit: the recurrent DPG loop gets (action, hidden_out) from the LSTM policy with grad enabled, carries hidden_out into the next step undetached, and pushes the first step's attached hidden state into a 1e6-episode replay buffer (detached only when sampled)
# Shape: fixed: same buffer and loop, but the acting forward runs under torch.no_grad(), so the carried hidden pair and the one pushed per episode hold no graph
# Expect: near-miss: must be silent
import random

import gym
import numpy as np
import torch
import torch.nn as nn

device = torch.device("cuda")


class EpisodeReplay:
    """Each entry is a whole episode plus the LSTM state that started it."""

    def __init__(self, capacity=1_000_000):
        self.capacity, self.buffer, self.pos = int(capacity), [], 0

    def push(self, init_hidden, episode):
        if len(self.buffer) < self.capacity:
            self.buffer.append(None)
        self.buffer[self.pos] = (init_hidden, episode)
        self.pos = (self.pos + 1) % self.capacity

    def sample(self, n):
        batch = random.sample(self.buffer, n)
        h = torch.cat([b[0][0] for b in batch], dim=1).detach().to(device)
        c = torch.cat([b[0][1] for b in batch], dim=1).detach().to(device)
        return (h, c), [b[1] for b in batch]

    def __len__(self):
        return len(self.buffer)


class LSTMPolicy(nn.Module):
    def __init__(self, obs_dim, act_dim, width=64):
        super().__init__()
        self.inp = nn.Linear(obs_dim + act_dim, width)
        self.lstm = nn.LSTM(width, width)
        self.out = nn.Linear(width, act_dim)

    def forward(self, obs, last_act, hidden):
        x = torch.relu(self.inp(torch.cat([obs, last_act], -1)))
        x, hidden = self.lstm(x, hidden)
        return torch.tanh(self.out(x)), hidden


def to_seq(x):
    return torch.as_tensor(x, dtype=torch.float32, device=device).view(1, 1, -1)


def run(policy: LSTMPolicy, learner, env, episodes=1000, max_steps=100, batch_size=3, width=64):
    replay = EpisodeReplay()
    act_dim = env.action_space.shape[0]
    history = []
    for ep in range(episodes):
        obs, last_act = env.reset(), np.zeros(act_dim)
        hidden = (torch.zeros(1, 1, width, device=device), torch.zeros(1, 1, width, device=device))
        episode = []
        for step in range(max_steps):
            with torch.no_grad():
                mu, hidden = policy(to_seq(obs), to_seq(last_act), hidden)
            if step == 0:
                first_hidden = tuple(t.cpu() for t in hidden)
            action = mu.detach().cpu().numpy().reshape(-1) + 0.1 * np.random.randn(act_dim)
            nxt, reward, done, _ = env.step(action)
            episode.append((obs, action, last_act, reward, nxt, done))
            obs, last_act = nxt, action
            if len(replay) > batch_size:
                learner.update(*replay.sample(batch_size))
        replay.push(first_hidden, episode)
        history.append(sum(t[3] for t in episode))
        print(f"episode {ep} return {history[-1]:.1f} buffer {len(replay)}")
    return history
