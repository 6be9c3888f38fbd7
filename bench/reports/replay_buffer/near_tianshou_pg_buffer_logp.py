# Source: https://github.com/thu-ml/tianshou/issues/397
# Report: User asks why the PG policy recomputes log_prob in learn() instead of reusing the one from collection; the answer: data is stored in the replay buffer without gradient, so learn() must re-run forward.
# Shape: Collector runs the policy under torch.no_grad() and stores act (plus obs/rew) in the buffer; learn() rebuilds dist and log_prob from the sampled batch, so nothing graph-attached outlives a step.
# Expect: near-miss: must be silent
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
        return {"loss": loss.item()}


class Collector:
    def __init__(self, policy, env, buffer, device):
        self.policy, self.env, self.buffer, self.device = policy, env, buffer, device

    def collect(self, n_episode=1):
        episodes = 0
        obs = self.env.reset()
        while episodes < n_episode:
            obs_t = torch.as_tensor(obs, dtype=torch.float32, device=self.device).unsqueeze(0)
            with torch.no_grad():
                result = self.policy(obs_t)
            act = result.act.cpu().numpy()[0]
            obs_next, rew, done, _ = self.env.step(act)
            self.buffer.add(Batch(obs=obs, act=act, rew=rew, done=float(done)))
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
