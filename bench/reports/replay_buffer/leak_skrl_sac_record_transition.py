# Source: https://github.com/Toni-SM/skrl/blob/a2d0d8cb1395c455b3bb205c7f0b0cb39a1888b1/agents/sac/sac.py
# Report: early skrl SAC agent whose act() only enters torch.no_grad() when inference=True; here the trainer loop calls act() without the flag (one-edit mistake), and record_transition() hands the actions to Memory.add_samples
# Shape: act() takes the grad-enabled branch, so the rsample()d actions are graph-attached to the policy forward; add_samples copy_()s them into the preallocated _tensor_actions storage of the persistent Memory, which becomes a CopySlices node chaining every step's policy graph
# Expect: TML001 line 75
import torch
import torch.nn as nn
from torch.distributions import MultivariateNormal


class Memory:
    def __init__(self, memory_size, num_envs, device="cuda:0"):
        self.memory_size = memory_size
        self.num_envs = num_envs
        self.device = device
        self.memory_index = 0
        self.filled = False

    def create_tensor(self, name, size, dtype=None):
        setattr(self, "_tensor_{}".format(name),
                torch.zeros((self.memory_size, self.num_envs, size), device=self.device, dtype=dtype))

    def add_samples(self, **tensors):
        for name, tensor in tensors.items():
            name = "_tensor_{}".format(name)
            if hasattr(self, name):
                getattr(self, name)[self.memory_index].copy_(tensor if tensor.dim() == 2 else tensor.view(-1, 1))
        self.memory_index += 1
        if self.memory_index >= self.memory_size:
            self.memory_index = 0
            self.filled = True


class GaussianPolicy(nn.Module):
    def __init__(self, num_obs, num_actions):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(num_obs, 256), nn.ReLU(), nn.Linear(256, num_actions))
        self.log_std = nn.Parameter(torch.zeros(num_actions))

    def act(self, states, inference=False):
        actions_mean = self.net(states)
        log_std = torch.clamp(self.log_std, -20, 2)
        covariance = torch.diag(log_std.exp() * log_std.exp())
        distribution = MultivariateNormal(actions_mean, scale_tril=covariance)
        actions = distribution.rsample()
        log_prob = distribution.log_prob(actions).unsqueeze(-1)
        return actions, log_prob, actions_mean


class SAC:
    def __init__(self, policy, memory, random_timesteps=1000):
        self.policy = policy
        self.memory = memory
        self._random_timesteps = random_timesteps
        for name, size in (("states", 17), ("actions", 6), ("rewards", 1), ("next_states", 17), ("dones", 1)):
            self.memory.create_tensor(name, size)

    def act(self, states, inference=False, timestep=None, timesteps=None):
        if timestep < self._random_timesteps:
            return torch.rand((states.shape[0], 6), device=states.device) * 2 - 1, None, None
        if inference:
            with torch.no_grad():
                return self.policy.act(states, inference=inference)
        return self.policy.act(states, inference=inference)

    def record_transition(self, states, actions, rewards, next_states, dones):
        if self.memory is not None:
            self.memory.add_samples(states=states, actions=actions, rewards=rewards, next_states=next_states, dones=dones)


def train(env, agent, timesteps):
    states = env.reset()
    for timestep in range(timesteps):
        actions, _, _ = agent.act(states, timestep=timestep, timesteps=timesteps)
        next_states, rewards, dones, infos = env.step(actions)
        agent.record_transition(states, actions, rewards, next_states, dones)  # expect: TML001
        if dones.any():
            states = env.reset()
        else:
            states.copy_(next_states)
