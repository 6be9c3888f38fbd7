# Source: https://github.com/tommyvsfu1/ADL2019_ReinforcementLearning/blob/0a117a1c9522cfbd8bd08b072c955d77b341ade6/agent_dir/agent_mario.py
# Report: recurrent A2C agent for Super Mario; the repo samples actions in _step under torch.no_grad(); here that context is dropped (one-edit mistake).
# Shape: make_action's values / GRU hiddens now carry graphs; RolloutStorage.insert copy_()s them into its persistent slots (the storage tensors become graph nodes), the stored hidden feeds the next step and reset() carries it across updates.
# Expect: TML001 line 63
from collections import deque

import numpy as np
import torch
import torch.nn as nn
from torch.nn.utils import clip_grad_norm_
from torch.optim import RMSprop


class RolloutStorage:
    def __init__(self, n_steps, n_processes, obs_shape, hidden_size):
        self.obs = torch.zeros(n_steps + 1, n_processes, *obs_shape)
        self.hiddens = torch.zeros(n_steps + 1, n_processes, hidden_size)
        self.rewards = torch.zeros(n_steps, n_processes, 1)
        self.value_preds = torch.zeros(n_steps + 1, n_processes, 1)
        self.actions = torch.zeros(n_steps, n_processes, 1).long()
        self.masks = torch.ones(n_steps + 1, n_processes, 1)
        self.n_steps = n_steps
        self.step = 0

    def to(self, device):
        for name in ("obs", "hiddens", "rewards", "value_preds", "actions", "masks"):
            setattr(self, name, getattr(self, name).to(device))

    def insert(self, obs, hiddens, actions, value_preds, rewards, masks):
        self.obs[self.step + 1].copy_(obs)
        self.hiddens[self.step + 1].copy_(hiddens)
        self.actions[self.step].copy_(actions)
        self.value_preds[self.step].copy_(value_preds)
        self.rewards[self.step].copy_(rewards)
        self.masks[self.step + 1].copy_(masks)
        self.step = (self.step + 1) % self.n_steps

    def reset(self):
        self.obs[0].copy_(self.obs[-1])
        self.hiddens[0].copy_(self.hiddens[-1])
        self.masks[0].copy_(self.masks[-1])


class AgentMario:
    def __init__(self, envs, model, hidden_size=512, update_freq=5, n_processes=16, gamma=0.9):
        self.envs = envs
        self.device = torch.device("cuda:0")
        self.model = model.to(self.device)
        self.hidden_size, self.update_freq, self.n_processes, self.gamma = hidden_size, update_freq, n_processes, gamma
        self.obs_shape = envs.observation_space.shape
        self.rollouts = RolloutStorage(update_freq, n_processes, self.obs_shape, hidden_size)
        self.optimizer = RMSprop(self.model.parameters(), lr=7e-4, eps=1e-5)

    def make_action(self, obs, hiddens, masks):
        return self.model(obs.to(self.device), hiddens.to(self.device), masks.to(self.device))

    def _step(self, obs, hiddens, masks):
        values, action_probs, hiddens_next = self.make_action(obs, hiddens, masks)
        actions = torch.distributions.Categorical(action_probs).sample()
        obs_next, rewards, dones, infos = self.envs.step(actions.cpu().numpy())
        masks_next = torch.from_numpy(1 - np.expand_dims(dones, axis=1))
        rewards = torch.from_numpy(np.expand_dims(rewards, axis=1))
        self.rollouts.insert(torch.from_numpy(obs_next), hiddens_next, actions.unsqueeze(1), values, rewards, masks_next)  # expect: TML001

    def _update(self):
        r = self.rollouts
        R = torch.zeros_like(r.rewards)
        for t in reversed(range(self.update_freq)):
            R[t] = R[t] * self.gamma + r.rewards[t]
        obs_b = r.obs[: self.update_freq].view(-1, *self.obs_shape)
        values, action_probs, _ = self.model(obs_b, r.hiddens[: self.update_freq].view(-1, self.hidden_size),
                                             r.masks[: self.update_freq].view(-1, 1))
        log_act = torch.log(action_probs).gather(1, r.actions.view(-1, 1)).view(self.update_freq, self.n_processes, 1)
        with torch.no_grad():
            next_values, _, _ = self.model(r.obs[1:].view(-1, *self.obs_shape),
                                           r.hiddens[1:].view(-1, self.hidden_size), r.masks[1:].view(-1, 1))
        values = values.view(self.update_freq, self.n_processes, 1)
        target = r.rewards + self.gamma * next_values.view(self.update_freq, self.n_processes, 1)
        value_loss = 0.5 * nn.functional.mse_loss(values, target)
        action_loss = (-log_act * (R - values.detach())).sum()
        loss = action_loss + value_loss
        self.optimizer.zero_grad()
        loss.backward()
        clip_grad_norm_(self.model.parameters(), 0.5)
        self.optimizer.step()
        r.reset()
        return loss.item()

    def train(self, max_steps=1e7):
        running_reward = deque(maxlen=10)
        episode_rewards = torch.zeros(self.n_processes, 1).to(self.device)
        total_steps = 0
        self.rollouts.obs[0].copy_(torch.from_numpy(self.envs.reset()))
        self.rollouts.to(self.device)
        while total_steps < max_steps:
            for step in range(self.update_freq):
                self._step(self.rollouts.obs[step], self.rollouts.hiddens[step], self.rollouts.masks[step])
                episode_rewards += self.rollouts.rewards[step]
                for rew, m in zip(episode_rewards, self.rollouts.masks[step + 1]):
                    if m == 0:
                        running_reward.append(rew.item())
                episode_rewards *= self.rollouts.masks[step + 1]
            loss = self._update()
            total_steps += self.update_freq * self.n_processes
