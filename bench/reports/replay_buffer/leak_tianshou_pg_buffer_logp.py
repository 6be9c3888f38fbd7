# Source: https://github.com/thu-ml/tianshou/issues/397
# Report: User asks why PG recomputes log_prob in learn() instead of reusing the collected one (answer: the buffer holds data without gradient); leak = collecting without no_grad and pushing the attached log_prob into the buffer anyway.
# Shape: collect() passes logp=dist.log_prob(act) to buffer.add, which appends it to a list on a persistent object; learn() still recomputes log_prob and only reads the stored one through .item(), so every collected step's policy graph stays alive, unused by any backward, until the buffer is reset after the next update (grows with steps collected per update).
# Expect: TML001 line 81
import numpy as np
import torch
import torch.nn as nn


class Batch(dict):
    __getattr__ = dict.__getitem__
    __setattr__ = dict.__setitem__


class ReplayBuffer:
    def __init__(self, size):
        self.size = size
        self._data = []

    def add(self, batch):
        self._data.append(batch)
        if len(self._data) > self.size:
            self._data.pop(0)

    def sample_all(self):
        keys = self._data[0].keys()
        return Batch({k: [b[k] for b in self._data] for k in keys})

    def reset(self):
        self._data = []


class PGPolicy(nn.Module):
    def __init__(self, obs_dim, n_act, lr=1e-3, gamma=0.99):
        super().__init__()
        self.actor = nn.Sequential(nn.Linear(obs_dim, 128), nn.ReLU(), nn.Linear(128, n_act))
        self.optim = torch.optim.Adam(self.actor.parameters(), lr=lr)
        self.gamma = gamma

    def forward(self, obs):
        logits = self.actor(obs)
        dist = torch.distributions.Categorical(logits=logits)
        act = dist.sample()
        return Batch(logits=logits, act=act, dist=dist)

    def process_fn(self, batch):
        returns, g = [], 0.0
        for r, done in zip(reversed(batch.rew), reversed(batch.done)):
            g = r + self.gamma * g * (1.0 - done)
            returns.append(g)
        batch.returns = torch.tensor(returns[::-1], dtype=torch.float32)
        return batch

    def learn(self, batch, device):
        obs = torch.as_tensor(np.stack(batch.obs), dtype=torch.float32, device=device)
        act = torch.as_tensor(np.array(batch.act), device=device)
        ret = batch.returns.to(device)
        ret = (ret - ret.mean()) / (ret.std() + 1e-8)
        self.optim.zero_grad()
        log_prob = self(obs).dist.log_prob(act)
        loss = -(log_prob * ret).mean()
        loss.backward()
        self.optim.step()
        drift = (torch.cat(batch.logp) - log_prob.detach()).abs().mean().item()
        return {"loss": loss.item(), "logp_drift": drift}


class Collector:
    def __init__(self, policy, env, buffer, device):
        self.policy, self.env, self.buffer, self.device = policy, env, buffer, device

    def collect(self, n_episode=1):
        episodes = 0
        obs = self.env.reset()
        while episodes < n_episode:
            obs_t = torch.as_tensor(obs, dtype=torch.float32, device=self.device).unsqueeze(0)
            result = self.policy(obs_t)
            act = result.act.cpu().numpy()[0]
            logp = result.dist.log_prob(result.act)
            obs_next, rew, done, _ = self.env.step(act)
            self.buffer.add(Batch(obs=obs, act=act, rew=rew, done=float(done), logp=logp))  # expect: TML001
            obs = obs_next
            if done:
                episodes += 1
                obs = self.env.reset()


def onpolicy_trainer(policy, env, device, epochs=100, episode_per_collect=8):
    buffer = ReplayBuffer(20000)
    collector = Collector(policy, env, buffer, device)
    stats = []
    for epoch in range(epochs):
        collector.collect(n_episode=episode_per_collect)
        batch = policy.process_fn(buffer.sample_all())
        stats.append(policy.learn(batch, device))
        buffer.reset()
    return stats


if __name__ == "__main__":
    import gym

    device = torch.device("cuda")
    policy = PGPolicy(4, 2).to(device)
    onpolicy_trainer(policy, gym.make("CartPole-v1"), device)
