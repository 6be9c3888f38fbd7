# Source: https://github.com/ikostrikov/pytorch-ddpg-naf/blob/ec5a46927faf9a1f85d895416ad1d7e02ac0df04/ddpg.py
# Report: DDPG loop whose memory "keeps increasing" until out of memory on CPU and GPU; the repository's select_action guards the pushed action with mu = mu.data (select_action; loop in main.py, ReplayMemory in replay_memory.py; OOM report on a GPU port: https://github.com/ikostrikov/pytorch-ddpg-naf/issues/14)
# Shape: DDPG.select_action (actor on CUDA, transitions on CPU) + ReplayMemory + main loop; the leak is the original with its mu = mu.data safeguard removed (only .cpu(), and a detach for env.step), so every pushed CPU action still pins the actor's GPU graph
# Expect: TML001 line 90
import random
from collections import namedtuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim import Adam

device = torch.device("cuda")
Transition = namedtuple("Transition", ("state", "action", "mask", "next_state", "reward"))


class ReplayMemory(object):
    def __init__(self, capacity):
        self.capacity = capacity
        self.memory = []
        self.position = 0

    def push(self, *args):
        """Saves a transition."""
        if len(self.memory) < self.capacity:
            self.memory.append(None)
        self.memory[self.position] = Transition(*args)
        self.position = (self.position + 1) % self.capacity

    def sample(self, batch_size):
        return random.sample(self.memory, batch_size)

    def __len__(self):
        return len(self.memory)


class Actor(nn.Module):
    def __init__(self, hidden_size, num_inputs, num_outputs):
        super(Actor, self).__init__()
        self.linear1 = nn.Linear(num_inputs, hidden_size)
        self.ln1 = nn.LayerNorm(hidden_size)
        self.linear2 = nn.Linear(hidden_size, hidden_size)
        self.ln2 = nn.LayerNorm(hidden_size)
        self.mu = nn.Linear(hidden_size, num_outputs)

    def forward(self, inputs):
        x = F.relu(self.ln1(self.linear1(inputs)))
        x = F.relu(self.ln2(self.linear2(x)))
        return torch.tanh(self.mu(x))


class DDPG(object):
    def __init__(self, gamma, tau, hidden_size, num_inputs, num_outputs):
        self.actor = Actor(hidden_size, num_inputs, num_outputs).to(device)
        self.actor_optim = Adam(self.actor.parameters(), lr=1e-4)
        self.gamma = gamma
        self.tau = tau

    def select_action(self, state, action_noise=None):
        self.actor.eval()
        mu = self.actor(state.to(device))
        self.actor.train()
        mu = mu.cpu()
        if action_noise is not None:
            mu = mu + torch.tensor(action_noise.noise(), dtype=mu.dtype)
        return mu.clamp(-1, 1)

    def update_parameters(self, batch):
        raise NotImplementedError


def run(env, agent, ounoise, args, writer):
    memory = ReplayMemory(args.replay_size)
    total_numsteps = 0
    updates = 0
    for i_episode in range(args.num_episodes):
        state = torch.tensor([env.reset()], dtype=torch.float32)
        ounoise.reset()
        episode_reward = 0
        while True:
            action = agent.select_action(state, ounoise)
            next_state, reward, done, _ = env.step(action.detach().numpy()[0])
            total_numsteps += 1
            episode_reward += reward

            mask = torch.tensor([not done], dtype=torch.float32)
            next_state = torch.tensor([next_state], dtype=torch.float32)
            reward = torch.tensor([reward], dtype=torch.float32)

            memory.push(state, action, mask, next_state, reward)  # expect: TML001
            state = next_state

            if len(memory) > args.batch_size:
                for _ in range(args.updates_per_step):
                    batch = Transition(*zip(*memory.sample(args.batch_size)))
                    value_loss, policy_loss = agent.update_parameters(batch)
                    writer.add_scalar("loss/value", value_loss, updates)
                    writer.add_scalar("loss/policy", policy_loss, updates)
                    updates += 1
            if done:
                break
        writer.add_scalar("reward/train", episode_reward, i_episode)
