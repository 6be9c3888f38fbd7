# Source: https://github.com/surabhisnath/Hockey_DQN/blob/f62eacf8aff7c9dad9cfbaba6ea73c793aa38542/scripts/runner.py
# Report: audit of the hockey DQN+RND runner: the intrinsic reward is the predictor's MSE (graph-attached); the repository takes .detach().item() before mixing it into the stored reward, so the replay memory only ever holds Python floats
# Shape: as the repository does it: RND.score wraps the attached MSE and returns .detach().item(); the runner stores reward + beta * float and sums floats
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def mlp(inp, out, hidden=128):
    return nn.Sequential(nn.Linear(inp, hidden), nn.ReLU(), nn.Linear(hidden, out))


class RND:
    def __init__(self, obs_dim, emb_dim=32, lr=1e-4):
        self.target = mlp(obs_dim, emb_dim).to(device)
        self.predictor = mlp(obs_dim, emb_dim).to(device)
        self.target.requires_grad_(False)
        self.optimizer = torch.optim.Adam(self.predictor.parameters(), lr=lr)

    def bonus(self, obs):
        with torch.no_grad():
            goal = self.target(obs)
        return F.mse_loss(self.predictor(obs), goal)

    def score(self, obs):
        return self.bonus(obs).detach().item()

    def update(self, obs_batch):
        loss = self.bonus(obs_batch)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()


class TransitionMemory:
    def __init__(self, capacity=100_000):
        self.capacity = capacity
        self.slots = []
        self.cursor = 0

    def add(self, transition):
        if len(self.slots) < self.capacity:
            self.slots.append(transition)
        else:
            self.slots[self.cursor] = transition
        self.cursor = (self.cursor + 1) % self.capacity

    def sample(self, batch_size):
        idx = np.random.randint(len(self.slots), size=batch_size)
        return [self.slots[i] for i in idx]


class Agent:
    def __init__(self, q_learner, obs_dim):
        self.q = q_learner
        self.rnd = RND(obs_dim)
        self.memory = TransitionMemory()

    def store_transition(self, transition):
        self.memory.add(transition)


def run_episodes(env, agent, n_episodes=5000, max_steps=250, beta=0.5, eps=0.9):
    episode_returns, episode_bonus = [], []
    for episode in range(n_episodes):
        ob, _ = env.reset()
        total_reward, total_bonus = 0.0, 0.0
        for t in range(max_steps):
            action = agent.q.act(ob, eps)
            ob_new, reward, done, _, info = env.step(action)
            total_reward += reward
            novelty = agent.rnd.score(torch.as_tensor(ob, dtype=torch.float32, device=device))
            agent.store_transition((ob, action, reward + beta * novelty, ob_new, done))
            total_bonus += novelty
            ob = ob_new
            if done:
                break
        episode_returns.append(total_reward)
        episode_bonus.append(total_bonus)
        agent.q.fit(agent.memory, agent.rnd)
        eps = max(0.05, eps * 0.995)
    return episode_returns, episode_bonus
