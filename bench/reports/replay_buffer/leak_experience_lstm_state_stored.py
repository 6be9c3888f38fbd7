# Source: https://github.com/Metta-AI/metta/pull/1139
# Report: computational graphs attached to the LSTM state persisted into the experience buffer because the state was not detached before storing experience.
# Shape: the policy returns (action, value, (h, c)); the rollout writes the recurrent state into preallocated experience slots every step (and carries it, undetached, to the next step).
# Expect: TML001 lines 36, 37; TML005 line 35
import torch
import torch.nn as nn


class RecurrentPolicy(nn.Module):
    def __init__(self, obs_dim, actions, hidden=128):
        super().__init__()
        self.encoder = nn.Linear(obs_dim, hidden)
        self.core = nn.LSTMCell(hidden, hidden)
        self.actor = nn.Linear(hidden, actions)
        self.critic = nn.Linear(hidden, 1)

    def forward(self, obs, state):
        h, c = self.core(torch.relu(self.encoder(obs)), state)
        action = torch.distributions.Categorical(logits=self.actor(h)).sample()
        return action, self.critic(h).squeeze(-1), (h, c)


class Experience:
    def __init__(self, steps, envs, hidden):
        self.h = [None] * steps
        self.c = [None] * steps
        self.values = torch.zeros(steps, envs)
        self.actions = torch.zeros(steps, envs, dtype=torch.long)


def rollout(policy, envs, experience, steps, hidden=128):
    obs = envs.reset()
    state = (torch.zeros(envs.num, hidden), torch.zeros(envs.num, hidden))
    for t in range(steps):
        action, value, state = policy(obs, state)  # expect: TML005
        experience.h[t] = state[0]  # expect: TML001
        experience.c[t] = state[1]  # expect: TML001
        experience.values[t] = value.detach()
        experience.actions[t] = action
        obs = envs.step(action)
