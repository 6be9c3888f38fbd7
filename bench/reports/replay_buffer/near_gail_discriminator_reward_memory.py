# Source: https://github.com/Khrylx/PyTorch-RL/blob/master/gail/gail_gym.py
# Report: GAIL: the discriminator's surrogate reward is computed per environment step by a helper and pushed with the transition into the rollout Memory; the helper runs under no_grad and returns a Python float
# Shape: expert_reward() wraps the discriminator call in torch.no_grad() and returns math.log(...item()), so memory.push(...) and the running c-reward sum only ever see floats
# Expect: near-miss: must be silent
import math
from collections import namedtuple

import numpy as np
import torch

Transition = namedtuple("Transition", ("state", "action", "mask", "next_state", "reward"))


class Memory:
    def __init__(self):
        self.memory = []

    def push(self, *args):
        self.memory.append(Transition(*args))

    def sample(self):
        return Transition(*zip(*self.memory))


def expert_reward(discrim_net, state, action):
    state_action = torch.tensor(np.hstack([state, action]), dtype=torch.float64)
    with torch.no_grad():
        return -math.log(discrim_net(state_action)[0].item())


def collect_samples(env, policy, discrim_net, running_state, min_batch_size):
    memory = Memory()
    num_steps, num_episodes = 0, 0
    total_reward, total_c_reward = 0.0, 0.0
    while num_steps < min_batch_size:
        state = running_state(env.reset())
        for t in range(10000):
            state_var = torch.tensor(state, dtype=torch.float64).unsqueeze(0)
            with torch.no_grad():
                action = policy.select_action(state_var)[0].numpy()
            next_state, env_reward, done, _ = env.step(action)
            total_reward += env_reward
            next_state = running_state(next_state)

            reward = expert_reward(discrim_net, state, action)
            total_c_reward += reward

            mask = 0 if done else 1
            memory.push(state, action, mask, next_state, reward)
            if done:
                break
            state = next_state
        num_steps += t + 1
        num_episodes += 1
    log = {"avg_reward": total_reward / num_episodes, "avg_c_reward": total_c_reward / num_steps}
    return memory.sample(), log


def main_loop(env, policy, value_net, discrim_net, running_state, update_params, max_iter, min_batch):
    for i_iter in range(max_iter):
        discrim_net.to(torch.device("cpu"))
        batch, log = collect_samples(env, policy, discrim_net, running_state, min_batch)
        discrim_net.to(torch.device("cuda"))
        rewards = torch.as_tensor(np.stack(batch.reward), dtype=torch.float64, device="cuda")
        update_params(batch, rewards, i_iter)
        print(i_iter, log["avg_c_reward"], log["avg_reward"])
