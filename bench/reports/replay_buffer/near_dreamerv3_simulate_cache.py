# Source: https://github.com/NM512/dreamerv3-torch/blob/02c3d45fcfc488151dd6ac7e3e905b55031c8d8f/tools.py
# Report: tools.simulate steps the envs with the agent's policy output and stores every transition (obs + action + logprob) in the episode cache that the replay dataset samples from; the repository converts each policy tensor with np.array(action[k][i].detach().cpu()) before it goes into the cache
# Shape: the repository idiom: each policy tensor is converted with np.array(action[k][i].detach().cpu()) before env.step and before transition.update(a) stores it in the replay cache (the logprob stays attached inside Dreamer.__call__, exactly as in the repository)
# Expect: near-miss: must be silent
import collections
import uuid

import numpy as np
import torch


def convert(value, precision=32):
    value = np.array(value)
    if np.issubdtype(value.dtype, np.floating):
        dtype = {16: np.float16, 32: np.float32, 64: np.float64}[precision]
    elif np.issubdtype(value.dtype, np.signedinteger):
        dtype = {16: np.int16, 32: np.int32, 64: np.int64}[precision]
    else:
        dtype = value.dtype
    return value.astype(dtype)


def add_to_cache(cache, id, transition):
    if id not in cache:
        cache[id] = dict()
        for key, val in transition.items():
            cache[id][key] = [val]
    else:
        for key, val in transition.items():
            if key not in cache[id]:
                cache[id][key] = [convert(0 * val)]
            cache[id][key].append(val)


def simulate(agent, envs, cache, steps=0, episodes=0, state=None):
    if state is None:
        step, episode = 0, 0
        done = np.ones(len(envs), bool)
        obs = [None] * len(envs)
        agent_state = None
    else:
        step, episode, done, obs, agent_state = state
    while (steps and step < steps) or (episodes and episode < episodes):
        if done.any():
            indices = [index for index, d in enumerate(done) if d]
            results = [envs[i].reset() for i in indices]
            for index, result in zip(indices, results):
                t = {k: convert(v) for k, v in result.copy().items()}
                t["reward"] = 0.0
                t["discount"] = 1.0
                add_to_cache(cache, envs[index].id, t)
                obs[index] = result
        obs = {k: np.stack([o[k] for o in obs]) for k in obs[0] if "log_" not in k}
        action, agent_state = agent(obs, done, agent_state)
        action = [
            {k: np.array(action[k][i].detach().cpu()) for k in action}
            for i in range(len(envs))
        ]
        results = [e.step(a) for e, a in zip(envs, action)]
        obs, reward, done = zip(*[p[:3] for p in results])
        obs = list(obs)
        done = np.stack(done)
        episode += int(done.sum())
        step += len(envs)
        for a, result, env in zip(action, results, envs):
            o, r, d, info = result
            transition = {k: convert(v) for k, v in o.items()}
            transition.update(a)
            transition["reward"] = r
            transition["discount"] = info.get("discount", np.array(1 - float(d)))
            add_to_cache(cache, env.id, transition)
    return (step - steps, episode - episodes, done, obs, agent_state)


class Dreamer(torch.nn.Module):
    def __init__(self, wm, behavior):
        super().__init__()
        self._wm = wm
        self._task_behavior = behavior

    def __call__(self, obs, reset, state=None):
        latent, action = state if state is not None else (None, None)
        obs = self._wm.preprocess(obs)
        embed = self._wm.encoder(obs)
        latent, _ = self._wm.dynamics.obs_step(latent, action, embed, obs["is_first"])
        feat = self._wm.dynamics.get_feat(latent)
        actor = self._task_behavior.actor(feat)
        action = actor.sample()
        logprob = actor.log_prob(action)
        latent = {k: v.detach() for k, v in latent.items()}
        action = action.detach()
        return {"action": action, "logprob": logprob}, (latent, action)


def collect(agent, train_envs, directory):
    train_eps = collections.OrderedDict()
    return simulate(agent, train_envs, train_eps, steps=10000), train_eps, uuid.uuid4().hex
