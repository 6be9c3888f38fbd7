# Source: https://github.com/jeshraghian/snntorch/issues/340
# Report: spiking PPO actor (Leaky neurons with init_hidden=True) crashed with "backward through the graph a second time" on the second minibatch: the membrane potential kept inside the neurons carried the previous minibatch's graph forward.
# Shape: each neuron module keeps its membrane on self.mem and updates it from its own previous value in forward(); nothing resets or detaches it between PPO minibatches.
# Expect: TML005 line 24
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal


class LeakyNeuron(nn.Module):
    """Leaky integrate-and-fire unit holding its own hidden state (init_hidden style)."""

    def __init__(self, beta=0.9, threshold=1.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold
        self.mem = None

    def forward(self, cur):
        if self.mem is None:
            self.mem = torch.zeros_like(cur)
        reset = (self.mem > self.threshold).float() * self.threshold
        self.mem = self.beta * self.mem + cur - reset  # expect: TML005
        return torch.sigmoid(5.0 * (self.mem - self.threshold))


class SpikingActor(nn.Module):
    def __init__(self, obs_dim, act_dim, hidden=128):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(obs_dim, hidden), LeakyNeuron())
        self.body = nn.Sequential(nn.Linear(hidden, hidden), LeakyNeuron(),
                                  nn.Linear(hidden, hidden), LeakyNeuron())
        self.mu = nn.Linear(hidden, act_dim)
        self.log_std = nn.Parameter(torch.zeros(act_dim))

    def forward(self, obs):
        spikes = self.body(self.encoder(obs))
        return Normal(self.mu(spikes), self.log_std.exp())


def ppo_update(actor, critic, optimizer, rollout, clip=0.2, epochs=4, minibatch=256):
    obs, actions, old_logp, returns, adv = rollout
    n = obs.shape[0]
    for _ in range(epochs):
        perm = torch.randperm(n, device=obs.device)
        for start in range(0, n, minibatch):
            idx = perm[start:start + minibatch]
            dist = actor(obs[idx])
            logp = dist.log_prob(actions[idx]).sum(-1)
            ratio = torch.exp(logp - old_logp[idx])
            surr = torch.min(ratio * adv[idx],
                             torch.clamp(ratio, 1 - clip, 1 + clip) * adv[idx])
            value_loss = F.mse_loss(critic(obs[idx]).squeeze(-1), returns[idx])
            loss = -surr.mean() + 0.5 * value_loss
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
