# Source: https://github.com/seungeunrho/minimalRL/blob/46f9b3269cb152d606a51aaad81f66a852072871/ppo-lstm.py
# Report: audit: the PPO-LSTM rollout calls model.pi(s, hidden) with grad enabled and feeds the returned LSTM state back in every step without detaching, so each env step's graph links to all earlier ones until the episode ends (train_net only uses a detached copy)
# Shape: fixed: the same rollout loop still rebinds `hidden` from the policy call on itself, but the acting step runs under torch.no_grad(), so no graph is carried between env steps
# Expect: near-miss: must be silent
import gym
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical

GAMMA, LMBDA, CLIP, EPOCHS, HORIZON = 0.98, 0.95, 0.1, 2, 20


class RecurrentPPO(nn.Module):
    def __init__(self, obs_dim=4, n_actions=2, width=32):
        super().__init__()
        self.encoder = nn.Linear(obs_dim, 64)
        self.lstm = nn.LSTM(64, width)
        self.policy_head = nn.Linear(width, n_actions)
        self.value_head = nn.Linear(width, 1)
        self.rollout = []
        self.optimizer = torch.optim.Adam(self.parameters(), lr=5e-4)

    def _core(self, obs, hidden):
        x = F.relu(self.encoder(obs)).view(-1, 1, 64)
        return self.lstm(x, hidden)

    def pi(self, obs, hidden):
        x, new_hidden = self._core(obs, hidden)
        return F.softmax(self.policy_head(x), dim=2), new_hidden

    def v(self, obs, hidden):
        x, _ = self._core(obs, hidden)
        return self.value_head(x)

    def update(self, start_hidden):
        obs, act, rew, nxt, old_p, mask = (torch.tensor(c, dtype=torch.float) for c in zip(*self.rollout))
        act = act.long().unsqueeze(1)
        self.rollout = []
        for _ in range(EPOCHS):
            target = rew.unsqueeze(1) + GAMMA * self.v(nxt, start_hidden).squeeze(1) * mask.unsqueeze(1)
            v_s = self.v(obs, start_hidden).squeeze(1)
            delta = (target - v_s).detach().squeeze(1).tolist()
            adv, running = [], 0.0
            for d in reversed(delta):
                running = GAMMA * LMBDA * running + d
                adv.insert(0, [running])
            adv = torch.tensor(adv)
            probs, _ = self.pi(obs, start_hidden)
            ratio = torch.exp(torch.log(probs.squeeze(1).gather(1, act)) - torch.log(old_p.unsqueeze(1)))
            clipped = torch.clamp(ratio, 1 - CLIP, 1 + CLIP) * adv
            loss = -torch.min(ratio * adv, clipped) + F.smooth_l1_loss(v_s, target.detach())
            self.optimizer.zero_grad()
            loss.mean().backward()
            self.optimizer.step()


def main(episodes=5000):
    env = gym.make("CartPole-v1")
    agent = RecurrentPPO()
    for episode in range(episodes):
        hidden = (torch.zeros(1, 1, 32), torch.zeros(1, 1, 32))
        obs, done = env.reset(), False
        while not done:
            chunk_start = tuple(h.detach() for h in hidden)
            for _ in range(HORIZON):
                with torch.no_grad():
                    probs, hidden = agent.pi(torch.from_numpy(obs).float(), hidden)
                probs = probs.view(-1)
                action = Categorical(probs).sample().item()
                nxt, reward, done, _ = env.step(action)
                agent.rollout.append((obs, action, reward / 100.0, nxt, probs[action].item(), 0.0 if done else 1.0))
                obs = nxt
                if done:
                    break
            agent.update(chunk_start)
    env.close()


if __name__ == "__main__":
    main()
