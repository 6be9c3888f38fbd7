# Source: https://github.com/ray-project/ray/issues/6962
# Report: PPO with torch used up all RAM (and leaked GPU memory); adding torch.no_grad() to the policy's value() function fixed it.
# Shape: value() is a policy method called for every step of the rollout; its graph-carrying result goes into the sample batch that lives until the update.
# Expect: TML001 line 32
import torch
import torch.nn as nn


class TorchPolicy:
    def __init__(self, model: nn.Module):
        self.model = model

    def compute_action(self, obs):
        with torch.no_grad():
            logits, _ = self.model(obs)
            return torch.distributions.Categorical(logits=logits).sample()

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
        batch["vf_preds"].append(policy.value(obs))  # expect: TML001
        obs = env.reset() if done else next_obs
    return batch
