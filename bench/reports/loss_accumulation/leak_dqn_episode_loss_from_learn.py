# Source: https://github.com/quantumiracle/Popular-RL-Algorithms/blob/3b814ea159f1fc0b521d6e0e699a7945f770f105/dqn.py
# Report: audit: the DQN rollout sums `epi_loss += loss` over every step of an episode; the repository is safe only because learn() returns loss.item(); the variant it avoided returns the Huber loss tensor, so the running sum chains every step's loss node
# Shape: learn() on the agent returns the loss tensor itself and the episode loop adds it into an outliving scalar used for the log line
# Expect: TML001 line 73
import random
from collections import deque, namedtuple

import gym
import torch
import torch.nn as nn
import torch.nn.functional as F

Transition = namedtuple("Transition", "state next_state action reward terminal")
device = torch.device("cuda")


class QNetwork(nn.Module):
    def __init__(self, obs_dim, n_actions):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, 128), nn.ReLU(), nn.Linear(128, n_actions))

    def forward(self, x):
        return self.body(x)


class DQNAgent:
    def __init__(self, obs_dim, n_actions, gamma=0.99, lr=1e-3, sync_every=200):
        self.q = QNetwork(obs_dim, n_actions).to(device)
        self.q_target = QNetwork(obs_dim, n_actions).to(device)
        self.q_target.load_state_dict(self.q.state_dict())
        self.optimizer = torch.optim.Adam(self.q.parameters(), lr=lr)
        self.gamma, self.sync_every, self.updates = gamma, sync_every, 0
        self.n_actions, self.epsilon = n_actions, 1.0

    @torch.no_grad()
    def act(self, obs):
        if random.random() < self.epsilon:
            return random.randrange(self.n_actions)
        return self.q(torch.as_tensor(obs, dtype=torch.float32, device=device)[None]).argmax(1).item()

    def learn(self, batch):
        b = Transition(*zip(*batch))
        s = torch.tensor(b.state, dtype=torch.float32, device=device)
        s2 = torch.tensor(b.next_state, dtype=torch.float32, device=device)
        a = torch.tensor(b.action, device=device).unsqueeze(1)
        r = torch.tensor(b.reward, dtype=torch.float32, device=device).unsqueeze(1)
        done = torch.tensor(b.terminal, dtype=torch.float32, device=device).unsqueeze(1)
        q_sa = self.q(s).gather(1, a)
        next_q = self.q_target(s2).detach().max(1, keepdim=True)[0]
        loss = F.smooth_l1_loss(q_sa, r + self.gamma * (1 - done) * next_q)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.updates += 1
        if self.updates % self.sync_every == 0:
            self.q_target.load_state_dict(self.q.state_dict())
        return loss


def rollout(env, agent, episodes=500, batch_size=64, warmup=1000, capacity=50_000):
    memory, total_steps = deque(maxlen=capacity), 0
    for episode in range(episodes):
        obs, ep_return, epi_loss = env.reset(), 0.0, 0
        for step in range(500):
            action = agent.act(obs)
            nxt, reward, done, _ = env.step(action)
            memory.append((obs, nxt, action, reward, float(done)))
            total_steps += 1
            ep_return += reward
            agent.epsilon = max(0.05, agent.epsilon * 0.999)
            if total_steps > warmup:
                loss = agent.learn(random.sample(memory, batch_size))
                epi_loss += loss  # expect: TML001
            if done:
                break
            obs = nxt
        print(f"ep {episode} | return {ep_return:.0f} | steps {step} | ep_loss {float(epi_loss):.4f}")


if __name__ == "__main__":
    env = gym.make("CartPole-v1")
    rollout(env, DQNAgent(env.observation_space.shape[0], env.action_space.n))
