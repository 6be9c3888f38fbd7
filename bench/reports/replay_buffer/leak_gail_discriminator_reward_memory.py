# Source: https://github.com/Khrylx/PyTorch-RL/blob/master/gail/gail_gym.py
# Report: GAIL variant whose surrogate-reward helper returns -torch.log(D(s, a)) as a tensor, without the no_grad/.item() of the original, and the reward is pushed with every transition
# Shape: the helper's return value is graph-attached (discriminator forward); collect_samples pushes it into the Memory list and adds it to total_c_reward, both bound before the step loop: a discriminator graph per environment step stays alive for the whole rollout
# Expect: TML001 lines 45, 48
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
    return -torch.log(discrim_net(state_action)[0])


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
            total_c_reward += reward  # expect: TML001

            mask = 0 if done else 1
            memory.push(state, action, mask, next_state, reward)  # expect: TML001
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
        rewards = torch.stack(batch.reward).detach().to("cuda")
        update_params(batch, rewards, i_iter)
        print(i_iter, log["avg_c_reward"], log["avg_reward"])
