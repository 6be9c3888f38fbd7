# Source: https://github.com/HiddenBeginner/rl-pytorch-exercise/blob/6d78fbd61408871451fef92206ce7787374d0631/REINFORCE/simulator.py
# Report: REINFORCE on CartPole: a Simulator collects (reward, prob) pairs for one episode and a Trainer turns them into the policy-gradient loss.
# Shape: probs with their graph are kept on purpose, but in a list created per episode and consumed by one backward; the per-step loss terms go into a local list that is stacked and backpropagated; only .item() values reach the long-lived log.
# Expect: near-miss: must be silent
import time

import gym
import torch
import torch.nn as nn
from torch.distributions import Categorical
from torch.optim import Adam


class Policy(nn.Module):
    def __init__(self, dim_state=4, dim_hidden=128, dim_action=2):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim_state, dim_hidden), nn.ReLU(), nn.Linear(dim_hidden, dim_action), nn.Softmax(dim=-1))

    def forward(self, s):
        return self.net(s)


class Simulator:
    def __init__(self, env, policy, device):
        self.env = env
        self.policy = policy
        self.device = device

    def select_action(self, s):
        probs = self.policy(s)
        a = Categorical(probs).sample()
        return a, probs[a]

    def run_episode(self):
        s = self.env.reset()
        done = False
        episode = []
        while not done:
            s = torch.FloatTensor(s).to(self.device)
            a, p = self.select_action(s)
            s, r, done, _ = self.env.step(a.item())
            episode.append((r, p))
        return episode


class Trainer(Simulator):
    def __init__(self, env, policy, device, gamma=0.98, lr=2e-4):
        super().__init__(env, policy, device)
        self.gamma = gamma
        self.optimizer = Adam(self.policy.parameters(), lr=lr)
        self.loss_log = []

    def finish_episode(self, episode):
        self.policy.train()
        self.optimizer.zero_grad()
        R = 0
        terms = []
        for r, p in episode[::-1]:
            R = r + self.gamma * R
            terms.append(R * torch.log(p))
        loss = -1 * torch.mean(torch.stack(terms))
        loss.backward()
        self.optimizer.step()
        return R, loss

    def run(self, n_episodes, log_interval=100):
        start = time.time()
        score, history = 0.0, []
        for i in range(n_episodes):
            episode = self.run_episode()
            R, loss = self.finish_episode(episode)
            score += R
            self.loss_log.append(loss.item())
            if (i + 1) % log_interval == 0:
                history.append(score / log_interval)
                print(f"[Episode {i + 1}] avg reward {score / log_interval:.2f} | {time.time() - start:.1f}s")
                score = 0.0
        return history


if __name__ == "__main__":
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    Trainer(gym.make("CartPole-v0"), Policy().to(dev), dev).run(3000)
