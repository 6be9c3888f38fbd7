# Source: https://github.com/alihadi2103/Rea-Maac/blob/448071456060ba8e8cda323dddad5d42d839d19a/models/model.py
# Report: audit of a multi-agent actor-critic (MAAC) trainer: train_process() steps the environment with a GRU policy and feeds the returned hidden state back as last_hid every step, without detach and outside no_grad, so each step's policy graph is chained to the previous ones until the episode ends; the transitions themselves are stored as detached numpy arrays
# Shape: Model.train_process() method unpacks (means, log_stds, hidden) from self.policy_net(obs, last_hid) and rebinds last_hid from that call; Transition namedtuple and a replay buffer of numpy arrays, trainer-driven updates
# Expect: TML005 line 59
from collections import namedtuple

import numpy as np
import torch
import torch.nn as nn

Transition = namedtuple("Transition", ("state", "action", "log_prob_a", "value", "reward", "next_state", "done", "last_hid", "hid"))


class GRUPolicy(nn.Module):
    def __init__(self, obs_dim, hid_size, act_dim, n_agents):
        super().__init__()
        self.n_agents, self.hid_size = n_agents, hid_size
        self.fc1 = nn.Linear(obs_dim, hid_size)
        self.rnn = nn.GRUCell(hid_size, hid_size)
        self.mean = nn.Linear(hid_size, act_dim)
        self.log_std = nn.Parameter(torch.zeros(act_dim))

    def init_hidden(self):
        return self.fc1.weight.new_zeros(1, self.n_agents, self.hid_size)

    def forward(self, obs, last_hid):
        x = torch.relu(self.fc1(obs.reshape(-1, obs.size(-1))))
        h = self.rnn(x, last_hid.reshape(-1, self.hid_size))
        mu = self.mean(h)
        return mu, self.log_std.expand_as(mu), h.view(1, self.n_agents, -1)


class MAACModel(nn.Module):
    def __init__(self, policy_net, value_net, args, device="cuda"):
        super().__init__()
        self.policy_net = policy_net
        self.value_net = value_net
        self.args = args
        self.device = device

    def prep_obs(self, state):
        return torch.as_tensor(np.asarray(state), dtype=torch.float32, device=self.device).view(1, self.args.agent_num, -1)

    def transition_update(self, trainer, trans, stat):
        trainer.replay_buffer.add_experience(trans)
        if trainer.steps > self.args.replay_warmup and trainer.steps % self.args.behaviour_update_freq == 0:
            for _ in range(self.args.value_update_epochs):
                trainer.value_replay_process(stat)
            for _ in range(self.args.policy_update_epochs):
                trainer.policy_replay_process(stat)

    def train_process(self, stat, trainer):
        stat_train = {"mean_train_reward": 0.0}
        state = trainer.env.reset()
        last_hid = self.policy_net.init_hidden()
        for t in range(self.args.max_steps):
            obs = self.prep_obs(state)
            prev_hid = last_hid
            means, log_stds, last_hid = self.policy_net(obs, last_hid)  # expect: TML005
            dist = torch.distributions.Normal(means, log_stds.exp())
            action = dist.sample()
            log_prob_a = dist.log_prob(action).sum(-1)
            value = self.value_net(obs, action.view(1, self.args.agent_num, -1))
            next_state, reward, done, info = trainer.env.step(action.cpu().numpy())
            done_ = bool(done) or t == self.args.max_steps - 1
            trans = Transition(state, action.cpu().numpy(), log_prob_a.detach().cpu().numpy(),
                               value.detach().cpu().numpy(), np.array([reward] * self.args.agent_num),
                               next_state, done, prev_hid.detach().cpu().numpy(), last_hid.detach().cpu().numpy())
            self.transition_update(trainer, trans, stat)
            stat_train["mean_train_reward"] += reward
            trainer.steps += 1
            if done_:
                break
            state = next_state
        trainer.episodes += 1
        stat_train["mean_train_reward"] /= float(t + 1)
        stat.update(stat_train)
