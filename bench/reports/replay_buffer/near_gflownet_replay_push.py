# Source: https://github.com/recursionpharma/gflownet/pull/130
# Report: GPU OOM with the replay buffer enabled; the fix makes ReplayBuffer.push() detach every torch tensor in what it receives and send it to the CPU before storing it
# Shape: fixed version: same data-source loop pushing trajectory dicts and reward tensors, but push() first runs them through a recursive detach_and_cpu() helper
# Expect: near-miss: must be silent
from typing import List

import numpy as np
import torch

from gflownet.algo.graph_sampling import GraphSampler


def detach_and_cpu(obj):
    if isinstance(obj, torch.Tensor):
        return obj.detach().cpu()
    if isinstance(obj, dict):
        return {k: detach_and_cpu(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(detach_and_cpu(v) for v in obj)
    return obj


class ReplayBuffer:
    def __init__(self, capacity: int, warmup: int, rng: np.random.Generator):
        assert warmup <= capacity, "ReplayBuffer warmup must be smaller than capacity"
        self.capacity = capacity
        self.warmup = warmup
        self.buffer: List[tuple] = []
        self.position = 0
        self.rng = rng

    def push(self, *args):
        if len(self.buffer) < self.capacity:
            self.buffer.append(None)
        args = detach_and_cpu(args)
        self.buffer[self.position] = args
        self.position = (self.position + 1) % self.capacity

    def sample(self, batch_size):
        idxs = self.rng.choice(len(self.buffer), batch_size)
        out = list(zip(*[self.buffer[idx] for idx in idxs]))
        for i in range(len(out)):
            if all(isinstance(x, torch.Tensor) for x in out[i]):
                out[i] = torch.stack(out[i], dim=0)
            else:
                out[i] = list(out[i])
        return out


class DataSource:
    def __init__(self, cfg, ctx, env, task, replay_buffer: ReplayBuffer, device):
        self.cfg = cfg
        self.task = task
        self.replay_buffer = replay_buffer
        self.device = device
        self.sampler = GraphSampler(ctx, env, cfg.algo.max_len, cfg.algo.max_nodes)
        self.active = True
        self.current_iter = 0

    def compute_log_rewards(self, trajs):
        flat_rewards = torch.stack([t["flat_rewards"] for t in trajs]).to(self.device)
        cond_info = {k: torch.stack([t["cond_info"][k] for t in trajs]) for k in trajs[0]["cond_info"]}
        log_rewards = self.task.cond_info_to_logreward(cond_info, flat_rewards)
        for i, t in enumerate(trajs):
            t["log_reward"] = log_rewards[i]

    def iterate_from_model(self, model, num_from_policy, num_new_replay_samples):
        num_samples = max(num_from_policy, num_new_replay_samples)
        while self.active:
            cond_info = self.task.sample_conditional_information(num_samples, self.current_iter)
            trajs = self.sampler.sample_from_model(model, num_samples, cond_info["encoding"].to(self.device), self.device)
            for i, t in enumerate(trajs):
                t["cond_info"] = {k: v[i] for k, v in cond_info.items()}
            self.task.compute_properties(trajs)
            self.compute_log_rewards(trajs)
            for t in trajs[:num_new_replay_samples]:
                self.replay_buffer.push(t, t["log_reward"], t["flat_rewards"], t["cond_info"], t["is_valid"])
            self.current_iter += 1
            yield trajs[:num_from_policy]
