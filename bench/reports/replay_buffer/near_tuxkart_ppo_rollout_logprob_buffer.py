# Source: https://github.com/notjedi/tuxkart-ai/blob/50085132734d2626df50dc17ed4614352e8c1def/src/ppo.py
# Report: audit of SuperTuxKart PPO after commit f9542e8 (fix of the first version's rollout): the whole rollout, including the bootstrap value, runs under torch.no_grad(), so the log_prob and value handed to PPOBuffer.save() every step carry no graph and are moved off the GPU first
# Shape: same PPOBuffer with list-backed save() kept on self until reset(); PPO.rollout() now opens `with torch.no_grad():` around the time-step loop and the final value call, and hands CPU copies (as the fix stores numpy) of action, value and log_prob to self.buffer.save(...)
# Expect: near-miss: must be silent
from collections import deque

import numpy as np
import torch
from torch import optim

DEVICE = torch.device("cuda")
NUM_FRAMES = 4


class PPOBuffer:
    """Saves (a, r, v, log pi) for each step taken in the vectorised env."""

    def __init__(self, gamma=0.99, lam=0.95):
        self.gamma, self.lam = gamma, lam
        self.reset()

    def reset(self):
        self.actions, self.rewards, self.values, self.log_probs = [], [], [], []

    def save(self, act, reward, value, log_prob):
        self.actions.append(act)
        self.rewards.append(torch.as_tensor(reward, dtype=torch.float32))
        self.values.append(value)
        self.log_probs.append(log_prob)

    def compute_gae(self, next_value):
        values = torch.stack(self.values + [next_value.detach()]).squeeze(-1).cpu()
        rewards = torch.stack(self.rewards)
        adv, gae = torch.zeros_like(rewards), 0.0
        for t in reversed(range(len(rewards))):
            delta = rewards[t] + self.gamma * values[t + 1] - values[t]
            gae = delta + self.gamma * self.lam * gae
            adv[t] = gae
        self.advantage, self.returns = adv, adv + values[:-1]


class PPO:
    EPOCHS = 3
    CLIP_RATIO = 0.2

    def __init__(self, env, model, max_time_step):
        self.env = env
        self.model = model
        self.buffer = PPOBuffer()
        self.max_time_step = max_time_step
        self.opt = optim.Adam(self.model.parameters(), lr=1e-3)

    def rollout(self):
        first = self.env.get_images()
        frames = deque([np.zeros_like(first) for _ in range(NUM_FRAMES)], maxlen=NUM_FRAMES)
        with torch.no_grad():
            for i in range(self.max_time_step):
                frames.append(self.env.get_images())
                obs = torch.from_numpy(np.swapaxes(np.array(frames), 0, 1)).float().to(DEVICE)
                dist, value = self.model(obs)
                action = dist.sample()
                log_prob = dist.log_prob(action)
                _, reward, done, info = self.env.step(action.cpu().numpy())
                self.buffer.save(action.cpu(), reward, value.cpu(), log_prob.cpu())
                if np.any(done):
                    print(f"trajectory cut off at {i} time steps")
                    break
            frames.append(self.env.get_images())
            obs = torch.from_numpy(np.swapaxes(np.array(frames), 0, 1)).float().to(DEVICE)
            _, next_value = self.model(obs)
            self.buffer.compute_gae(next_value)
