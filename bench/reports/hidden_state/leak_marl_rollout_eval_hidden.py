# Source: https://github.com/starry-sky6688/MARL-Algorithms/issues/90
# Report: running COMA, RAM grew with every generate_episode() call until it was exhausted; adding torch.no_grad() around the rollout (later @torch.no_grad() on generate_episode) stopped it
# Shape: choose_action() writes the RNN's graph-attached hidden state back into the persistent policy.eval_hidden buffer and reads it again on the next env step, chaining the graph over the whole episode
# Expect: TML005 line 47
import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Categorical


class RNNAgent(nn.Module):
    def __init__(self, input_shape, hidden_dim, n_actions):
        super().__init__()
        self.fc1 = nn.Linear(input_shape, hidden_dim)
        self.rnn = nn.GRUCell(hidden_dim, hidden_dim)
        self.fc2 = nn.Linear(hidden_dim, n_actions)

    def forward(self, obs, hidden_state):
        x = torch.relu(self.fc1(obs))
        h = self.rnn(x, hidden_state.reshape(-1, self.rnn.hidden_size))
        return self.fc2(h), h


class COMAPolicy:
    def __init__(self, args):
        self.args = args
        self.eval_rnn = RNNAgent(args.input_shape, args.rnn_hidden_dim, args.n_actions)
        self.eval_hidden = None

    def init_hidden(self, episode_num):
        self.eval_hidden = torch.zeros((episode_num, self.args.n_agents, self.args.rnn_hidden_dim))


class Agents:
    def __init__(self, args):
        self.args = args
        self.policy = COMAPolicy(args)

    def choose_action(self, obs, last_action, agent_num, avail_actions, epsilon):
        agent_id = np.zeros(self.args.n_agents)
        agent_id[agent_num] = 1.0
        inputs = np.hstack((obs, last_action, agent_id))
        hidden_state = self.policy.eval_hidden[:, agent_num, :]

        inputs = torch.tensor(inputs, dtype=torch.float32).unsqueeze(0)
        avail = torch.tensor(avail_actions, dtype=torch.float32).unsqueeze(0)
        q_value, self.policy.eval_hidden[:, agent_num, :] = self.policy.eval_rnn(inputs, hidden_state)  # expect: TML005

        prob = torch.softmax(q_value, dim=-1)
        prob = (1 - epsilon) * prob + epsilon / avail.sum()
        prob[avail == 0] = 0.0
        return Categorical(prob).sample().long()


class RolloutWorker:
    def __init__(self, env, agents, args):
        self.env, self.agents, self.args = env, agents, args

    def generate_episode(self, epsilon):
        o, u, r, terminate = [], [], [], []
        self.env.reset()
        self.agents.policy.init_hidden(1)
        last_action = np.zeros((self.args.n_agents, self.args.n_actions))
        terminated, step = False, 0
        while not terminated and step < self.args.episode_limit:
            obs = self.env.get_obs()
            actions = []
            for agent_id in range(self.args.n_agents):
                avail = self.env.get_avail_agent_actions(agent_id)
                action = self.agents.choose_action(obs[agent_id], last_action[agent_id], agent_id, avail, epsilon)
                actions.append(int(action))
                last_action[agent_id] = np.eye(self.args.n_actions)[int(action)]
            reward, terminated, _ = self.env.step(actions)
            o.append(obs)
            u.append(np.reshape(actions, [self.args.n_agents, 1]))
            r.append([reward])
            terminate.append([terminated])
            step += 1
        return dict(o=o, u=u, r=r, terminated=terminate)
