# Source: https://github.com/betray12138/Basic-RL-Algorithms/blob/12677dd2162df9cdf1115d720c6692b19e7bcf7a/replay/replay.py
# Report: Rainbow DQN passes the graph-attached TD error straight to the prioritized replay's update_priority_batch(); the helper detaches it before it becomes a priority (priority storage kept on the device here instead of the repo's numpy sum tree).
# Shape: td_error (attached to the critic graph) crosses into a persistent PER object, but the body of update_priority_batch() detaches before writing into self.priorities, so the buffer never holds a graph.
# Expect: near-miss: must be silent
import copy

import numpy as np
import torch
import torch.nn as nn
from torch.nn.utils import clip_grad_norm_


class PER:
    def __init__(self, state_dim, max_size, alpha, beta, device):
        self.max_size, self.alpha, self.beta, self.device = max_size, alpha, beta, device
        self.state = np.zeros((max_size, state_dim), dtype=np.float32)
        self.action = np.zeros((max_size, 1), dtype=np.int64)
        self.reward = np.zeros((max_size, 1), dtype=np.float32)
        self.next_state = np.zeros((max_size, state_dim), dtype=np.float32)
        self.terminal = np.zeros((max_size, 1), dtype=np.float32)
        self.priorities = torch.zeros(max_size, device=device)
        self.count, self.size = 0, 0

    def store(self, s, a, r, s_, dw):
        self.priorities[self.count] = 1.0 if self.size == 0 else self.priorities[: self.size].max()
        self.state[self.count], self.action[self.count], self.reward[self.count] = s, a, r
        self.next_state[self.count], self.terminal[self.count] = s_, dw
        self.count = (self.count + 1) % self.max_size
        self.size = min(self.size + 1, self.max_size)

    @torch.no_grad()
    def sample_to_tensor(self, batch_size):
        probs = self.priorities[: self.size] / self.priorities[: self.size].sum()
        index = torch.multinomial(probs, batch_size, replacement=True)
        weight = (self.size * probs[index]) ** (-self.beta)
        idx = index.cpu().numpy()
        as_t = lambda a: torch.as_tensor(a[idx], device=self.device)
        return as_t(self.state), as_t(self.action), as_t(self.reward), as_t(self.next_state), as_t(self.terminal), index, (weight / weight.max()).unsqueeze(1)

    def update_priority_batch(self, batch_index, td_error):
        self.priorities[batch_index] = (td_error.detach().abs().flatten() + 1e-6) ** self.alpha


class RainbowAgent:
    def __init__(self, state_dim, action_dim, device, gamma=0.99, lr=1e-3, batch_size=64, tau=0.005):
        self.critic = nn.Sequential(nn.Linear(state_dim, 256), nn.ReLU(), nn.Linear(256, action_dim)).to(device)
        self.critic_target = copy.deepcopy(self.critic)
        self.optimizer = torch.optim.Adam(self.critic.parameters(), lr=lr)
        self.replay = PER(state_dim, 100_000, alpha=0.6, beta=0.4, device=device)
        self.gamma, self.batch_size, self.tau = gamma, batch_size, tau

    def update(self):
        s, a, r, s_, done, batch_idx, is_weight = self.replay.sample_to_tensor(self.batch_size)
        with torch.no_grad():
            a_star = self.critic(s_).argmax(dim=1, keepdim=True)
            td_target = r + self.gamma * self.critic_target(s_).gather(1, a_star) * (1.0 - done)
        td_error = td_target - self.critic(s).gather(1, a)
        critic_loss = (is_weight * td_error ** 2).mean()
        self.replay.update_priority_batch(batch_idx, td_error)
        self.optimizer.zero_grad()
        critic_loss.backward()
        clip_grad_norm_(self.critic.parameters(), 10.0)
        self.optimizer.step()
        with torch.no_grad():
            for p, tp in zip(self.critic.parameters(), self.critic_target.parameters()):
                tp.mul_(1 - self.tau).add_(self.tau * p)
        return critic_loss.item()


def train(env, agent, steps=200_000, warmup=1_000):
    state, _ = env.reset()
    losses = []
    for t in range(steps):
        action = env.action_space.sample()
        next_state, reward, term, trunc, _ = env.step(action)
        agent.replay.store(state, action, reward, next_state, float(term))
        state = next_state if not (term or trunc) else env.reset()[0]
        if t > warmup:
            losses.append(agent.update())
    return losses
