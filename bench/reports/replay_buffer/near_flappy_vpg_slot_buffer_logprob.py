# Source: https://github.com/MoonHoplite/RL-for-Flappy-Bird-All-in-One/blob/HEAD/trainer.py
# Report: audit of the Flappy Bird VPG/PPO trainer: sample_trajectory() runs the policy CNN with grad enabled and hands the attached log_prob to Buffer.add() every step, but add() writes it into a preallocated numpy array slot, which copies a Python float, so no graph survives the step
# Shape: VPG class with a sample_trajectory() while-loop calling buffer.add(obs, action, reward, value, log_prob); Buffer keeps np.zeros(size) arrays on self and assigns self.logps[self.cur_idx] = logp (a host scalar copy); the dataset built from them is numpy
# Expect: near-miss: must be silent
import numpy as np
import scipy.signal
import torch
from torch.utils.data import DataLoader, TensorDataset


class Buffer:
    def __init__(self, size, obs_shape, gamma=0.99, lam=0.95):
        self.obs = np.zeros((size, *obs_shape), dtype=np.float32)
        self.actions = np.zeros(size)
        self.rewards = np.zeros(size)
        self.values = np.zeros(size)
        self.logps = np.zeros(size)
        self.advantages = np.zeros(size)
        self.returns = np.zeros(size)
        self.gamma, self.lam, self.max_size = gamma, lam, size
        self.cur_idx, self.start_idx = 0, 0

    def add(self, ob, action, reward, value, logp):
        self.obs[self.cur_idx] = ob
        self.actions[self.cur_idx] = action
        self.rewards[self.cur_idx] = reward
        self.values[self.cur_idx] = value
        self.logps[self.cur_idx] = logp
        self.cur_idx += 1

    @staticmethod
    def discount_cumsum(x, discount):
        return scipy.signal.lfilter([1], [1, float(-discount)], x[::-1], axis=0)[::-1]

    def end_trajectory(self, last_val=0.0):
        rewards = np.append(self.rewards[self.start_idx:self.cur_idx], last_val)
        values = np.append(self.values[self.start_idx:self.cur_idx], last_val)
        deltas = rewards[:-1] + self.gamma * values[1:] - values[:-1]
        self.advantages[self.start_idx:self.cur_idx] = self.discount_cumsum(deltas, self.gamma * self.lam)
        self.returns[self.start_idx:self.cur_idx] = self.discount_cumsum(rewards, self.gamma)[:-1]
        self.start_idx = self.cur_idx

    def get(self):
        idx = self.start_idx
        adv = self.advantages[:idx]
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        arrays = (self.obs[:idx], self.actions[:idx], self.returns[:idx], adv, self.logps[:idx])
        return TensorDataset(*[torch.as_tensor(a, dtype=torch.float32) for a in arrays])


class VPG:
    def __init__(self, env, policy_net, value_net, config):
        self.env, self.config = env, config
        self.device = config.device
        self.policy_net = policy_net.to(self.device)
        self.value_net = value_net.to(self.device)

    def sample_trajectory(self):
        obs = self.env.reset()
        buffer = Buffer(self.config.horizon, self.config.input_shape, self.config.gamma, self.config.lam)
        while True:
            obs_tensor = torch.tensor(obs, dtype=torch.float32).unsqueeze(0).to(self.device)
            dist = torch.distributions.Categorical(self.policy_net(obs_tensor))
            value = self.value_net(obs_tensor).item()
            action = dist.sample()
            log_prob = dist.log_prob(action)
            next_obs, reward, terminal = self.env.step(action.item())
            if buffer.cur_idx >= buffer.max_size:
                return buffer.get()
            buffer.add(obs, action.item(), reward, value, log_prob)
            if terminal:
                buffer.end_trajectory()
                obs = self.env.reset()
            else:
                obs = next_obs

    def collect(self):
        data = self.sample_trajectory()
        return DataLoader(data, batch_size=self.config.batch_size, shuffle=True)
