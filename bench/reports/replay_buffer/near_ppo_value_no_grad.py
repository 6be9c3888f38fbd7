# Source: https://github.com/ray-project/ray/issues/6962
# Report: the confirmed fix adds torch.no_grad() to the policy's value() function; memory then plateaus.
# Shape: same rollout collecting value estimates through a policy method, which is now decorated with @torch.no_grad().
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


class TorchPolicy:
    def __init__(self, model: nn.Module):
        self.model = model

    @torch.no_grad()
    def compute_action(self, obs):
        logits, _ = self.model(obs)
        return torch.distributions.Categorical(logits=logits).sample()

    @torch.no_grad()
    def value(self, obs):
        _, value = self.model(obs)
        return value.squeeze(-1)


def collect(policy, env, horizon):
    batch = {"obs": [], "actions": [], "rewards": [], "vf_preds": []}
    obs = env.reset()
    for t in range(horizon):
        action = policy.compute_action(obs)
        next_obs, reward, done = env.step(action)
        batch["obs"].append(obs)
        batch["actions"].append(action)
        batch["rewards"].append(reward)
        batch["vf_preds"].append(policy.value(obs))
        obs = env.reset() if done else next_obs
    return batch
