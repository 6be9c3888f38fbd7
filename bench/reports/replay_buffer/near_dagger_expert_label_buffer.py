# Source: https://github.com/liyc-ai/RL-pytorch/blob/166225b8842b82f87eca763e77dfc535409f337c/algo/imitation/dagger.py
# Report: near-miss from the DAgger rollout as the repo writes it: the expert is queried with keep_grad=False, so its action and log-prob are computed with grad disabled before the imitation buffer copies them in
# Shape: same keep_grad=True default on the agent call, but both calls in the rollout pass keep_grad=False; the label and log-prob that travel into ImitationBuffer.add carry no graph
# Expect: near-miss: must be silent
import gym
import numpy as np
import torch
import torch.nn as nn


class ImitationBuffer:
    def __init__(self, state_dim, action_dim, device, size=1_000_000):
        self.device, self.size, self.ptr, self.count = device, size, 0, 0
        self.states = torch.zeros((size, state_dim), device=device)
        self.actions = torch.zeros((size, action_dim), device=device)
        self.log_pis = torch.zeros((size, 1), device=device)

    def add(self, state, action, log_pi):
        self.states[self.ptr] = torch.as_tensor(state, dtype=torch.float32, device=self.device)
        self.actions[self.ptr] = action.to(self.device)
        self.log_pis[self.ptr] = log_pi
        self.ptr = (self.ptr + 1) % self.size
        self.count = min(self.count + 1, self.size)

    def sample(self, batch_size):
        idx = np.random.randint(0, self.count, size=batch_size)
        return self.states[idx], self.actions[idx]

    def expert_confidence(self):
        return self.log_pis[: self.count].mean().item()


class GaussianAgent:
    def __init__(self, state_dim, action_dim, device="cuda", hidden=256):
        self.device = device
        self.actor = nn.Sequential(
            nn.Linear(state_dim, hidden), nn.ReLU(),
            nn.Linear(hidden, hidden), nn.ReLU(),
            nn.Linear(hidden, 2 * action_dim),
        ).to(device)
        self.optim = torch.optim.Adam(self.actor.parameters(), lr=3e-4)
        self.buffer = ImitationBuffer(state_dim, action_dim, device)

    def __call__(self, state, training=False, keep_grad=True):
        state = torch.as_tensor(state, dtype=torch.float32, device=self.device).reshape(1, -1)
        with torch.set_grad_enabled(keep_grad):
            mean, log_std = self.actor(state).chunk(2, dim=-1)
            dist = torch.distributions.Normal(mean, log_std.exp())
            action = dist.rsample() if training else mean
            log_pi = dist.log_prob(action).sum(-1, keepdim=True)
        return torch.tanh(action).squeeze(0), log_pi.squeeze(0)

    def learn(self, batch_size=256):
        states, actions = self.buffer.sample(batch_size)
        mean, _ = self.actor(states).chunk(2, dim=-1)
        loss = nn.functional.mse_loss(torch.tanh(mean), actions)
        self.optim.zero_grad()
        loss.backward()
        self.optim.step()
        return {"loss": loss.item()}


class DAggerAgent(GaussianAgent):
    def __init__(self, env_name, device="cuda", rollout_steps=1000):
        self.env = gym.make(env_name)
        super().__init__(self.env.observation_space.shape[0], self.env.action_space.shape[0], device)
        self.rollout_steps = rollout_steps

    def rollout(self, expert):
        done = True
        for _ in range(self.rollout_steps):
            if done:
                next_state = self.env.reset()
            state = next_state
            action, _ = self(state, training=True, keep_grad=False)
            next_state, _, done, _ = self.env.step(action.cpu().numpy())
            expert_action, exp_log_pi = expert(state, training=False, keep_grad=False)
            self.buffer.add(state, expert_action.cpu(), exp_log_pi)

    def train(self, expert, iterations=100, updates_per_rollout=500):
        for it in range(iterations):
            self.rollout(expert)
            stats = [self.learn()["loss"] for _ in range(updates_per_rollout)]
            print(f"iter {it}: bc {np.mean(stats):.4f}, expert logp {self.buffer.expert_confidence():.3f}")
