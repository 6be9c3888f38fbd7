# Source: https://github.com/chanb/metalearning_RL/blob/master/helper/sampler.py
# Report: RL^2 PPO sampler with the rollout forward taken out of torch.no_grad(): log-probs, values and GRU hidden states are stored in the sampler lists with their graphs
# Shape: insert_storage() appends each step's graph-attached log_prob/value/hidden_state to self.* lists that outlive the loop, and hidden_state = next_hidden_state chains every step's GRU graph to the previous one
# Expect: TML001 line 70; TML005 line 74
import torch
import torch.nn as nn
from torch.distributions import Categorical


class GRUActorCritic(nn.Module):
    def __init__(self, in_dim, n_actions, hidden=256):
        super().__init__()
        self.hidden = hidden
        self.gru = nn.GRU(in_dim, hidden, batch_first=True)
        self.pi = nn.Linear(hidden, n_actions)
        self.v = nn.Linear(hidden, 1)
        self.is_recurrent = True

    def init_hidden_state(self):
        return torch.zeros(1, 1, self.hidden)

    def forward(self, x, h):
        out, h = self.gru(x, h)
        out = out[:, -1]
        return Categorical(logits=self.pi(out)), self.v(out), h


class RolloutSampler:
    def __init__(self, model, env, num_actions, gamma=0.99):
        self.model = model
        self.env = env
        self.num_actions = num_actions
        self.gamma = gamma
        self.last_hidden_state = None
        self.reset_storage()

    def reset_storage(self):
        self.log_probs, self.values, self.states = [], [], []
        self.actions, self.rewards, self.masks, self.hidden_states = [], [], [], []

    def insert_storage(self, log_prob, state, action, reward, done, value, hidden_state):
        self.log_probs.append(log_prob)
        self.states.append(state)
        self.actions.append(action)
        self.rewards.append(reward)
        self.masks.append(1 - done)
        self.values.append(value)
        self.hidden_states.append(hidden_state)

    def state_vector(self, done, reward, action, obs):
        one_hot = torch.zeros(1, self.num_actions)
        if action > -1:
            one_hot[0, action] = 1
        extra = torch.tensor([[reward, done]], dtype=torch.float32)
        return torch.cat((obs, one_hot, extra), 1).unsqueeze(0)

    def sample(self, batchsize, last_hidden_state=None):
        obs = torch.from_numpy(self.env.reset()).float().unsqueeze(0)
        reward, action, done = 0.0, -1, 0
        hidden_state = last_hidden_state
        if hidden_state is None:
            hidden_state = self.model.init_hidden_state()

        for _ in range(batchsize):
            state = self.state_vector(done, reward, action, obs)
            dist, value, next_hidden_state = self.model(state, hidden_state)
            action_t = dist.sample()
            log_prob = dist.log_prob(action_t)
            next_obs, reward, done, _ = self.env.step(action_t.item())
            self.insert_storage(log_prob.view(1, 1), state, action_t.view(1, 1), reward, done, value, hidden_state)  # expect: TML001

            obs = torch.from_numpy(next_obs).float().unsqueeze(0)
            action = action_t.item()
            hidden_state = next_hidden_state  # expect: TML005
            if done:
                with torch.no_grad():
                    _, _, hidden_state = self.model(self.state_vector(done, reward, action, obs), hidden_state)
                obs = torch.from_numpy(self.env.reset()).float().unsqueeze(0)
                reward, action, done = 0.0, -1, 0

        self.last_hidden_state = hidden_state
        with torch.no_grad():
            _, next_val, _ = self.model(self.state_vector(done, reward, action, obs), hidden_state)
        return next_val
