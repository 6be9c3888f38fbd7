# Source: https://github.com/notjedi/tuxkart-ai/blob/50085132734d2626df50dc17ed4614352e8c1def/src/ppo.py
# Report: audit of the first SuperTuxKart PPO: rollout() runs the CNN policy on stacked frames with grad enabled and hands the attached log_prob to PPOBuffer.save() every step (only the value is detached; action and value end up on the host); a later commit (f9542e8) wraps the rollout in torch.no_grad() and stores numpy copies
# Shape: PPOBuffer class whose save() appends each step's tensors to lists kept on self until reset(); PPO.rollout() loops over time steps with a deque of frames and calls self.buffer.save(action.cpu(), reward, value.detach().cpu(), log_prob), so every stored log_prob pins that step's whole forward graph on the GPU
# Expect: TML001 line 63
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
        for i in range(self.max_time_step):
            frames.append(self.env.get_images())
            obs = torch.from_numpy(np.swapaxes(np.array(frames), 0, 1)).float().to(DEVICE)
            dist, value = self.model(obs)
            action = dist.sample()
            log_prob = dist.log_prob(action)
            _, reward, done, info = self.env.step(action.cpu().numpy())
            self.buffer.save(action.cpu(), reward, value.detach().cpu(), log_prob)  # expect: TML001
            if np.any(done):
                print(f"trajectory cut off at {i} time steps")
                break
        frames.append(self.env.get_images())
        obs = torch.from_numpy(np.swapaxes(np.array(frames), 0, 1)).float().to(DEVICE)
        _, next_value = self.model(obs)
        self.buffer.compute_gae(next_value)
