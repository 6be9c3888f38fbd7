# Source: https://github.com/NVlabs/GR00T-WholeBodyControl/pull/194
# Report: PR "Fix/ppo gc oom tradeoff": per-iteration gc.collect() + torch.cuda.empty_cache() at the end of the PPO main loop cost ~8% wall time
# Shape: the PPO trainer's outer iteration loop ends every iteration with empty_cache(), forcing a sync and fresh cudaMallocs next rollout
# Expect: TML009 line 122
import gc

import torch
from torch import nn


class MotionLib:
    def __init__(self, motion_files, device):
        self.motion_files = motion_files
        self.device = device
        self.cache = None

    def load_motions(self, seed):
        self.cache = None
        gc.collect()
        torch.cuda.empty_cache()
        g = torch.Generator().manual_seed(seed)
        idx = torch.randint(len(self.motion_files), (64,), generator=g)
        self.cache = torch.randn(64, 120, 29, device=self.device) + idx[:, None, None].to(self.device)


class RolloutStorage:
    """Preallocated rollout buffers, written in place each step."""

    def __init__(self, num_steps, num_envs, obs_dim, act_dim, device):
        self.obs = torch.zeros(num_steps, num_envs, obs_dim, device=device)
        self.actions = torch.zeros(num_steps, num_envs, act_dim, device=device)
        self.logprobs = torch.zeros(num_steps, num_envs, device=device)
        self.values = torch.zeros(num_steps, num_envs, device=device)
        self.rewards = torch.zeros(num_steps, num_envs, device=device)
        self.dones = torch.zeros(num_steps, num_envs, device=device)
        self.returns = torch.zeros(num_steps, num_envs, device=device)
        self.step = 0

    def clear(self):
        self.step = 0

    def add(self, obs, actions, logprobs, values, rewards, dones):
        self.obs[self.step].copy_(obs)
        self.actions[self.step].copy_(actions)
        self.logprobs[self.step].copy_(logprobs)
        self.values[self.step].copy_(values.squeeze(-1))
        self.rewards[self.step].copy_(rewards)
        self.dones[self.step].copy_(dones)
        self.step += 1

    @torch.no_grad()
    def compute_returns(self, gamma):
        running = torch.zeros_like(self.rewards[0])
        for t in reversed(range(self.step)):
            running = self.rewards[t] + gamma * running * (1.0 - self.dones[t])
            self.returns[t] = running

    def mini_batches(self, num_mini_batches):
        n = self.step * self.obs.shape[1]
        perm = torch.randperm(n, device=self.obs.device)
        adv = (self.returns - self.values).flatten()
        for idx in perm.chunk(num_mini_batches):
            yield (self.obs.flatten(0, 1)[idx], self.actions.flatten(0, 1)[idx],
                   self.logprobs.flatten()[idx], self.returns.flatten()[idx], adv[idx])


class PPOTrainer:
    def __init__(self, env, policy, value_model, accelerator, args, motion_lib):
        self.env = env
        self.policy = policy
        self.value_model = value_model
        self.model = nn.ModuleDict({"policy": policy, "value": value_model})
        self.accelerator = accelerator
        self.args = args
        self.motion_lib = motion_lib
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=args.lr)
        self.storage = RolloutStorage(args.num_steps_per_env, args.num_envs, env.obs_dim, env.act_dim, accelerator.device)

    @torch.no_grad()
    def _rollout_step(self, obs):
        self.storage.clear()
        for _ in range(self.args.num_steps_per_env):
            actions, logprobs = self.policy.act(obs)
            values = self.value_model(obs)
            next_obs, rewards, dones, infos = self.env.step(actions)
            self.storage.add(obs, actions, logprobs, values, rewards, dones)
            obs = next_obs
        return obs

    def train(self):
        obs = self.env.reset()
        for iteration in range(self.args.num_iterations):
            if iteration % self.args.motion_resample_frequency == 0:
                self.motion_lib.load_motions(seed=iteration)

            obs = self._rollout_step(obs)
            self.storage.compute_returns(self.args.gamma)

            mean_policy_loss = 0.0
            mean_value_loss = 0.0
            for _ in range(self.args.num_learning_epochs):
                for (o, a, old_logp, ret, adv) in self.storage.mini_batches(self.args.num_mini_batches):
                    new_logp = self.policy.log_prob(o, a)
                    ratio = torch.exp(new_logp - old_logp)
                    surrogate = -torch.min(
                        ratio * adv, torch.clamp(ratio, 0.8, 1.2) * adv
                    ).mean()
                    value_loss = (self.value_model(o) - ret).pow(2).mean()
                    loss = surrogate + self.args.value_coef * value_loss

                    self.optimizer.zero_grad()
                    self.accelerator.backward(loss)
                    nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
                    self.optimizer.step()

                    mean_policy_loss += surrogate.item()
                    mean_value_loss += value_loss.item()

            self.log(iteration, mean_policy_loss, mean_value_loss)

            gc.collect()
            torch.cuda.empty_cache()  # expect: TML009

    def log(self, iteration, policy_loss, value_loss):
        if self.accelerator.is_main_process:
            print(f"iter {iteration}: policy {policy_loss:.4f} value {value_loss:.4f}")
