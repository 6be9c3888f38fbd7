# Source: https://github.com/ray-project/ray/pull/7238
# Report: RLlib PPO torch leaked RAM/GPU memory because the bootstrap value used by compute_advantages was computed without torch.no_grad(); its graph rode along in every postprocessed sample batch (fix: no_grad around the value call)
# Shape: value() closure on the policy calls the model with grad on; postprocess folds last_r into vf_preds/advantages of a dict batch that the worker pushes into a persistent sample buffer each episode
# Expect: TML001 line 69
import numpy as np
import torch


class SampleBuffer:
    def __init__(self, capacity: int = 64):
        self.capacity = capacity
        self._batches = []

    def add_batch(self, batch: dict) -> None:
        self._batches.append(batch)

    def drain(self) -> list:
        out, self._batches = self._batches, []
        return out


class ValueNetworkMixin:
    def __init__(self, config: dict):
        if config.get("use_gae", True):
            def value(ob, prev_action, prev_reward):
                obs = torch.as_tensor(np.asarray([ob]), dtype=torch.float32, device=self.device)
                self.model({"obs": obs, "prev_actions": prev_action, "prev_rewards": prev_reward})
                return self.model.value_function()[0]
        else:
            def value(ob, prev_action, prev_reward):
                return 0.0
        self._value = value


def discount_cumsum(x: torch.Tensor, gamma: float) -> torch.Tensor:
    idx = torch.arange(x.shape[0], device=x.device)
    exps = (idx[None, :] - idx[:, None]).clamp(min=0).to(x.dtype)
    return torch.triu(gamma ** exps) @ x


def compute_advantages(rollout: dict, last_r, gamma: float = 0.99, lambda_: float = 0.95) -> dict:
    vpred_t = torch.cat([rollout["vf_preds"], torch.as_tensor(last_r, device=rollout["vf_preds"].device).view(1)])
    delta_t = rollout["rewards"] + gamma * vpred_t[1:] - vpred_t[:-1]
    advantages = discount_cumsum(delta_t, gamma * lambda_)
    rollout["advantages"] = advantages
    rollout["value_targets"] = advantages + rollout["vf_preds"]
    return rollout


def postprocess_ppo_gae(policy, sample_batch: dict, gamma: float = 0.99, lambda_: float = 0.95) -> dict:
    if sample_batch["dones"][-1]:
        last_r = 0.0
    else:
        last_r = policy._value(sample_batch["new_obs"][-1], sample_batch["actions"][-1], sample_batch["rewards"][-1])
    return compute_advantages(sample_batch, last_r, gamma, lambda_)


class RolloutWorker:
    def __init__(self, env, policy, rollout_len: int = 200):
        self.env = env
        self.policy = policy
        self.rollout_len = rollout_len
        self.sample_buffer = SampleBuffer()

    def sample(self, num_episodes: int) -> list:
        for _ in range(num_episodes):
            raw = self.policy.collect_episode(self.env, self.rollout_len)
            batch = postprocess_ppo_gae(self.policy, raw)
            self.sample_buffer.add_batch(batch)  # expect: TML001
        return self.sample_buffer.drain()
