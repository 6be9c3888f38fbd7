# Source: https://github.com/ghj0504520/RL-LIB/blob/a9dccb585860f5e59f25175f831da70b7464e8f2/DRQN/drqn.py
# Report: DRQN agent on partially observed CartPole carries the LSTM (h, c) from step to step inside an episode; the repository selects actions under torch.no_grad().
# Shape: h, c are loop-carried through agent.select(); they come from a forward run under no_grad, so no graph links one step to the next; the loss is reduced with .item() before it is summed.
# Expect: near-miss: must be silent
import random

import gym
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class RecurrentQ(nn.Module):
    def __init__(self, n_in, n_act, hid=64):
        super().__init__()
        self.hid = hid
        self.enc = nn.Sequential(nn.Linear(n_in, hid), nn.ReLU())
        self.lstm = nn.LSTM(hid, hid, batch_first=True)
        self.head = nn.Linear(hid, n_act)

    def zero_state(self, bsz=1):
        return torch.zeros(1, bsz, self.hid, device=dev), torch.zeros(1, bsz, self.hid, device=dev)

    def forward(self, obs, h, c):
        z, (h2, c2) = self.lstm(self.enc(obs), (h, c))
        return self.head(z), h2, c2


class DRQNAgent:
    def __init__(self, n_in, n_act, lr=1e-3):
        self.q = RecurrentQ(n_in, n_act).to(dev)
        self.opt = optim.Adam(self.q.parameters(), lr=lr)
        self.n_act = n_act

    def select(self, obs, h, c, eps):
        with torch.no_grad():
            q, h_next, c_next = self.q(obs, h, c)
        if random.random() >= eps:
            act = q.max(2)[1].item()
        else:
            act = random.randrange(self.n_act)
        return act, h_next, c_next

    def learn(self, obs_seq, act_seq, target_seq):
        h0, c0 = self.q.zero_state(obs_seq.size(0))
        q_all, _, _ = self.q(obs_seq, h0, c0)
        q_taken = q_all.gather(2, act_seq.unsqueeze(-1)).squeeze(-1)
        loss = F.mse_loss(q_taken, target_seq)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss


def run(episodes=2000):
    env = gym.make("CartPole-v1")
    agent = DRQNAgent(2, env.action_space.n)
    history = []
    for ep in range(episodes):
        obs, _ = env.reset()
        obs_t = torch.tensor([obs[::2]], dtype=torch.float32, device=dev)
        h, c = agent.q.zero_state()
        done, ep_loss, steps = False, 0.0, 0
        while not done:
            steps += 1
            action, h, c = agent.select(obs_t.unsqueeze(0), h, c, max(0.01, 1.0 - ep / 500))
            nxt, reward, term, trunc, _ = env.step(action)
            done = term or trunc
            obs_t = torch.tensor([nxt[::2]], dtype=torch.float32, device=dev)
            if ep > 100:
                seq = obs_t.unsqueeze(0).repeat(8, 4, 1)
                acts = torch.zeros(8, 4, dtype=torch.long, device=dev)
                tgt = torch.full((8, 4), float(reward), device=dev)
                loss = agent.learn(seq, acts, tgt)
                ep_loss += loss.item()
        history.append(ep_loss / steps)
    return history


if __name__ == "__main__":
    run()
