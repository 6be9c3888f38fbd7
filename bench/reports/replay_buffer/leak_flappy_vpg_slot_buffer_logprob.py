# Source: https://github.com/MoonHoplite/RL-for-Flappy-Bird-All-in-One/blob/HEAD/trainer.py
# Report: variant the Flappy Bird VPG/PPO trainer avoided: its Buffer writes each step's attached log_prob into a numpy slot (a float copy); moved to preallocated CUDA tensors, the slot write records a CopySlices node, so the buffer tensor chains every step's policy graph until the rollout ends
# Shape: same VPG.sample_trajectory() while-loop calling buffer.add(obs, action, reward, value, log_prob); Buffer now keeps torch.zeros(size, device=...) tensors on self and does self.logps[self.cur_idx] = logp, so self.logps becomes graph-attached and pins all forwards of the rollout
# Expect: TML001 line 65
import torch
from torch.utils.data import DataLoader, TensorDataset


class Buffer:
    def __init__(self, size, obs_shape, gamma=0.99, lam=0.95, device="cuda"):
        self.obs = torch.zeros((size, *obs_shape), device=device)
        self.actions = torch.zeros(size, device=device)
        self.rewards = torch.zeros(size, device=device)
        self.values = torch.zeros(size, device=device)
        self.logps = torch.zeros(size, device=device)
        self.advantages = torch.zeros(size, device=device)
        self.returns = torch.zeros(size, device=device)
        self.gamma, self.lam, self.max_size = gamma, lam, size
        self.cur_idx, self.start_idx = 0, 0

    def add(self, ob, action, reward, value, logp):
        self.obs[self.cur_idx] = torch.as_tensor(ob, device=self.obs.device)
        self.actions[self.cur_idx] = action
        self.rewards[self.cur_idx] = reward
        self.values[self.cur_idx] = value
        self.logps[self.cur_idx] = logp
        self.cur_idx += 1

    def end_trajectory(self, last_val=0.0):
        s, e = self.start_idx, self.cur_idx
        gae, ret, nxt_v = 0.0, last_val, last_val
        for t in reversed(range(s, e)):
            delta = self.rewards[t] + self.gamma * nxt_v - self.values[t]
            gae = delta + self.gamma * self.lam * gae
            ret = self.rewards[t] + self.gamma * ret
            self.advantages[t], self.returns[t], nxt_v = gae, ret, self.values[t]
        self.start_idx = self.cur_idx

    def get(self):
        idx = self.start_idx
        adv = self.advantages[:idx]
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        return TensorDataset(self.obs[:idx], self.actions[:idx], self.returns[:idx], adv, self.logps[:idx])


class VPG:
    def __init__(self, env, policy_net, value_net, config):
        self.env, self.config = env, config
        self.device = config.device
        self.policy_net = policy_net.to(self.device)
        self.value_net = value_net.to(self.device)

    def sample_trajectory(self):
        obs = self.env.reset()
        buffer = Buffer(self.config.horizon, self.config.input_shape, self.config.gamma, self.config.lam, self.device)
        while True:
            obs_tensor = torch.tensor(obs, dtype=torch.float32).unsqueeze(0).to(self.device)
            dist = torch.distributions.Categorical(self.policy_net(obs_tensor))
            value = self.value_net(obs_tensor).item()
            action = dist.sample()
            log_prob = dist.log_prob(action)
            next_obs, reward, terminal = self.env.step(action.item())
            if buffer.cur_idx >= buffer.max_size:
                return buffer.get()
            buffer.add(obs, action.item(), reward, value, log_prob)  # expect: TML001
            if terminal:
                buffer.end_trajectory()
                obs = self.env.reset()
            else:
                obs = next_obs

    def collect(self):
        data = self.sample_trajectory()
        return DataLoader(data, batch_size=self.config.batch_size, shuffle=True)
