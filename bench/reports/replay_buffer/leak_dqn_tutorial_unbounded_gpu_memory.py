# Source: https://github.com/pytorch/tutorials/blob/HEAD/intermediate_source/reinforcement_q_learning.py
# Report: variant of the DQN tutorial's ReplayMemory it avoided with deque(maxlen=capacity): a plain list that push() appends to forever, while every transition holds state, action, next_state and reward tensors created on the CUDA device, so GPU memory grows with every environment step of training
# Shape: Transition namedtuple and a ReplayMemory class with push()/sample(); select_action() under no_grad; optimize_model() samples a batch, concatenates it and does a Huber-loss step; the episode loop pushes device tensors and soft-updates the target net through state_dict()
# Expect: TML004 line 75
import math
import random
from collections import namedtuple
from itertools import count

import torch
import torch.nn as nn

Transition = namedtuple('Transition', ('state', 'action', 'next_state', 'reward'))
BATCH_SIZE, GAMMA, TAU = 128, 0.99, 0.005
EPS_START, EPS_END, EPS_DECAY = 0.9, 0.05, 1000


class ReplayMemory:
    def __init__(self, capacity):
        self.capacity = capacity
        self.memory = []

    def push(self, *args):
        self.memory.append(Transition(*args))

    def sample(self, batch_size):
        return random.sample(self.memory, batch_size)

    def __len__(self):
        return len(self.memory)


def select_action(policy_net, state, steps_done, n_actions, device):
    eps_threshold = EPS_END + (EPS_START - EPS_END) * math.exp(-1. * steps_done / EPS_DECAY)
    if random.random() > eps_threshold:
        with torch.no_grad():
            return policy_net(state).max(1).indices.view(1, 1)
    return torch.tensor([[random.randrange(n_actions)]], device=device, dtype=torch.long)


def optimize_model(policy_net, target_net, memory, optimizer, device):
    if len(memory) < BATCH_SIZE:
        return
    batch = Transition(*zip(*memory.sample(BATCH_SIZE)))
    non_final_mask = torch.tensor(tuple(s is not None for s in batch.next_state), device=device, dtype=torch.bool)
    non_final_next_states = torch.cat([s for s in batch.next_state if s is not None])
    state_batch = torch.cat(batch.state)
    action_batch = torch.cat(batch.action)
    reward_batch = torch.cat(batch.reward)
    state_action_values = policy_net(state_batch).gather(1, action_batch)
    next_state_values = torch.zeros(BATCH_SIZE, device=device)
    with torch.no_grad():
        next_state_values[non_final_mask] = target_net(non_final_next_states).max(1).values
    expected = (next_state_values * GAMMA) + reward_batch
    loss = nn.SmoothL1Loss()(state_action_values, expected.unsqueeze(1))
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_value_(policy_net.parameters(), 100)
    optimizer.step()


def train(env, policy_net, target_net, num_episodes=600, device="cuda"):
    optimizer = torch.optim.AdamW(policy_net.parameters(), lr=1e-4, amsgrad=True)
    memory = ReplayMemory(10000)
    steps_done, episode_durations = 0, []
    for i_episode in range(num_episodes):
        state, info = env.reset()
        state = torch.tensor(state, dtype=torch.float32, device=device).unsqueeze(0)
        for t in count():
            action = select_action(policy_net, state, steps_done, env.action_space.n, device)
            steps_done += 1
            observation, reward, terminated, truncated, _ = env.step(action.item())
            reward = torch.tensor([reward], device=device)
            next_state = None if terminated else torch.tensor(observation, dtype=torch.float32, device=device).unsqueeze(0)
            memory.push(state, action, next_state, reward)  # expect: TML004
            state = next_state
            optimize_model(policy_net, target_net, memory, optimizer, device)
            target_sd, policy_sd = target_net.state_dict(), policy_net.state_dict()
            for key in policy_sd:
                target_sd[key] = policy_sd[key] * TAU + target_sd[key] * (1 - TAU)
            target_net.load_state_dict(target_sd)
            if terminated or truncated:
                episode_durations.append(t + 1)
                break
    return episode_durations
