# Source: https://github.com/s-husein/rl_tb3/blob/2da7a7862dae0daef324244cc56802551e14cf36/scripts/utils.py
# Report: audit of a TurtleBot3 RND-PPO repo: RunningMeanStd.update() rebuilds self.mean / self.var from their previous values and the batch moments; the repo detaches its input first (x = x.squeeze().detach()) - this is the variant it avoided, where the predictor's graph-attached per-sample error is fed straight in
# Shape: a curiosity bonus object: the predictor error (needed with grad for the predictor loss) is passed to reward_rms.update(), whose mean / var rebinds keep the autograd chain of every rollout alive; the returned bonus itself is detached
# Expect: TML005 line 26; TML005 line 27
import numpy as np
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class RunningMeanStd:
    """Running mean / variance of the intrinsic reward (parallel-variance update)."""

    def __init__(self, epsilon=1e-3):
        self.eps = epsilon
        self.mean = torch.zeros((), device=device)
        self.var = torch.ones((), device=device)
        self.count = epsilon

    def update(self, x: torch.Tensor):
        x = x.reshape(-1)
        batch_mean, batch_var, batch_count = x.mean(), x.var(), x.shape[0]
        tot_count = self.count + batch_count
        delta = batch_mean - self.mean
        self.mean = self.mean + delta * batch_count / tot_count  # expect: TML005
        self.var = (self.var * self.count + batch_var * batch_count + delta.pow(2) * self.count * batch_count / tot_count) / tot_count  # expect: TML005
        self.count = tot_count

    @property
    def std(self):
        return torch.sqrt(self.var) + self.eps


def mlp(inp, out):
    return nn.Sequential(nn.Linear(inp, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, out))


class RNDBonus:
    """Random-network-distillation curiosity for a TurtleBot3 laser-scan observation."""

    def __init__(self, obs_dim, feat_dim=128, lr=1e-3, predictor_update=0.25):
        self.target = mlp(obs_dim, feat_dim).to(device)
        self.predictor = mlp(obs_dim, feat_dim).to(device)
        for p in self.target.parameters():
            p.requires_grad = False
        self.optim = torch.optim.Adam(self.predictor.parameters(), lr=lr)
        self.reward_rms = RunningMeanStd()
        self.predictor_update = predictor_update

    def bonus_and_update(self, next_obs):
        obs = torch.as_tensor(next_obs, dtype=torch.float32, device=device).clamp(-5.0, 5.0)
        with torch.no_grad():
            target_feat = self.target(obs)
        # the per-sample prediction error is both the predictor loss and the curiosity bonus
        error = (self.predictor(obs) - target_feat).pow(2).sum(-1)
        self.reward_rms.update(error)
        keep = (torch.rand_like(error) < self.predictor_update).float()
        loss = (error * keep).sum() / keep.sum().clamp(min=1.0)
        self.optim.zero_grad()
        loss.backward()
        self.optim.step()
        return (error / self.reward_rms.std).detach().cpu().numpy()


def train(env, agent, rnd, total_steps=500_000, rollout_len=2048, intr_coef=1.0):
    obs = env.reset()
    rollout = {"obs": [], "next_obs": [], "act": [], "ext": [], "done": []}
    for step in range(total_steps):
        action = agent.act(obs)
        next_obs, reward, done, _ = env.step(action)
        for key, val in zip(rollout, (obs, next_obs, action, reward, done)):
            rollout[key].append(val)
        obs = env.reset() if done else next_obs
        if len(rollout["obs"]) == rollout_len:
            intr = rnd.bonus_and_update(np.stack(rollout["next_obs"]))
            agent.update(rollout, intr_rewards=intr_coef * intr)
            rollout = {key: [] for key in rollout}
