# Source: https://github.com/ShangtongZhang/DeepRL/commit/015c7753ea3fd7a6f461c3e22e7fd0d8312a1958
# Report: DeepRL's PPO agent after the commit that moved prediction into ContinuousActorCriticWrapper.predict: values, actions and log_probs are detached before rollout.append
# Shape: network.predict runs the actor and critic forward, but every tensor is detached at the append, so the rollout list keeps only plain tensors; the graph-attached pending_value is appended once after the loop
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn as nn


class GaussianActor(nn.Module):
    def __init__(self, state_dim, action_dim):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(state_dim, 64), nn.Tanh(), nn.Linear(64, action_dim))
        self.log_std = nn.Parameter(torch.zeros(action_dim))

    def forward(self, x):
        mean = torch.tanh(self.body(x))
        return mean, self.log_std.exp().expand_as(mean)


class ContinuousActorCriticWrapper:
    def __init__(self, state_dim, action_dim, lr=3e-4):
        self.actor = GaussianActor(state_dim, action_dim)
        self.critic = nn.Sequential(nn.Linear(state_dim, 64), nn.Tanh(), nn.Linear(64, 1))
        self.opt = torch.optim.Adam(self.parameters(), lr=lr)

    def parameters(self):
        return list(self.actor.parameters()) + list(self.critic.parameters())

    def tensor(self, x):
        return torch.as_tensor(np.asarray(x), dtype=torch.float32)

    def predict(self, states, actions=None):
        states = self.tensor(states)
        mean, std = self.actor(states)
        values = self.critic(states)
        dist = torch.distributions.Normal(mean, std)
        if actions is None:
            actions = dist.sample()
        log_probs = dist.log_prob(actions).sum(dim=1, keepdim=True)
        return actions, log_probs, values


class PPOAgent:
    def __init__(self, task, network, rollout_length=2048, discount=0.99, epochs=10, clip=0.2):
        self.task = task
        self.network = network
        self.rollout_length = rollout_length
        self.discount = discount
        self.epochs = epochs
        self.clip = clip
        self.states = task.reset()

    def iteration(self):
        rollout = []
        states = self.states
        for _ in range(self.rollout_length):
            actions, log_probs, values = self.network.predict(states)
            next_states, rewards, terminals, _ = self.task.step(actions.cpu().numpy())
            rollout.append([states, values.detach(), actions.detach(), log_probs.detach(), rewards, 1 - terminals])
            states = next_states
        self.states = states
        pending_value = self.network.predict(states)[-1]
        rollout.append([states, pending_value, None, None, None, None])

        processed = [None] * (len(rollout) - 1)
        returns = pending_value.data
        for i in reversed(range(len(rollout) - 1)):
            states, value, actions, log_probs, rewards, terminals = rollout[i]
            terminals = self.network.tensor(terminals).unsqueeze(1)
            rewards = self.network.tensor(rewards).unsqueeze(1)
            returns = rewards + self.discount * terminals * returns
            advantages = returns - value.data
            processed[i] = [self.network.tensor(states), actions, log_probs, returns, advantages]

        states, actions, log_probs_old, returns, advantages = map(lambda x: torch.cat(x, dim=0), zip(*processed))
        advantages = (advantages - advantages.mean()) / advantages.std()
        for _ in range(self.epochs):
            _, log_probs, values = self.network.predict(states, actions)
            ratio = (log_probs - log_probs_old).exp()
            obj = torch.min(ratio * advantages, ratio.clamp(1 - self.clip, 1 + self.clip) * advantages)
            loss = -obj.mean() + 0.5 * (returns - values).pow(2).mean()
            self.network.opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(self.network.parameters(), 0.5)
            self.network.opt.step()
