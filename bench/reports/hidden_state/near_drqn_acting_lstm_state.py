# Source: https://github.com/keep9oing/DRQN-Pytorch-CartPole-v1/blob/17d580d472a59302075a8e5cb97d99133c7473d8/DRQN.py
# Report: audit: the DRQN acting loop calls Q.sample_action(obs, h, c, eps) with grad enabled and feeds the returned LSTM (h, c) back in at the next env step, so every step's recurrent graph is chained to the previous one for the whole episode (up to max_step steps) while train() runs in between
# Shape: fixed: the acting call runs inside torch.no_grad(), so the (h, c) carried from step to step hold no graph; the TD update outside it still trains with grad
# Expect: near-miss: must be silent
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class RecurrentQNet(nn.Module):
    def __init__(self, obs_dim, n_actions, hidden=64):
        super().__init__()
        self.hidden = hidden
        self.n_actions = n_actions
        self.inp = nn.Linear(obs_dim, hidden)
        self.lstm = nn.LSTM(hidden, hidden, batch_first=True)
        self.out = nn.Linear(hidden, n_actions)

    def forward(self, x, h, c):
        x, (h, c) = self.lstm(F.relu(self.inp(x)), (h, c))
        return self.out(x), h, c

    def sample_action(self, obs, h, c, epsilon):
        q, h, c = self.forward(obs, h, c)
        if random.random() < epsilon:
            return random.randrange(self.n_actions), h, c
        return int(q.argmax().item()), h, c

    def init_hidden(self, batch_size=1):
        return torch.zeros(1, batch_size, self.hidden), torch.zeros(1, batch_size, self.hidden)


def td_update(q_net, target_net, batch, optimizer, gamma=0.99):
    obs, acts, rews, next_obs, masks = batch
    h, c = target_net.init_hidden(obs.size(0))
    q_next, _, _ = target_net(next_obs, h.to(obs.device), c.to(obs.device))
    target = rews + gamma * q_next.max(2, keepdim=True)[0].detach() * masks
    h, c = q_net.init_hidden(obs.size(0))
    q, _, _ = q_net(obs, h.to(obs.device), c.to(obs.device))
    loss = F.smooth_l1_loss(q.gather(2, acts), target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


def run(env, q_net, target_net, memory, optimizer, device, episodes=650, max_step=2000,
        eps=0.1, eps_end=0.001, eps_decay=0.995, warmup_episodes=20, writer=None):
    for episode in range(episodes):
        obs = env.reset()[::2]
        h, c = q_net.init_hidden()
        episode_record, score = [], 0.0
        for t in range(max_step):
            x = torch.from_numpy(np.asarray(obs)).float().to(device).view(1, 1, -1)
            with torch.no_grad():
                action, h, c = q_net.sample_action(x, h.to(device), c.to(device), eps)
            next_state, reward, done, _ = env.step(action)
            next_obs = next_state[::2]
            episode_record.append((obs, action, reward / 100.0, next_obs, 0.0 if done else 1.0))
            obs = next_obs
            score += reward
            if len(memory) >= warmup_episodes:
                td_update(q_net, target_net, memory.sample(device), optimizer)
            if done:
                break
        memory.put(episode_record)
        eps = max(eps_end, eps * eps_decay)
        if writer is not None:
            writer.add_scalar("reward/episode", score, episode)
    return q_net
